// The fan-out's ready queue: a bounded number of subscribers per event-loop turn, so I/O callbacks
// (producers' appends and acks) run between slices; each subscriber queued at most once; FIFO.
// Ordering of callbacks only, no timing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { recordingSink } from '../helpers/sse-sink.ts';
import { pumpSse } from '../../src/api/sse.ts';
import { FanOut, type Runnable } from '../../src/api/sse-fanout.ts';
import type { Subscription, SubscriptionBatch } from '../../src/core/service-api.ts';
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

test('a heartbeat while a history read is pending is written alone: the subscription is not polled again', async () => {
  const { sink, writes, close } = recordingSink();
  let pollsDuringRead = 0;
  let nexts = 0;
  const sub: Subscription = {
    cursor: 0,
    next: () => { nexts++; return new Promise<SubscriptionBatch>(() => { /* a read that never finishes */ }); },
    close() { /* nothing held */ },
    poll() { if (nexts > 0) pollsDuringRead++; return undefined; },
    atTail: () => false,
    onReady() { assert.fail('not at the tail'); },
  };
  pumpSse(sink, sub, false, { heartbeatMs: 1, stallMs: 60_000 });
  await new Promise<void>((resolve) => {
    const wait = (): void => { if (writes.filter((w) => w === ': hb\n\n').length >= 3) resolve(); else setTimeout(wait, 1); };
    wait();
  });
  close();
  assert.equal(pollsDuringRead, 0, 'never polled while next() was pending');
  assert.equal(nexts, 1, 'one next() in flight');
  assert.ok(writes.every((w) => w === ': hb\n\n'), 'only heartbeats were written');
});
