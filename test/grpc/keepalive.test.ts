// The gRPC listener's keepalive (--grpc-keepalive-ms): the star pings each connection and drops one
// whose peer does not answer, so a connection that has gone silent does not hold its calls,
// subscriptions and socket until the star stops. Without it a grpc-go audit found connections left
// open and unread for minutes: a header block past nghttp2's limits made Node's HTTP/2 stop reading
// the socket without closing it, and a Subscribe on that connection silently stopped delivering.
//   - a peer that finished the HTTP/2 handshake and then answers nothing is dropped;
//   - the connection that an oversized header block wedged is dropped;
//   - a live client answers the pings: its Subscribe delivers across many ping periods.
import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import * as http2 from 'node:http2';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type * as grpc from '@grpc/grpc-js';
import type { SubscribeResponse__Output } from '../../src/gen/svc/v1/SubscribeResponse.ts';
import { bytes, call } from './client.ts';
import { startGrpcChild, type GrpcChild } from './child.ts';

/** The star's ping period here: short, so a silent peer is dropped within a test's wait. */
const KEEPALIVE_MS = 500;
/** How long a silent connection may stay open before the test fails (a bound, not a speed: without
 *  the keepalive such a connection is never closed). */
const DROP_WAIT_MS_MAX = 15_000;
/** How long the healthy client keeps its Subscribe open before the next append: many ping periods. */
const HEALTHY_SPAN_MS = KEEPALIVE_MS * 8;
/** HTTP/2's client connection preface, then an empty SETTINGS frame (RFC 9113 3.4). */
const PREFACE = Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), Buffer.from([0, 0, 0, 0x04, 0, 0, 0, 0, 0])]);

/** `p`, or a failure naming `what` once DROP_WAIT_MS_MAX passes. */
async function bounded<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const gaveUp = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${DROP_WAIT_MS_MAX} ms`)), DROP_WAIT_MS_MAX);
  });
  try {
    return await Promise.race([p, gaveUp]);
  } finally {
    clearTimeout(timer);
  }
}

describe(`the gRPC listener drops a connection that does not answer its pings (--grpc-keepalive-ms ${KEEPALIVE_MS})`, () => {
  let star: GrpcChild;
  const sockets: Socket[] = [];
  before(async () => {
    star = await startGrpcChild({ args: ['--grpc-keepalive-ms', String(KEEPALIVE_MS)] });
    await call(star.data.CreateBucket.bind(star.data), { bucket: 'ka', config: { create_stream_on_append: true } });
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await star?.stop();
  });

  it('a peer that completed the handshake and then answers nothing is dropped', async () => {
    const socket = connect(star.grpcPort, '127.0.0.1');
    sockets.push(socket);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
    let got = 0;
    // Read (so the star's frames are not held back by a full window) and never answer: no SETTINGS
    // ack, no PING ack, as a peer whose process hangs with the kernel still taking its bytes.
    socket.on('data', (d: Buffer) => { got += d.length; });
    socket.write(PREFACE);
    await bounded(closed, 'the star closing the silent connection');
    assert.ok(got > 0, 'the star spoke on the connection before dropping it');
  });

  it('a connection an oversized header block wedged is dropped, not left open and unread', async () => {
    const session = http2.connect(`http://127.0.0.1:${star.grpcPort}`);
    session.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => session.once('close', () => resolve()));
    // A call already open on the connection, as a Subscribe would be (alone, the refused request's
    // connection simply closes).
    const open = session.request({ ':method': 'POST', ':path': '/svc.v1.DataService/CheckTail', 'content-type': 'application/grpc', te: 'trailers' });
    open.on('error', () => undefined);
    // 80,000 random bytes in base64: past the header block nghttp2 takes, and not compressible.
    const req = session.request({
      ':method': 'POST', ':path': '/svc.v1.DataService/CheckTail', 'content-type': 'application/grpc', te: 'trailers',
      'x-oversized': randomBytes(80_000).toString('base64'),
    });
    req.on('error', () => undefined);
    req.end();
    await bounded(closed, 'the wedged connection closing');
  });

  it('a client that answers the pings keeps its connection: its Subscribe delivers across many ping periods', async () => {
    await call(star.data.Append.bind(star.data), { bucket: 'ka', key: bytes('live'), records: [{ body: bytes('before') }] });
    const sub = star.data.Subscribe({ bucket: 'ka', key: bytes('live'), seq_num: 0 }) as grpc.ClientReadableStream<SubscribeResponse__Output>;
    const bodies: string[] = [];
    let ended: string | undefined;
    const waiters: (() => void)[] = [];
    sub.on('data', (r: SubscribeResponse__Output) => {
      for (const rec of r.records) bodies.push(Buffer.from(rec.body).toString());
      for (const w of waiters.splice(0)) w();
    });
    sub.on('error', (e: grpc.ServiceError) => { ended = `${e.code} ${e.details}`; for (const w of waiters.splice(0)) w(); });
    const seen = (n: number): Promise<void> => bounded(new Promise<void>((resolve) => {
      const check = (): void => { if (bodies.length >= n || ended !== undefined) resolve(); else waiters.push(check); };
      check();
    }), `record ${n} on the subscription`);
    await seen(1);
    // Many ping periods pass with the subscription idle; then a record appended must still arrive.
    await new Promise((r) => setTimeout(r, HEALTHY_SPAN_MS));
    await call(star.data.Append.bind(star.data), { bucket: 'ka', key: bytes('live'), records: [{ body: bytes('after') }] });
    await seen(2);
    assert.equal(ended, undefined, 'the subscription ended');
    assert.deepEqual(bodies, ['before', 'after']);
    sub.cancel();
  });
});
