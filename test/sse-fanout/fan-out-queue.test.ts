// The fan-out's ready queue: a bounded number of subscribers per event-loop turn, so I/O callbacks
// (producers' appends and acks) run between slices; each subscriber queued at most once; FIFO.
// Ordering of callbacks only, no timing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FanOut, type Runnable } from '../../src/api/sse.ts';
import { SSE_SOCKETS_PER_TURN_MAX } from '../../src/config/limits.ts';

function runnables(n: number, log: number[]): Runnable[] {
  return Array.from({ length: n }, (_, i) => ({ queued: false, run() { log.push(i); } }));
}

test('a turn serves at most the bound; a callback queued meanwhile runs between turns', async () => {
  const fan = new FanOut();
  const log: number[] = [];
  const n = SSE_SOCKETS_PER_TURN_MAX * 2 + 5;
  for (const r of runnables(n, log)) fan.enqueue(r);
  // Queued after the fan-out's first turn, as an append's callback would be.
  const between = await new Promise<number>((resolve) => setImmediate(() => resolve(log.length)));
  assert.equal(between, SSE_SOCKETS_PER_TURN_MAX, 'the first turn stops at the bound and yields');
  await new Promise<void>((resolve) => {
    const wait = (): void => { if (log.length === n) resolve(); else setImmediate(wait); };
    wait();
  });
  assert.deepEqual(log, Array.from({ length: n }, (_, i) => i), 'FIFO, each once');
});

test('a runnable enqueued twice before its turn runs once; one that re-enqueues goes to the back', async () => {
  const fan = new FanOut(2);
  const log: string[] = [];
  let again = true;
  const a: Runnable = { queued: false, run() { log.push('a'); if (again) { again = false; fan.enqueue(a); } } };
  const b: Runnable = { queued: false, run() { log.push('b'); } };
  const c: Runnable = { queued: false, run() { log.push('c'); } };
  fan.enqueue(a);
  fan.enqueue(a);
  fan.enqueue(b);
  fan.enqueue(c);
  fan.enqueue(b);
  await new Promise<void>((resolve) => {
    const wait = (): void => { if (log.length === 4) resolve(); else setImmediate(wait); };
    wait();
  });
  assert.deepEqual(log, ['a', 'b', 'c', 'a']);
});
