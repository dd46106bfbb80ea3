// The gRPC listener's keepalive (--grpc-keepalive-ms): the star pings each connection and drops one
// whose peer does not answer, so a connection that has gone silent does not hold its calls,
// subscriptions and socket until the star stops. Without it a grpc-go audit found connections left
// open and unread for minutes: a header block past nghttp2's limits made Node's HTTP/2 stop reading
// the socket without closing it, and a Subscribe on that connection silently stopped delivering.
//   - a peer that finished the HTTP/2 handshake and then answers nothing is dropped;
//   - a connection its client is closing gracefully is spared: its calls finish (Node does not ping
//     a closing session, and grpc-js took that for a dead peer);
//   - a live client answers the pings: its Subscribe delivers across many ping periods.
import { strict as assert } from 'node:assert';
import { connect as tcpConnect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { credentials, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import type { SubscribeResponse__Output } from '../../src/gen/svc/v1/SubscribeResponse.ts';
import { loadSvcProto } from '../../src/api/grpc/proto.ts';
import { bytes, call } from './client.ts';
import { startGrpcChild, type GrpcChild } from './child.ts';
import { bounded as boundedBy } from './raw-h2.ts';

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
const bounded = <T>(p: Promise<T>, what: string): Promise<T> => boundedBy(p, what, DROP_WAIT_MS_MAX);

/** A Subscribe's record bodies as they come, how it ended (undefined: still open), and a bounded
 *  wait for the n-th record. */
function watchBodies(sub: ClientReadableStream<SubscribeResponse__Output>): { bodies: string[]; ended(): string | undefined; seen(n: number): Promise<void> } {
  const bodies: string[] = [];
  let ended: string | undefined;
  const waiters: (() => void)[] = [];
  const wake = (): void => { for (const w of waiters.splice(0)) w(); };
  sub.on('data', (r: SubscribeResponse__Output) => {
    for (const rec of r.records) bodies.push(Buffer.from(rec.body).toString());
    wake();
  });
  sub.on('error', (e: ServiceError) => { ended = `${e.code} ${e.details}`; wake(); });
  return {
    bodies,
    ended: () => ended,
    seen: (n) => bounded(new Promise<void>((resolve) => {
      const check = (): void => { if (bodies.length >= n || ended !== undefined) resolve(); else waiters.push(check); };
      check();
    }), `record ${n} on the subscription`),
  };
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
    const socket = tcpConnect(star.grpcPort, '127.0.0.1');
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

  /** Appends a record through `client`, subscribes through it from the start, runs `meanwhile`,
   *  lets HEALTHY_SPAN_MS of pings pass, appends another (through the suite's client): the
   *  Subscribe must still be open and deliver both, in order. */
  async function deliversAcrossPings(client: GrpcChild['data'], key: string, meanwhile: () => void = () => undefined): Promise<void> {
    await call(client.Append.bind(client), { bucket: 'ka', key: bytes(key), records: [{ body: bytes('before') }] });
    const sub = client.Subscribe({ bucket: 'ka', key: bytes(key), seq_num: 0 }) as ClientReadableStream<SubscribeResponse__Output>;
    const watch = watchBodies(sub);
    await watch.seen(1);
    meanwhile();
    await new Promise((r) => setTimeout(r, HEALTHY_SPAN_MS));
    await call(star.data.Append.bind(star.data), { bucket: 'ka', key: bytes(key), records: [{ body: bytes('after') }] });
    await watch.seen(2);
    assert.equal(watch.ended(), undefined, 'the subscription ended');
    assert.deepEqual(watch.bodies, ['before', 'after']);
    sub.cancel();
  }

  it('a connection its client is closing gracefully is not dropped: a Subscribe still on it delivers across many ping periods', async () => {
    // grpc-js's channel.close() sends GOAWAY and lets its calls finish; Node will not ping a closing
    // session, and grpc-js took the failed ping for a dead peer and cut the Subscribe.
    // A channel of its own (grpc-js shares one connection between clients of the same target and
    // options: closing this one must close its connection, not leave it to the suite's client).
    const { proto } = loadSvcProto();
    const own = new proto.svc.v1.DataService(`127.0.0.1:${star.grpcPort}`, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
    await deliversAcrossPings(own, 'closing', () => own.close());
  });

  it('a client that answers the pings keeps its connection: its Subscribe delivers across many ping periods', async () => {
    await deliversAcrossPings(star.data, 'live');
  });
});
