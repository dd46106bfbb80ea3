// The core producer session (core/producer-session.ts) over a real Star on the simulation's in-memory
// ports (test/sim/ports.ts): the virtual clock and timers decide linger and pacing, and the test
// decides when group commits and metadata writes land, so every assertion is about order and
// positions, never about how long something took.
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { APPEND_SESSION_INFLIGHT_BATCHES_MAX } from '../../src/config/limits.ts';
import { ServiceError } from '../../src/core/errors.ts';
import { ProducerSession, type ProducerSessionEnd, type ProducerSessionSink } from '../../src/core/producer-session.ts';
import type { Leadership } from '../../src/core/ports.ts';
import type { StreamCreate } from '../../src/core/service-api.ts';
import { Star } from '../../src/core/star.ts';
import type { AppendAck, RecordInput } from '../../src/core/types.ts';
import { contentBytes, frameInfo } from '../../src/storage/format/record-codec.ts';
import { rng } from '../helpers/rng.ts';
import { Incarnation, World } from '../sim/ports.ts';

const BUCKET = 'b';

interface Rig { world: World; inc: Incarnation; star: Star }

/** `leadership`: the epoch the star leads each stream at (default: a star alone, epoch 0 always). */
async function boot(leadership?: Leadership): Promise<Rig> {
  const world = new World();
  const inc = new Incarnation(world, rng(7), 1);
  const star = new Star({
    clock: inc.clock, timers: inc.timerPort, ids: inc.ids, log: inc.log, metadata: inc.metadata, objects: inc.objects,
    settler: inc.settler, wal: inc.wal, walFileNo: 1, leadership,
  });
  star.open(await inc.metadata.load(), [], []);
  const made = star.createBucket(BUCKET, { create_stream_on_append: true });
  await land(rig0(world, inc, star));
  await made;
  return { world, inc, star };
}
const rig0 = (world: World, inc: Incarnation, star: Star): Rig => ({ world, inc, star });

/** One turn of the I/O loop: promise continuations the last step resolved run. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Lets everything queued land (group commits, metadata writes, deferred work), without moving the
 *  virtual clock. */
async function land(r: Rig, rounds = 8): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    r.inc.landQueued();
    await turn();
  }
}

/** Lets things land until `done` holds; fails after a bounded number of rounds (not a time). */
async function landUntil(r: Rig, done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await land(r, 1);
  assert.ok(done(), `never happened: ${what}`);
}

/** Runs microtasks and one I/O turn without landing anything. */
async function settle(): Promise<void> {
  for (let i = 0; i < 4; i++) await turn();
}

async function stream(r: Rig, key: string, config: StreamCreate = {}): Promise<void> {
  const p = r.star.createStream(BUCKET, key, config);
  await land(r);
  await p;
}

/** What the transport would see. */
class Transport implements ProducerSessionSink {
  readonly acks: AppendAck[] = [];
  /** pause / resume / ack / end, in the order the session called them. */
  readonly log: string[] = [];
  paused = false;
  end: ProducerSessionEnd | undefined;
  /** While set, acks are taken (the sink's promise resolves) only when released. */
  holdAcks = false;
  private readonly held: (() => void)[] = [];

  ack(a: AppendAck): Promise<void> {
    this.acks.push(a);
    this.log.push('ack');
    if (!this.holdAcks) return Promise.resolve();
    return new Promise((resolve) => { this.held.push(resolve); });
  }
  pause(): void { this.paused = true; this.log.push('pause'); }
  resume(): void { this.paused = false; this.log.push('resume'); }
  ended(end: ProducerSessionEnd): void {
    assert.equal(this.end, undefined, 'ended once');
    this.end = end;
    this.log.push('end');
  }
  /** Takes the oldest held ack. */
  release(): void { this.held.shift()?.(); }
  spans(): [number, number][] { return this.acks.map((a) => [a.start.seq_num, a.end.seq_num]); }
  failure(): ServiceError {
    assert.equal(this.end?.kind, 'failed', `the session failed (${JSON.stringify(this.end)})`);
    const reason = (this.end as { reason: unknown }).reason;
    assert.ok(reason instanceof ServiceError, `a ServiceError: ${String(reason)}`);
    return reason;
  }
}

