// The Leadership port (issue 16): the star sequences a stream only while its leadership answers an
// epoch, and acknowledges a batch only at the epoch it was sequenced at. A lease that moved between
// sequencing and durability leaves the batch unacknowledged (503) and the stream off this star.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { Star } from '../../src/core/star.ts';
import { ServiceError } from '../../src/core/errors.ts';
import type { Leadership } from '../../src/core/ports.ts';
import { IDLE_UNSETTLED_HOLD_MS_MAX } from '../../src/config/limits.ts';
import { rng } from '../helpers/rng.ts';
import { Incarnation, World } from '../sim/ports.ts';

const BUCKET = 'b';

async function boot(): Promise<{ inc: Incarnation; star: Star; lead: { epoch: number | undefined } }> {
  const inc = new Incarnation(new World(), rng(5), 1);
  const lead = { epoch: 1 as number | undefined };
  const leadership: Leadership = { epochOf: () => lead.epoch };
  const star = new Star({
    clock: inc.clock, timers: inc.timerPort, ids: inc.ids, log: inc.log, leadership, metadata: inc.metadata, objects: inc.objects,
    settler: inc.settler, wal: inc.wal, walFileNo: 1,
  });
  star.open(await inc.metadata.load(), [], []);
  const made = [star.createBucket(BUCKET, {}), star.createStream(BUCKET, 's', {})];
  for (let i = 0; i < 8; i++) { inc.landQueued(); await new Promise((r) => setImmediate(r)); }
  await Promise.all(made);
  return { inc, star, lead };
}

const one = { records: [{ headers: [], body: Buffer.from('r') }] };

test('an append made durable after its epoch moved on is not acknowledged, and the stream leaves the star', async () => {
  const { inc, star, lead } = await boot();
  const ack = star.append(BUCKET, 's', one);
  lead.epoch = 2; // another leadership took the stream before the group commit
  inc.landQueued();
  await assert.rejects(ack, (e: unknown) => e instanceof ServiceError && e.code === 'unavailable' && /epoch 1/.test(e.message));
  assert.throws(() => star.getStream(BUCKET, 's'), (e: unknown) => e instanceof ServiceError && e.code === 'not_found', 'evicted: the next leader loads it');
});

test('no epoch: nothing is sequenced', async () => {
  const { star, lead } = await boot();
  lead.epoch = undefined;
  await assert.rejects(star.append(BUCKET, 's', one), (e: unknown) => e instanceof ServiceError && e.code === 'unavailable');
});

test('at the same epoch the append is acknowledged', async () => {
  const { inc, star } = await boot();
  const ack = star.append(BUCKET, 's', one);
  inc.landQueued();
  assert.equal((await ack).start.seq_num, 0);
});

test('a trim, fence or reconfigure waiting for the row lock when the stream is evicted answers 503 (moved), not success or 404', async () => {
  const { inc, star } = await boot();
  const holding = star.fence(BUCKET, 's', 'first'); // holds the row lock until its write lands
  const waiting = [
    star.trim(BUCKET, 's', { seq_num: 0 }).then(() => 'ok', (e: unknown) => e),
    star.fence(BUCKET, 's', 'second').then(() => 'ok', (e: unknown) => e),
    star.reconfigureStream(BUCKET, 's', { retention_max_bytes: 1 }).then(() => 'ok', (e: unknown) => e),
  ];
  star.evict(BUCKET, 's'); // its lease moved while they waited
  inc.landQueued();
  await holding.catch(() => undefined);
  for (let i = 0; i < 4; i++) { inc.landQueued(); await new Promise((r) => setImmediate(r)); }
  for (const r of await Promise.all(waiting)) {
    assert.ok(r instanceof ServiceError && r.code === 'unavailable' && /moved to another star/.test(r.message), `answered ${String(r)}`);
  }
});

test('a stream is not idle (a leader keeps it) while a batch of it waits to settle; once settled it is', async () => {
  const { inc, star } = await boot();
  const ack = star.append(BUCKET, 's', one);
  inc.landQueued();
  await ack;
  assert.equal(star.idle(BUCKET, 's', 0), false, 'let go now, its chunk would stay unsettled');
  const settled = star.settle();
  for (let i = 0; i < 16; i++) { inc.landQueued(); await new Promise((r) => setImmediate(r)); }
  await settled;
  assert.equal(star.idle(BUCKET, 's', 0), true);
});

test('a stream whose settling does not finish is let go all the same once idle for IDLE_UNSETTLED_HOLD_MS_MAX (its chunks are durable)', async () => {
  const { inc, star } = await boot();
  const ack = star.append(BUCKET, 's', one);
  inc.landQueued();
  await ack;
  void star.settle().catch(() => undefined); // its upload never lands
  inc.advance(IDLE_UNSETTLED_HOLD_MS_MAX - 1);
  assert.equal(star.idle(BUCKET, 's', 0), false, 'held while its settle may still finish');
  inc.advance(2);
  assert.equal(star.idle(BUCKET, 's', 0), true, 'one stuck settle must not pin every stream on this star');
});
