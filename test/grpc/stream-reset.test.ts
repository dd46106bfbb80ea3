// A call the star ends with a status while its client is still sending is reset with NO_ERROR after
// the status (RFC 9113 8.1: a server that has answered in full may ask the client to stop sending),
// on a session that had acks too, where the status goes out as trailers after the response headers.
// Without the reset the stream stays open on the star until the connection closes whenever the
// client only drops its side: grpc-go (as grpcurl runs it) takes the status, sends neither END_STREAM
// nor RST_STREAM, and leaves the star holding the call, so a producer whose sessions keep ending on
// a fence or a match_seq_num miss piled up open streams on one connection.
// The client here is bare node:http2, so the test sees the frames the star sends, not what a gRPC
// library makes of them: the status in the trailers, then the stream closed by the star with code 0.
import { strict as assert } from 'node:assert';
import * as http2 from 'node:http2';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { loadSvcProto } from '../../src/api/grpc/proto.ts';
import { bytes, call } from './client.ts';
import { startGrpcChild, type GrpcChild } from './child.ts';
import { bounded as boundedBy, grpcFrame } from './raw-h2.ts';

/** How long the star has to answer or close the stream before the test gives up (a bound, not a
 *  speed: without the reset the stream is never closed, and the test must fail, not hang). */
const STREAM_WAIT_MS_MAX = 15_000;

interface SessionProbe {
  /** Each response message's bytes, in order. */
  messages: Buffer[];
  /** grpc-status from the trailers (or a trailers-only answer). */
  status: number | undefined;
  /** The stream's close, with the RST_STREAM code it carried (0: NO_ERROR); undefined: still open. */
  closed: Promise<number>;
  /** Resolves once `n` response messages arrived. */
  messagesAt(n: number): Promise<void>;
  /** Resolves once the status arrived. */
  statusIn: Promise<number>;
  req: http2.ClientHttp2Stream;
}

function openSession(session: http2.ClientHttp2Session): SessionProbe {
  const req = session.request({
    ':method': 'POST', ':path': '/svc.v1.DataService/AppendSession', 'content-type': 'application/grpc', te: 'trailers',
  });
  const messages: Buffer[] = [];
  let pending = Buffer.alloc(0);
  const waiters: { n: number; resolve: () => void }[] = [];
  let takeStatus!: (code: number) => void;
  const statusIn = new Promise<number>((resolve) => { takeStatus = resolve; });
  const probe: SessionProbe = {
    messages,
    status: undefined,
    closed: new Promise<number>((resolve) => req.once('close', () => resolve(req.rstCode ?? -1))),
    messagesAt: (n) => new Promise<void>((resolve) => {
      if (messages.length >= n) resolve();
      else waiters.push({ n, resolve });
    }),
    statusIn,
    req,
  };
  const take = (h: http2.IncomingHttpHeaders): void => {
    if (h['grpc-status'] === undefined) return;
    probe.status = Number(h['grpc-status']);
    takeStatus(probe.status);
  };
  req.on('response', take);
  req.on('trailers', take);
  req.on('error', () => undefined);
  req.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 5 && pending.length >= 5 + pending.readUInt32BE(1)) {
      const n = pending.readUInt32BE(1);
      messages.push(pending.subarray(5, 5 + n));
      pending = pending.subarray(5 + n);
    }
    for (const w of waiters.splice(0)) {
      if (messages.length >= w.n) w.resolve();
      else waiters.push(w);
    }
  });
  return probe;
}

/** `p`, or a failure naming `what` once STREAM_WAIT_MS_MAX passes. */
const bounded = <T>(p: Promise<T>, what: string): Promise<T> => boundedBy(p, what, STREAM_WAIT_MS_MAX);

describe('a call ended by the star while its client still sends is reset after its status', () => {
  let star: GrpcChild;
  let session: http2.ClientHttp2Session;
  const { proto } = loadSvcProto();
  const sessionMethod = proto.svc.v1.DataService.service.AppendSession;
  const request = (m: object): Buffer => grpcFrame(sessionMethod.requestSerialize(m));

  before(async () => {
    star = await startGrpcChild();
    await call(star.data.CreateBucket.bind(star.data), { bucket: 'rs', config: { create_stream_on_append: true } });
    session = http2.connect(`http://127.0.0.1:${star.grpcPort}`);
    // The star's close at its stop may reach the session as an error: nothing here waits on it.
    session.on('error', () => undefined);
  });
  after(async () => {
    session?.close();
    await star?.stop();
  });

  it('a session that had acks, ended by a match_seq_num miss: the status in the trailers, then RST_STREAM(NO_ERROR)', async () => {
    const s = openSession(session);
    s.req.write(request({ open: { bucket: 'rs', key: bytes('acked') } }));
    s.req.write(request({ batch: { records: [{ body: bytes('one') }] } }));
    await bounded(s.messagesAt(1), 'the first batch\'s ack');
    const ack = sessionMethod.responseDeserialize(s.messages[0]) as { end?: { seq_num: string | number } };
    assert.equal(Number(ack.end?.seq_num), 1, 'the first batch was acked at [0, 1)');
    // A miss ends the session with its status; the client keeps its side open, as a producer that
    // has more to send (or grpc-go, which never ends a stream whose status it has) would.
    s.req.write(request({ batch: { records: [{ body: bytes('two') }], match_seq_num: 7 } }));
    assert.equal(await bounded(s.statusIn, 'the session\'s status'), grpc.status.OUT_OF_RANGE);
    assert.equal(s.messages.length, 1, 'no ack for the batch that missed');
    assert.equal(await bounded(s.closed, 'the star closing the stream'), http2.constants.NGHTTP2_NO_ERROR);
    // The connection serves on: a new session on it appends.
    const next = openSession(session);
    next.req.write(request({ open: { bucket: 'rs', key: bytes('acked') } }));
    next.req.end(request({ batch: { records: [{ body: bytes('three') }] } }));
    assert.equal(await bounded(next.statusIn, 'the next session\'s status'), grpc.status.OK);
    assert.equal(Number((sessionMethod.responseDeserialize(next.messages[0]) as { end?: { seq_num: string | number } }).end?.seq_num), 2);
  });

  it('a session refused before any ack (trailers-only) is reset the same way', async () => {
    const s = openSession(session);
    // A session on a bucket that does not exist: refused before any response headers.
    s.req.write(request({ open: { bucket: 'no-such-bucket', key: bytes('k') } }));
    s.req.write(request({ batch: { records: [{ body: bytes('x') }] } }));
    assert.equal(await bounded(s.statusIn, 'the refusal'), grpc.status.NOT_FOUND);
    assert.equal(s.messages.length, 0);
    assert.equal(await bounded(s.closed, 'the star closing the stream'), http2.constants.NGHTTP2_NO_ERROR);
  });

  it('a call whose client already ended is closed as usual, not reset with an error', async () => {
    const s = openSession(session);
    s.req.write(request({ open: { bucket: 'rs', key: bytes('ended') } }));
    s.req.end(request({ batch: { records: [{ body: bytes('x') }], match_seq_num: 9 } }));
    assert.equal(await bounded(s.statusIn, 'the session\'s status'), grpc.status.OUT_OF_RANGE);
    assert.equal(await bounded(s.closed, 'the stream\'s close'), http2.constants.NGHTTP2_NO_ERROR);
  });
});
