// Subscribe over a real grpc-js client: live ordered delivery, resume from next_seq_num, cancel and
// server shutdown release the core subscription, and core errors end the stream with their status.
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import type { SubscribeResponse__Output } from '../../src/gen/svc/v1/SubscribeResponse.ts';
import { SUBSCRIPTIONS_PER_STAR_MAX } from '../../src/config/limits.ts';
import { GRPC_SHUTDOWN_GRACE_MS } from '../../src/api/grpc/server.ts';
import { bytes, call } from './client.ts';
import { startHarness, type Harness } from './harness.ts';

const BUCKET = 'live';

function append(h: Harness, key: string, n: number, from = 0): Promise<unknown> {
  const records = Array.from({ length: n }, (_, i) => ({ body: bytes(`r${from + i}`) }));
  return call(h.data.Append.bind(h.data), { bucket: BUCKET, key: bytes(key), records });
}

/** Collects batches until `count` records have arrived. */
function collect(stream: grpc.ClientReadableStream<SubscribeResponse__Output>, count: number): Promise<SubscribeResponse__Output[]> {
  return new Promise((resolve, reject) => {
    const batches: SubscribeResponse__Output[] = [];
    let seen = 0;
    const onData = (b: SubscribeResponse__Output): void => {
      batches.push(b);
      seen += b.records.length;
      if (seen >= count) {
        stream.off('data', onData);
        resolve(batches);
      }
    };
    stream.on('data', onData);
    stream.once('error', reject);
  });
}

/** A liveness bound for waits on the server's own cleanup, not a speed target. */
const CLEANUP_WAIT_MS_MAX = 30_000;

