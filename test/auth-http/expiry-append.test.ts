// A credential's exp is the request's deadline (spec, Claims). An append that cannot be sequenced
// before it is refused, 401 / UNAUTHENTICATED, and never written: before, an append waiting on a
// stream's throughput cap was answered 200 over HTTP after the token had expired, and over gRPC the
// caller was told DEADLINE_EXCEEDED ("retry") at exp while the batch committed seconds later, so a
// client doing as told wrote it twice. Against a real star under --auth jwt, HTTP and gRPC.
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import type { AppendSessionResponse__Output } from '../../src/gen/svc/v1/AppendSessionResponse.ts';
import { bearer, bytes, callMd, failureMd } from '../grpc/client.ts';
import { mint, startGrpcChild, type GrpcChild } from '../grpc/child.ts';

/** The streams' cap: one full budget's append takes a second's worth, and the next waits. */
const CAP_BPS = 1000;
/** Tokens under test live this long (3-4 s: exp is whole seconds), so one reaches the star before it
 *  expires on a loaded machine too, and still far less than the pacing wait an append below asks for. */
const SHORT_TTL_S = 4;
/** An append of this many content bytes on a stream whose budget is spent waits about 8 s (under the
 *  10 s APPEND_PACE_WAIT_MS_MAX, past which it would be 429 whatever its token). */
const PACED_BYTES = 8 * CAP_BPS;

describe('an append that cannot be sequenced before its credential expires', () => {
  let c: GrpcChild;
  let admin: string;
  const http = (path: string, init: RequestInit = {}, token = admin): Promise<Response> =>
    fetch(`${c.server.baseUrl}${path}`, { ...init, headers: { Authorization: `Bearer ${token}`, ...(init.headers ?? {}) } });
  const tail = async (key: string): Promise<number> => {
    const r = await http(`/v1/streams/b/${key}/records/tail`);
    assert.equal(r.status, 200);
    return ((await r.json()) as { seq_num: number }).seq_num;
  };
  /** A capped stream whose budget the first append has spent. */
  const pacedStream = async (key: string): Promise<void> => {
    assert.equal((await http(`/v1/streams/b/${key}`, { method: 'POST', body: JSON.stringify({ throughput_max_bytes_per_second: CAP_BPS }) })).status, 201);
    const first = await http(`/v1/streams/b/${key}/records`, { method: 'POST', body: JSON.stringify({ records: [{ body: 'x'.repeat(CAP_BPS) }] }) });
    assert.equal(first.status, 200);
  };

  before(async () => {
    c = await startGrpcChild({ jwt: true });
    admin = await mint('svc:admin', 600);
    assert.equal((await http('/v1/buckets/b', { method: 'POST', body: '{}' })).status, 201);
  });
  after(async () => { await c?.stop(); });

  it('HTTP: 401 at once, nothing written; a token that outlives the wait is paced and appended', async () => {
    await pacedStream('h');
    const short = await mint('svc:append:b:*', SHORT_TTL_S);
    const r = await http('/v1/streams/b/h/records', { method: 'POST', body: JSON.stringify({ records: [{ body: 'y'.repeat(PACED_BYTES) }] }) }, short);
    assert.equal(r.status, 401);
    assert.match(((await r.json()) as { error: string }).error, /credential expired.*nothing was written/);
    assert.equal(await tail('h'), 1, 'the refused batch took nothing');
    // The refusal took nothing from the stream's budget either: a long-lived token waits its turn.
    const long = await mint('svc:append:b:*', 600);
    const ok = await http('/v1/streams/b/h/records', { method: 'POST', body: JSON.stringify({ records: [{ body: 'z'.repeat(CAP_BPS) }] }) }, long);
    assert.equal(ok.status, 200);
    assert.equal(await tail('h'), 2);
  });

  it('gRPC Append: UNAUTHENTICATED, not DEADLINE_EXCEEDED, and nothing written', async () => {
    await pacedStream('g');
    const short = bearer(await mint('svc:append:b:*', SHORT_TTL_S));
    const err = await failureMd(c.data.Append.bind(c.data), { bucket: 'b', key: bytes('g'), records: [{ body: Buffer.alloc(PACED_BYTES, 0x79) }] }, short);
    assert.equal(err.code, grpc.status.UNAUTHENTICATED, err.details);
    assert.match(err.details, /nothing was written/);
    assert.equal(await tail('g'), 1);
    const long = bearer(await mint('svc:append:b:*', 600));
    await callMd(c.data.Append.bind(c.data), { bucket: 'b', key: bytes('g'), records: [{ body: Buffer.alloc(10, 0x7a) }] }, long);
    assert.equal(await tail('g'), 2);
  });

  it('gRPC AppendSession: a batch that would be sequenced after exp is refused and never written', async () => {
    await pacedStream('s');
    const stream = c.data.AppendSession(bearer(await mint('svc:append:b:*', SHORT_TTL_S)));
    const acks: AppendSessionResponse__Output[] = [];
    const outcome = new Promise<grpc.ServiceError | undefined>((resolve) => {
      stream.on('data', (a: AppendSessionResponse__Output) => acks.push(a));
      stream.once('error', (e: grpc.ServiceError) => resolve(e));
      stream.once('end', () => resolve(undefined));
    });
    stream.write({ open: { bucket: 'b', key: bytes('s') } });
    stream.write({ batch: { records: [{ body: Buffer.alloc(PACED_BYTES, 0x79) }] } });
    stream.end();
    const err = await outcome;
    assert.ok(err, 'the session ends with an error');
    assert.equal(err.code, grpc.status.UNAUTHENTICATED, err.details);
    assert.equal(acks.length, 0);
    assert.equal(await tail('s'), 1);
  });
});
