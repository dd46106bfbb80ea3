// Dormant streams on a star alone (issue 16: a per-stream state activated on use, dormant when idle):
// a stream idle past dormantAfterMs, with nothing of it only in memory, keeps just its row; listing
// still shows it, the next call wakes it with everything intact, and a stream in use (subscribed,
// with a retention setting, or with records not yet settled) stays live. The real Star on the
// simulation's ports, with a virtual clock.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { Star } from '../../src/core/star.ts';
import { ServiceError } from '../../src/core/errors.ts';
import { DORMANT_RETIRE_SLICE_STREAMS } from '../../src/config/limits.ts';
import { rng } from '../helpers/rng.ts';
import { Incarnation, World } from '../sim/ports.ts';

const BUCKET = 'b';
const DORMANT_AFTER_MS = 5000;
/** The star's sweep runs every second (RETENTION_SWEEP_MS): past the idle time plus one sweep. */
const PAST_IDLE_MS = DORMANT_AFTER_MS + 2000;

interface Rig { inc: Incarnation; star: Star }

async function land(r: Rig, rounds = 8): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    r.inc.landQueued();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

async function done<T>(r: Rig, p: Promise<T>): Promise<T> {
  await land(r);
  return p;
}

async function boot(world = new World()): Promise<Rig> {
  const inc = new Incarnation(world, rng(3), 1);
  const star = new Star({
    clock: inc.clock, timers: inc.timerPort, ids: inc.ids, log: inc.log, metadata: inc.metadata, objects: inc.objects,
    settler: inc.settler, wal: inc.wal, walFileNo: 1, walSettleAfterMs: 1000, dormantAfterMs: DORMANT_AFTER_MS,
  });
  star.open(await inc.metadata.load(), [], []);
  return { inc, star };
}

/** Moves time past the idle timeout in one-second steps, letting settles land as they come. */
async function idle(r: Rig): Promise<void> {
  for (let ms = 0; ms < PAST_IDLE_MS; ms += 1000) {
    r.inc.advance(1000);
    await land(r);
  }
}

const one = (body: string) => ({ records: [{ headers: [], body: Buffer.from(body) }] });

test('an idle stream goes dormant, is still listed, and wakes with its records, tail and config', async () => {
  const r = await boot();
  await done(r, r.star.createBucket(BUCKET, {}));
  for (const k of ['a', 'b', 'c']) {
    await done(r, r.star.createStream(BUCKET, k, { retention_max_age_ms: 0 }));
    await done(r, r.star.append(BUCKET, k, one(`${k}0`)));
    await done(r, r.star.append(BUCKET, k, one(`${k}1`)));
  }
  await idle(r);
  assert.equal(r.star.dormantStreams, 3, 'every idle stream went dormant once its records settled');
  assert.deepEqual(r.star.listStreams(BUCKET, '', 10).items.map((s) => s.key), ['a', 'b', 'c']);

  const page = await r.star.read(BUCKET, 'b', { start: { kind: 'seq_num', value: 0 }, limit: 10, maxBytes: 0, clamp: true });
  assert.deepEqual(page.records.map((x) => Buffer.from(x.body).toString()), ['b0', 'b1']);
  assert.equal(r.star.dormantStreams, 2, 'the read woke b');
  assert.equal(r.star.checkTail(BUCKET, 'a').seq_num, 2);
  const ack = await done(r, r.star.append(BUCKET, 'c', one('c2')));
  assert.equal(ack.start.seq_num, 2, 'an append to a dormant stream continues at its tail');
  assert.equal(r.star.dormantStreams, 0);
});

test('a subscribed stream, one with unsettled records, and one with a retention setting stay live', async () => {
  const r = await boot();
  await done(r, r.star.createBucket(BUCKET, {}));
  await done(r, r.star.createStream(BUCKET, 'sub', {}));
  await done(r, r.star.createStream(BUCKET, 'kept', { retention_max_age_ms: 3_600_000 }));
  await done(r, r.star.createStream(BUCKET, 'quiet', {}));
  const sub = await r.star.subscribe(BUCKET, 'sub', { kind: 'seq_num', value: 0 });
  await idle(r);
  assert.equal(r.star.dormantStreams, 1, 'only the quiet stream went dormant');
  assert.deepEqual(r.star.listStreams(BUCKET, '', 10).items.map((s) => s.key), ['kept', 'quiet', 'sub']);
  sub.close();
  await idle(r);
  assert.equal(r.star.dormantStreams, 2, 'once nobody subscribes, it goes dormant too');
});

test('a restart starts every stream dormant and wakes the ones the WAL holds records of', async () => {
  const world = new World();
  const r = await boot(world);
  await done(r, r.star.createBucket(BUCKET, {}));
  await done(r, r.star.createStream(BUCKET, 'x', {}));
  await done(r, r.star.createStream(BUCKET, 'y', {}));
  await done(r, r.star.append(BUCKET, 'x', one('x0')));
  r.inc.crash();
  const { frames, files, nextFileNo } = Incarnation.recover(world);
  const inc = new Incarnation(world, rng(4), nextFileNo);
  const star = new Star({
    clock: inc.clock, timers: inc.timerPort, ids: inc.ids, log: inc.log, metadata: inc.metadata, objects: inc.objects,
    settler: inc.settler, wal: inc.wal, walFileNo: nextFileNo, dormantAfterMs: DORMANT_AFTER_MS,
  });
  star.open(await inc.metadata.load(), frames, files);
  assert.equal(star.dormantStreams, 1, 'y (no records in the WAL) starts dormant; x woke to take its record back');
  assert.equal(star.checkTail(BUCKET, 'x').seq_num, 1);
  assert.equal(star.checkTail(BUCKET, 'y').seq_num, 0);
});

test('more idle streams than one retirement slice all go dormant, over slices deferred behind I/O', async () => {
  const r = await boot();
  await done(r, r.star.createBucket(BUCKET, {}));
  const count = DORMANT_RETIRE_SLICE_STREAMS * 2 + 5;
  const made: Promise<unknown>[] = [];
  for (let i = 0; i < count; i++) made.push(r.star.createStream(BUCKET, `s${i}`, {}));
  await done(r, Promise.all(made));
  assert.equal(r.star.liveStreams, count);
  // One sweep past the idle time starts it; the deferred slices run as queued work lands.
  r.inc.advance(PAST_IDLE_MS);
  r.inc.advance(1000);
  await land(r, 2);
  assert.equal(r.star.dormantStreams, count, 'every slice ran');
  assert.equal(r.star.liveStreams, 0);
  const page = r.star.listStreams(BUCKET, '', 1000);
  assert.equal(page.items.length, 1000);
});

test('a dormant stream\'s throughput cap holds on the append that wakes it: a batch past the longest wait is refused', async () => {
  const r = await boot();
  await done(r, r.star.createBucket(BUCKET, {}));
  await done(r, r.star.createStream(BUCKET, 'capped', { throughput_max_bytes_per_second: 100 }));
  await idle(r);
  assert.equal(r.star.dormantStreams, 1);
  // 1,200 bytes at 100 B/s would wait 11 s, past APPEND_PACE_WAIT_MS_MAX: refused, nothing appended.
  await assert.rejects(r.star.append(BUCKET, 'capped', one('x'.repeat(1200))), (e: unknown) => e instanceof ServiceError && e.code === 'resource_exhausted');
  assert.equal(r.star.checkTail(BUCKET, 'capped').seq_num, 0);
});
