// The heap trimmer: when it is due (a quiet star with something to give back), and that a trim
// really returns a heap's garbage pages to the system.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getHeapStatistics } from 'node:v8';
import { heapTrimDue, heapTrimmed, heapTrimStart, trimHeap, type HeapTrimSample } from '../../src/ops/heap-trim.ts';
import {
  HEAP_TRIM_CPU_SHARE_MAX, HEAP_TRIM_GROWTH_BYTES_MIN, HEAP_TRIM_HEAP_BYTES_MIN, HEAP_TRIM_INTERVAL_MS_MIN, HEAP_TRIM_QUIET_MS,
} from '../../src/config/limits.ts';

const MIB = 2 ** 20;
/** A heap past the floor, and as big as the trim left it in the tests that trim first. */
const BIG = HEAP_TRIM_HEAP_BYTES_MIN + 8 * MIB;
const at = (nowMs: number, logEnd: number, retired: number, heapTotalBytes = BIG, oldSpaceFreeBytes = 0): HeapTrimSample => ({
  nowMs, logEnd, retired, heapTotalBytes, oldSpaceFreeBytes,
});

test('a trim is due only once appends have stopped for the quiet window', () => {
  const st = heapTrimStart(at(0, 500, 0));
  // Appends keep arriving: never due, however many streams went dormant meanwhile.
  for (let t = 1000; t <= 5 * HEAP_TRIM_QUIET_MS; t += 1000) assert.equal(heapTrimDue(st, at(t, 500 + t, t)), false);
  const lastAppend = 5 * HEAP_TRIM_QUIET_MS;
  assert.equal(heapTrimDue(st, at(lastAppend + HEAP_TRIM_QUIET_MS - 1, 500 + lastAppend, lastAppend)), false, 'not quiet long enough');
  assert.equal(heapTrimDue(st, at(lastAppend + HEAP_TRIM_QUIET_MS, 500 + lastAppend, lastAppend)), true);
});

test('a star that started with a big heap trims once quiet; one with a small heap never does', () => {
  const big = heapTrimStart(at(0, 7, 0));
  assert.equal(heapTrimDue(big, at(HEAP_TRIM_QUIET_MS - 1, 7, 0)), false);
  assert.equal(heapTrimDue(big, at(HEAP_TRIM_QUIET_MS, 7, 0)), true);
  const small = heapTrimStart(at(0, 7, 0, HEAP_TRIM_HEAP_BYTES_MIN - 1));
  assert.equal(heapTrimDue(small, at(10 * HEAP_TRIM_QUIET_MS, 7, 1000, HEAP_TRIM_HEAP_BYTES_MIN - 1)), false, 'streams went dormant, but the heap is small');
});

test('after a trim the next waits for the interval, and for a stream gone dormant or the heap grown', () => {
  const st = heapTrimStart(at(0, 1, 0));
  const t1 = HEAP_TRIM_QUIET_MS;
  const first = at(t1, 1, 10);
  assert.equal(heapTrimDue(st, first), true);
  heapTrimmed(st, first, BIG, 1);
  const later = t1 + HEAP_TRIM_INTERVAL_MS_MIN;
  assert.equal(heapTrimDue(st, at(later - 1, 1, 11)), false, 'within the interval');
  assert.equal(heapTrimDue(st, at(later, 1, 10)), false, 'nothing went dormant and the heap is as the trim left it');
  assert.equal(heapTrimDue(st, at(later, 1, 11)), true, 'a stream went dormant');
  assert.equal(heapTrimDue(st, at(later, 1, 10, BIG + HEAP_TRIM_GROWTH_BYTES_MIN)), true, 'the committed heap grew');
  assert.equal(heapTrimDue(st, at(later, 1, 10, BIG, HEAP_TRIM_GROWTH_BYTES_MIN - 1)), false, 'little of old space is free');
  assert.equal(heapTrimDue(st, at(later, 1, 10, BIG, HEAP_TRIM_GROWTH_BYTES_MIN)), true, 'a collection left old space free');
});

test('trims take at most their share of the main thread: a long pause spaces the next one out', () => {
  const st = heapTrimStart(at(0, 1, 0));
  const first = at(HEAP_TRIM_QUIET_MS, 1, 10);
  assert.equal(heapTrimDue(st, first), true);
  const pauseMs = 4 * HEAP_TRIM_INTERVAL_MS_MIN * HEAP_TRIM_CPU_SHARE_MAX;
  heapTrimmed(st, first, BIG, pauseMs);
  const earliest = first.nowMs + pauseMs / HEAP_TRIM_CPU_SHARE_MAX;
  assert.equal(heapTrimDue(st, at(first.nowMs + HEAP_TRIM_INTERVAL_MS_MIN, 1, 11)), false);
  assert.equal(heapTrimDue(st, at(earliest - 1, 1, 11)), false);
  assert.equal(heapTrimDue(st, at(earliest, 1, 11)), true);
});

test('a trim gives a heap\'s garbage pages back: the committed heap shrinks', async () => {
  // Grow the heap by about 200 MB of objects, then drop them: garbage V8 keeps committed.
  let held: { n: number; s: string }[] | undefined = [];
  for (let i = 0; i < 2_000_000; i++) held.push({ n: i, s: `record ${i}` });
  assert.equal(held.length, 2_000_000);
  held = undefined;
  const before = getHeapStatistics().total_heap_size;
  const after = await trimHeap();
  assert.ok(before - after >= 100 * MIB, `committed heap ${(before / MIB).toFixed(0)} MiB before the trim, ${(after / MIB).toFixed(0)} MiB after`);
});
