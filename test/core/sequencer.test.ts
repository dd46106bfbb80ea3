// The sequencing rules as a table: fencing, match_seq_num and timestamps for every mode.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkBatchCaps, checkFence, checkMatch, pace, stampTimestamps as stampBy } from '../../src/core/sequencer.ts';
import { ServiceError } from '../../src/core/errors.ts';
import type { RecordInput, StreamConfig } from '../../src/core/types.ts';

const cfg = (over: Partial<StreamConfig>): StreamConfig => ({
  class: 'standard', producer_policy: 'any', retention_max_age_ms: 0, retention_max_bytes: 0, batch_max_bytes: 0,
  batch_max_records: 0, batch_max_delay_ms: 0, throughput_max_bytes_per_second: 0, timestamping_mode: 'client-prefer',
  timestamping_uncapped: false, ...over,
});
const rec = (ts?: number): RecordInput => ({ headers: [], body: new Uint8Array(), ...(ts === undefined ? {} : { timestamp_ms: ts }) });

const stampTimestamps = (recs: RecordInput[], c: StreamConfig, arrival: number, floor: number): number[] =>
  stampBy(recs.length, recs, (rs, i) => rs[i].timestamp_ms, c, arrival, floor);

function code(fn: () => unknown): string | undefined {
  try { fn(); return undefined; } catch (e) { return (e as ServiceError).code; }
}

test('fencing: every combination of installed token, policy and presented token', () => {
  const rows: [string, StreamConfig['producer_policy'], string | undefined, string | undefined][] = [
    ['', 'any', undefined, undefined],
    ['', 'any', '', undefined],
    ['', 'any', 't1', 'fence_mismatch'],
    ['t1', 'any', undefined, 'fence_mismatch'],
    ['t1', 'any', 't1', undefined],
    ['t1', 'any', 't2', 'fence_mismatch'],
    ['t1', 'any', '', 'fence_mismatch'],
    ['', 'fenced', undefined, 'fence_mismatch'],
    ['', 'fenced', '', 'fence_mismatch'],
    ['t1', 'fenced', 't1', undefined],
    ['t1', 'fenced', undefined, 'fence_mismatch'],
  ];
  for (const [installed, policy, presented, want] of rows) {
    assert.equal(code(() => checkFence(installed, policy, presented)), want, JSON.stringify({ installed, policy, presented }));
  }
  assert.throws(() => checkFence('secret-t', 'any', 'x'), (e: ServiceError) => {
    assert.deepEqual(e.toBody(), { error: 'fencing token mismatch', fencing_token: 'secret-t' });
    return true;
  });
});

test('match_seq_num: a miss carries the tail, a hit and an absent match pass', () => {
  const tail = { seq_num: 5, timestamp_ms: 9 };
  assert.equal(code(() => checkMatch(undefined, 5, tail)), undefined);
  assert.equal(code(() => checkMatch(5, 5, tail)), undefined);
  assert.equal(code(() => checkMatch(4, 5, tail)), 'seq_mismatch');
  assert.throws(() => checkMatch(6, 5, tail), (e: ServiceError) => {
    assert.deepEqual(e.toBody().tail, tail);
    return true;
  });
});

test('timestamps: client-prefer takes the client time, else arrival, capped at arrival', () => {
  assert.deepEqual(stampTimestamps([rec(100), rec(), rec(2000)], cfg({}), 1000, 0), [100, 1000, 1000]);
});

test('timestamps: uncapped keeps a future client time', () => {
  assert.deepEqual(stampTimestamps([rec(5000)], cfg({ timestamping_uncapped: true }), 1000, 0), [5000]);
});

test('timestamps: arrival ignores the client time', () => {
  assert.deepEqual(stampTimestamps([rec(5), rec(5000), rec()], cfg({ timestamping_mode: 'arrival' }), 1000, 0), [1000, 1000, 1000]);
});

test('timestamps: client-require refuses a record without one', () => {
  assert.equal(code(() => stampTimestamps([rec(1), rec()], cfg({ timestamping_mode: 'client-require' }), 1000, 0)), 'invalid_argument');
  assert.deepEqual(stampTimestamps([rec(1), rec(2)], cfg({ timestamping_mode: 'client-require' }), 1000, 0), [1, 2]);
});

test('timestamps never go backwards: earlier ones are raised to the previous record', () => {
  assert.deepEqual(stampTimestamps([rec(50), rec(40), rec(60), rec(10)], cfg({}), 1000, 45), [50, 50, 60, 60]);
  assert.deepEqual(stampTimestamps([rec()], cfg({ timestamping_mode: 'arrival' }), 1000, 2000), [2000]);
});

test('batch caps: at a cap passes, one over is 400 naming the cap, 0 is unbounded', () => {
  assert.equal(code(() => checkBatchCaps(cfg({ batch_max_records: 2, batch_max_bytes: 20 }), 2, 20)), undefined);
  assert.equal(code(() => checkBatchCaps(cfg({ batch_max_records: 2 }), 3, 1)), 'invalid_argument');
  assert.equal(code(() => checkBatchCaps(cfg({ batch_max_bytes: 20 }), 1, 21)), 'invalid_argument');
  assert.equal(code(() => checkBatchCaps(cfg({}), 100_000, 10_000_000)), undefined);
  assert.throws(() => checkBatchCaps(cfg({ batch_max_records: 2 }), 3, 1), /batch_max_records is 2/);
});

test('pacing: one second of burst, then batches wait for their bytes at the rate, in order', () => {
  let p = pace(undefined, 100, 1000, 60); // a new bucket holds one second: 100
  assert.equal(p.waitMs, 0);
  p = pace(p.next, 100, 1000, 60); // 40 left, 20 owed: 200 ms
  assert.equal(p.waitMs, 200);
  p = pace(p.next, 100, 1000, 30); // queued behind it: 50 owed
  assert.equal(p.waitMs, 500);
  p = pace(p.next, 100, 1500, 0); // half a second later the debt is paid
  assert.equal(p.waitMs, 0);
  assert.equal(p.next.tokens, 0);
  p = pace(p.next, 100, 100_000, 10); // a long idle refills to one second, no more
  assert.equal(p.next.tokens, 90);
});