const waitFor = async (cond: () => boolean, ms = CLEANUP_WAIT_MS_MAX): Promise<void> => {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('grpc subscribe', () => {
  let h: Harness;
  /** The core's subscriptions are all released: the star counts them against its cap (a private
   *  counter; skipped should the core stop keeping one). */
  const released = (): Promise<void> => waitFor(() => ((h.star as unknown as { subscriptions?: number }).subscriptions ?? 0) === 0);
  before(async () => {
    h = await startHarness();
    await call(h.data.CreateBucket.bind(h.data), { bucket: BUCKET, config: { create_stream_on_append: true } });
  });
  after(async () => { await h.stop(); });

  it('delivers history then live records in order, with the resume cursor', async () => {
    await append(h, 'a', 4);
    const stream = h.data.Subscribe({ bucket: BUCKET, key: bytes('a'), seq_num: 1 });
    const first = collect(stream, 3);
    const got = await first;
    const more = collect(stream, 5);
    await append(h, 'a', 5, 4);
    const later = await more;
    const all = [...got, ...later].flatMap((b) => b.records.map((r) => r.seq_num));
    assert.deepEqual(all, [1, 2, 3, 4, 5, 6, 7, 8]);
    for (const b of [...got, ...later]) {
      assert.ok(b.records.length > 0, 'batches are never empty');
      assert.equal(b.next_seq_num, b.records[b.records.length - 1].seq_num + 1);
      assert.equal(b.tail?.seq_num, b.next_seq_num);
    }
    stream.cancel();
    await released();
  });

  it('a tail_offset start reaching past a trimmed history follows from the earliest retained record (a subscribe has no clamp)', async () => {
    await append(h, 'trimmed', 5);
    await call(h.data.Trim.bind(h.data), { bucket: BUCKET, key: bytes('trimmed'), seq_num: 3 });
    const stream = h.data.Subscribe({ bucket: BUCKET, key: bytes('trimmed'), tail_offset: 10 });
    const got = collect(stream, 3);
    await append(h, 'trimmed', 1, 5);
    assert.deepEqual((await got).flatMap((b) => b.records.map((r) => r.seq_num)), [3, 4, 5]);
    stream.cancel();
    await released();
  });

  it('resumes exactly after a reconnect from next_seq_num', async () => {
    const s1 = h.data.Subscribe({ bucket: BUCKET, key: bytes('a'), seq_num: 0 });
    const batches = await collect(s1, 2);
    s1.cancel();
    const cursor = batches[batches.length - 1].next_seq_num;
    const s2 = h.data.Subscribe({ bucket: BUCKET, key: bytes('a'), seq_num: cursor });
    const rest = await collect(s2, 9 - cursor);
    const seqs = [...batches, ...rest].flatMap((b) => b.records.map((r) => r.seq_num));
    assert.deepEqual(seqs, [0, 1, 2, 3, 4, 5, 6, 7, 8]);
    s2.cancel();
    await released();
  });

  it('ends with the core error status when the stream is deleted under it', async () => {
    await append(h, 'doomed', 1);
    const stream = h.data.Subscribe({ bucket: BUCKET, key: bytes('doomed'), seq_num: 0 });
    await collect(stream, 1);
    const ended = new Promise<grpc.ServiceError>((resolve) => stream.once('error', resolve));
    await call(h.data.DeleteStream.bind(h.data), { bucket: BUCKET, key: bytes('doomed') });
    const err = await ended;
    assert.ok([grpc.status.FAILED_PRECONDITION, grpc.status.NOT_FOUND].includes(err.code), `status ${err.code}`);
    await released();
  });

  it('refuses a missing start and a missing stream', async () => {
    const noStart = h.data.Subscribe({ bucket: BUCKET, key: bytes('a') });
    const e1 = await new Promise<grpc.ServiceError>((resolve) => noStart.once('error', resolve));
    assert.equal(e1.code, grpc.status.INVALID_ARGUMENT);
    const missing = h.data.Subscribe({ bucket: BUCKET, key: bytes('nope'), seq_num: 0 });
    const e2 = await new Promise<grpc.ServiceError>((resolve) => missing.once('error', resolve));
    assert.equal(e2.code, grpc.status.NOT_FOUND);
  });

  it('ends open subscriptions with UNAVAILABLE when the server closes, so clients resume from their cursor', async () => {
    const local = await startHarness();
    await call(local.data.CreateBucket.bind(local.data), { bucket: BUCKET, config: { create_stream_on_append: true } });
    await call(local.data.Append.bind(local.data), { bucket: BUCKET, key: bytes('k'), records: [{ body: bytes('x') }] });
    const stream = local.data.Subscribe({ bucket: BUCKET, key: bytes('k'), seq_num: 0 });
    await collect(stream, 1);
    const ended = new Promise<string>((resolve) => {
      stream.once('end', () => resolve('end'));
      stream.once('error', (e: grpc.ServiceError) => resolve(`error ${e.code}`));
    });
    const started = Date.now();
    await local.server.close();
    assert.equal(await ended, `error ${grpc.status.UNAVAILABLE}`, 'an OK end would tell the client it is done');
    // Ended by the close itself: waiting out the grace period would take GRPC_SHUTDOWN_GRACE_MS.
    assert.ok(Date.now() - started < GRPC_SHUTDOWN_GRACE_MS, 'close does not wait out the grace period for subscriptions');
    await local.stop();
  });

  it(`answers RESOURCE_EXHAUSTED past ${SUBSCRIPTIONS_PER_STAR_MAX} subscriptions per star`, async () => {
    const local = await startHarness();
    await call(local.data.CreateBucket.bind(local.data), { bucket: BUCKET, config: { create_stream_on_append: true } });
    await call(local.data.Append.bind(local.data), { bucket: BUCKET, key: bytes('k'), records: [{ body: bytes('x') }] });
    const subs: grpc.ClientReadableStream<SubscribeResponse__Output>[] = [];
    let live = 0;
    const allLive = new Promise<void>((resolve) => {
      for (let i = 0; i < SUBSCRIPTIONS_PER_STAR_MAX; i++) {
        const s = local.data.Subscribe({ bucket: BUCKET, key: bytes('k'), seq_num: 0 });
        s.on('error', () => {});
        s.once('data', () => { if (++live === SUBSCRIPTIONS_PER_STAR_MAX) resolve(); });
        subs.push(s);
      }
    });
    await allLive; // every one delivered its first batch: all are open in the core
    const over = local.data.Subscribe({ bucket: BUCKET, key: bytes('k'), seq_num: 0 });
    const err = await new Promise<grpc.ServiceError>((resolve) => over.once('error', resolve));
    assert.equal(err.code, grpc.status.RESOURCE_EXHAUSTED);
    for (const s of subs) s.cancel();
    await local.stop();
  });
});