const recs = (n: number, size = 2): RecordInput[] => Array.from({ length: n }, (_, i) => ({ headers: [], body: Buffer.alloc(size, 97 + (i % 26)) }));
const bytesOf = (rs: RecordInput[]): number => rs.reduce((n, r) => n + contentBytes(r), 0);

/** Opens a session and waits (in landing rounds) until it reads. */
async function openSession(r: Rig, key: string, token?: string, bucket = BUCKET): Promise<{ s: ProducerSession; t: Transport }> {
  const t = new Transport();
  const s = new ProducerSession({ service: r.star, clock: r.inc.clock, timers: r.inc.timerPort }, t);
  s.start(bucket, key, token, async () => undefined);
  assert.equal(t.paused, true, 'nothing is read while the session opens');
  await landUntil(r, () => !t.paused || t.end !== undefined, 'the session opened');
  return { s, t };
}

function offer(s: ProducerSession, n: number, opts: { size?: number; match?: number } = {}): void {
  const rs = recs(n, opts.size);
  s.offer(rs, bytesOf(rs), opts.match);
}

/** Durable batches the WAL holds, as their record counts, in order. */
function frames(r: Rig): number[] {
  return [...r.world.walFiles.values()].flat().map((f) => frameInfo(f).recordCount);
}

describe('core producer session', () => {
  it('acks pipelined batches in order with exact positions, the first creating the stream', async () => {
    const r = await boot();
    const { s, t } = await openSession(r, 'auto');
    const sizes = Array.from({ length: 60 }, (_, i) => (i % 3) + 1);
    for (const n of sizes) offer(s, n);
    s.finish();
    await landUntil(r, () => t.end !== undefined, 'the session ended');
    assert.deepEqual(t.end, { kind: 'finished' });
    let at = 0;
    assert.deepEqual(t.spans(), sizes.map((n) => { const span: [number, number] = [at, at + n]; at += n; return span; }));
    assert.equal(r.star.checkTail(BUCKET, 'auto').seq_num, at);
    assert.deepEqual(frames(r), sizes, 'without a linger, each client batch is one durable batch');
    assert.ok(t.log.indexOf('end') === t.log.length - 1, 'the end comes after every ack');
  });

  it('coalesces batches within batch_max_delay_ms into one durable batch, flushed by the delay or a full cap', async () => {
    const r = await boot();
    await stream(r, 'linger', { batch_max_delay_ms: 100, batch_max_records: 10, timestamping_mode: 'arrival' });
    const { s, t } = await openSession(r, 'linger');
    offer(s, 2);
    r.inc.advance(40);
    await land(r);
    offer(s, 3);
    r.inc.advance(59);
    await land(r);
    assert.deepEqual(frames(r), [], 'nothing is appended before the delay since the first batch runs out');
    assert.equal(t.acks.length, 0);
    r.inc.advance(1);
    await land(r);
    assert.deepEqual(frames(r), [5], 'the two batches went as one durable batch at the delay');
    assert.deepEqual(t.spans(), [[0, 2], [2, 5]], 'acked one by one, with exact positions');
    // A group that reaches batch_max_records goes at once, without the delay.
    r.inc.advance(5);
    offer(s, 4);
    offer(s, 6);
    await land(r);
    assert.deepEqual(frames(r), [5, 10]);
    // One that would pass it closes the group before it: 7 waits, 4 starts a new group.
    offer(s, 7);
    offer(s, 4);
    await land(r);
    assert.deepEqual(frames(r), [5, 10, 7]);
    // A batch with match_seq_num starts a group of its own; finishing flushes what lingers.
    offer(s, 1, { match: 26 });
    s.finish();
    await landUntil(r, () => t.end !== undefined, 'the session ended');
    assert.deepEqual(t.end, { kind: 'finished' });
    assert.deepEqual(frames(r), [5, 10, 7, 4, 1]);
    assert.deepEqual(t.spans(), [[0, 2], [2, 5], [5, 9], [9, 15], [15, 22], [22, 26], [26, 27]]);
    // Arrival stamps: coalesced batches share their durable batch's time, and their acks carry it.
    const page = await r.star.read(BUCKET, 'linger', { start: { kind: 'seq_num', value: 0 }, limit: 100, maxBytes: 1 << 20, clamp: false });
    const ts = page.records.map((x) => x.timestamp_ms);
    assert.equal(new Set(ts.slice(0, 5)).size, 1);
    assert.notEqual(ts[0], ts[5], 'the second durable batch was stamped later (the clock moved)');
    for (const a of t.acks) {
      assert.equal(a.start.timestamp_ms, ts[a.start.seq_num]);
      assert.equal(a.end.timestamp_ms, ts[a.end.seq_num - 1]);
    }
  });

  it('refuses a batch over the stream caps after acking the batches before it, which are appended', async () => {
    const r = await boot();
    await stream(r, 'caps', { batch_max_records: 4, batch_max_bytes: 64 });
    const a = await openSession(r, 'caps');
    offer(a.s, 4);
    offer(a.s, 5);
    offer(a.s, 1); // after the refusal: dropped
    await landUntil(r, () => a.t.end !== undefined, 'the session ended');
    assert.deepEqual(a.t.spans(), [[0, 4]]);
    assert.equal(a.t.failure().code, 'invalid_argument');
    assert.match(a.t.failure().message, /batch_max_records is 4/);
    assert.equal(r.star.checkTail(BUCKET, 'caps').seq_num, 4, 'the refused batch and those after it were not appended');

    const b = await openSession(r, 'caps');
    offer(b.s, 1, { size: 65 });
    await landUntil(r, () => b.t.end !== undefined, 'the session ended');
    assert.equal(b.t.acks.length, 0);
    assert.match(b.t.failure().message, /batch_max_bytes is 64/);

    // While lingering: the batches coalescing before the refused one were valid, and go.
    await stream(r, 'caps-linger', { batch_max_records: 4, batch_max_delay_ms: 1000 });
    const c = await openSession(r, 'caps-linger');
    offer(c.s, 1);
    offer(c.s, 2);
    offer(c.s, 5);
    await landUntil(r, () => c.t.end !== undefined, 'the session ended');
    assert.deepEqual(c.t.spans(), [[0, 1], [1, 3]]);
    assert.equal(c.t.failure().code, 'invalid_argument');
    assert.deepEqual(frames(r).slice(-1), [3]);
  });

  it('a refused batch on a stream the session creates: the batches before it, waiting for the creation, are appended and acked first', async () => {
    const r = await boot();
    const { s, t } = await openSession(r, 'auto-refused');
    for (let i = 0; i < 5; i++) offer(s, 1);
    s.refuse(new ServiceError('invalid_argument', 'a bad message'));
    await landUntil(r, () => t.end !== undefined, 'the session ended');
    assert.deepEqual(t.spans(), [[0, 1], [1, 2], [2, 3], [3, 4], [4, 5]], 'every batch before the refused one is acked');
    assert.equal(t.failure().code, 'invalid_argument');
    assert.equal(r.star.checkTail(BUCKET, 'auto-refused').seq_num, 5, 'and appended');
    assert.ok(t.log.indexOf('end') === t.log.length - 1, 'the end comes after every ack');
  });

  it('paces reading to throughput_max_bytes_per_second on the virtual clock', async () => {
    const r = await boot();
    await stream(r, 'slow', { throughput_max_bytes_per_second: 1000 });
    const { s, t } = await openSession(r, 'slow');
    // One second of burst (1000 bytes): two 400-byte batches pass, the third leaves the bucket 200
    // bytes short, 200 ms at 1000 bytes/s.
    offer(s, 1, { size: 400 });
    offer(s, 1, { size: 400 });
    assert.equal(t.paused, false, 'within the burst the session keeps reading');
    offer(s, 1, { size: 400 });
    assert.equal(t.paused, true, 'in deficit, the session stops reading');
    await land(r);
    assert.equal(t.acks.length, 2, 'the core holds the third append back under the same cap');
    r.inc.advance(199);
    await land(r);
    assert.equal(t.paused, true, 'still in deficit');
    assert.equal(t.acks.length, 2);
    r.inc.advance(1);
    await land(r);
    assert.equal(t.paused, false, 'reading resumes once the bucket is even');
    assert.equal(t.acks.length, 3);
    s.finish();
    await landUntil(r, () => t.end !== undefined, 'the session ended');
    assert.deepEqual(t.end, { kind: 'finished' });
    assert.deepEqual(t.spans(), [[0, 1], [1, 2], [2, 3]]);
  });

  it('a batch refused after it was sequenced (its leadership moved) lets no later batch of the session be appended, not even one still waiting its turn', async () => {
    // Audit 41, M4: a cluster star refused a session's batch for a lease move, then appended the
    // batches after it (which had been waiting for the lease) once the stream was reloaded: a hole in
    // the producer's order. Here the later batch waits under the stream's throughput cap instead.
    let epoch = 0;
    const r = await boot({ epochOf: () => epoch });
    await stream(r, 'moved', { throughput_max_bytes_per_second: 1000 });
    const { s, t } = await openSession(r, 'moved');
    offer(s, 1, { size: 800 }); // within the burst: sequenced at once
    offer(s, 1, { size: 800 }); // waits its turn under the cap
    await settle();
    const before = frames(r).length;
    epoch = 1; // the lease moved before the first batch's group commit landed
    await land(r);
    r.inc.advance(2000); // the second batch's wait runs out
    await landUntil(r, () => t.end !== undefined, 'the session ended');
    assert.equal(t.acks.length, 0);
    assert.equal(t.failure().code, 'unavailable');
    assert.match(t.failure().message, /leadership moved past epoch 0/, 'the session ends with the first refused batch\'s error');
    await land(r);
    assert.deepEqual(frames(r).slice(before), [1], 'only the refused batch was ever sequenced: the one after it never was');
  });

  it('stops reading at APPEND_SESSION_INFLIGHT_BATCHES_MAX unacknowledged batches, and resumes as acks are taken', async () => {
    const r = await boot();
    await stream(r, 'bound');
    const { s, t } = await openSession(r, 'bound');
    t.holdAcks = true; // a producer that reads no acks
    for (let i = 0; i < APPEND_SESSION_INFLIGHT_BATCHES_MAX - 1; i++) offer(s, 1);
    await land(r);
    assert.equal(t.paused, false);
    assert.equal(t.acks.length, 1, 'one ack at a time: the next waits until the transport took it');
    offer(s, 1);
    assert.equal(t.paused, true, 'at the bound the session stops reading');
    t.release();
    await settle();
    assert.equal(t.paused, false, 'one ack taken: back under the bound');
    assert.equal(t.acks.length, 2);
    t.holdAcks = false;
    t.release();
    s.finish();
    await landUntil(r, () => t.end !== undefined, 'the session ended');
    assert.equal(t.acks.length, APPEND_SESSION_INFLIGHT_BATCHES_MAX);
    t.acks.forEach((a, i) => assert.equal(a.start.seq_num, i));
  });

  it('a Fence it does not admit ends the session after the acks of what the core already took', async () => {
    const r = await boot();
    await stream(r, 'fx');
    const fenced = r.star.fence(BUCKET, 'fx', 't1');
    await land(r);
    await fenced;
    const { s, t } = await openSession(r, 'fx', 't1');
    // A fence with the same token admits the session: it goes on.
    const same = r.star.fence(BUCKET, 'fx', 't1');
    await land(r);
    await same;
    offer(s, 1);
    offer(s, 2);
    offer(s, 3);
    // The new token's row lands and the fence is announced before the three batches are durable.
    const next = r.star.fence(BUCKET, 'fx', 't2');
    for (let i = 0; i < 50 && !t.paused; i++) {
      r.inc.commitMeta();
      await turn();
    }
    assert.equal(t.paused, true, 'the fence ended reading');
    assert.equal(t.end, undefined, 'the session waits for the acks it owes');
    assert.equal(t.acks.length, 0);
    offer(s, 1); // read before the pause took: dropped
    await landUntil(r, () => t.end !== undefined, 'the session ended');
    await next;
    assert.deepEqual(t.spans(), [[0, 1], [1, 3], [3, 6]]);
    const err = t.failure();
    assert.equal(err.code, 'fence_mismatch');
    assert.equal(err.detail.fencing_token, 't2');
    assert.deepEqual(t.log.slice(-4), ['ack', 'ack', 'ack', 'end']);
    assert.equal(r.star.checkTail(BUCKET, 'fx').seq_num, 6);
  });

  it('refuses at open a token the stream does not admit, or a stream that is missing', async () => {
    const r = await boot();
    await stream(r, 'fo', { producer_policy: 'fenced' });
    const { t } = await openSession(r, 'fo');
    assert.equal(t.failure().code, 'fence_mismatch');
    const wrong = await openSession(r, 'fo', 'other');
    assert.equal(wrong.t.failure().code, 'fence_mismatch');
    // A missing stream: not_found, unless its bucket creates streams on append (BUCKET does).
    const strict = r.star.createBucket('strict', {});
    await land(r);
    await strict;
    const missing = await openSession(r, 'absent', undefined, 'strict');
    assert.equal(missing.t.failure().code, 'not_found');
    const created = await openSession(r, 'absent');
    assert.equal(created.t.end, undefined, 'opens on a stream its first batch will create');
    created.s.abort();
  });

  it('a reconfigure handoff ends it unavailable; a deletion ends it not_found; a retention change does not', async () => {
    const r = await boot();
    await stream(r, 'rc');
    const a = await openSession(r, 'rc');
    offer(a.s, 1);
    await land(r);
    const kept = r.star.reconfigureStream(BUCKET, 'rc', { retention_max_age_ms: 3_600_000 });
    await land(r);
    await kept;
    assert.equal(a.t.end, undefined, 'retention changes in place');
    const handoff = r.star.reconfigureStream(BUCKET, 'rc', { timestamping_mode: 'arrival' });
    await landUntil(r, () => a.t.end !== undefined, 'the session ended');
    await handoff;
    assert.equal(a.t.failure().code, 'unavailable');
    assert.equal(a.t.acks.length, 1);

    const b = await openSession(r, 'rc');
    offer(b.s, 1);
    await land(r);
    const del = r.star.deleteStream(BUCKET, 'rc');
    await landUntil(r, () => b.t.end !== undefined, 'the session ended');
    await del;
    assert.equal(b.t.failure().code, 'not_found');
    assert.deepEqual(b.t.spans(), [[1, 2]]);
  });

  it('a batch in flight when its stream was deleted ends the session not_found, as the deletion does (data.proto), not with the append\'s own refusal', async () => {
    const r = await boot();
    await stream(r, 'dl');
    const a = await openSession(r, 'dl');
    offer(a.s, 1);
    await settle(); // sequenced into the ring; its group commit has not landed
    const del = r.star.deleteStream(BUCKET, 'dl');
    // The deletion's row write lands first, then the group commit: the batch is refused for its stream.
    for (let i = 0; i < 8; i++) { r.inc.commitMeta(); await turn(); }
    await del;
    await landUntil(r, () => a.t.end !== undefined, 'the session ended');
    assert.equal(a.t.failure().code, 'not_found');
    assert.match(a.t.failure().message, /was deleted/);
    assert.equal(a.t.acks.length, 0);
  });

  it('end() drops what is still coalescing, after acking what the core took', async () => {
    const r = await boot();
    await stream(r, 'bye', { batch_max_delay_ms: 100, batch_max_records: 2 });
    const { s, t } = await openSession(r, 'bye');
    offer(s, 2); // full: handed to the core at once
    offer(s, 1); // lingers
    s.end('transport going away');
    await landUntil(r, () => t.end !== undefined, 'the session ended');
    assert.deepEqual(t.end, { kind: 'failed', reason: 'transport going away' });
    assert.deepEqual(t.spans(), [[0, 2]]);
    r.inc.advance(1000);
    await land(r);
    assert.equal(r.star.checkTail(BUCKET, 'bye').seq_num, 2, 'the lingering batch was never appended');
  });

  it('abort() stops at once with no further callback', async () => {
    const r = await boot();
    await stream(r, 'ab', { batch_max_delay_ms: 100 });
    const { s, t } = await openSession(r, 'ab');
    offer(s, 1);
    s.abort();
    r.inc.advance(1000);
    await land(r);
    assert.equal(t.end, undefined);
    assert.equal(t.acks.length, 0);
    assert.equal(r.star.checkTail(BUCKET, 'ab').seq_num, 0, 'the linger timer was cancelled');
    assert.equal(r.star.leased(BUCKET, 'ab'), false, 'no watcher is left holding the stream');
  });
});
