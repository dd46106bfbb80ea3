// A stream's parked subscribers (StreamState.park / unpark / wake, and LiveSubscription.onReady on
// top of them): each parked one is woken once per wake, an unparked one never, and a callback that
// closes another parked subscriber or parks again cannot corrupt the list. Ordering only, no timing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { recordingSink } from '../helpers/sse-sink.ts';
import { pumpSse } from '../../src/api/sse.ts';
import { StreamState, type TailParker } from '../../src/core/stream-state.ts';
import { LiveSubscription } from '../../src/core/subscription.ts';
import type { PageReader } from '../../src/core/page-reader.ts';
import type { StreamConfig } from '../../src/core/types.ts';

const CONFIG: StreamConfig = {
  class: 'standard', producer_policy: 'any', retention_max_age_ms: 0, retention_max_bytes: 0, batch_max_bytes: 0,
  batch_max_records: 0, batch_max_delay_ms: 0, throughput_max_bytes_per_second: 0, timestamping_mode: 'client-prefer',
  timestamping_uncapped: false,
};

function stream(): StreamState {
  return new StreamState({
    stream_id: '00000000-0000-4000-8000-000000000001', bucket: 'b', key: 'k', config: {}, created_at_unix_ms: 0,
    creation_token: '', fencing_token: '', trim_seq: 0, settled_end_seq: 0, settled_end_ts: 0, segments: [],
  }, CONFIG);
}

function parker(name: string, log: string[], then?: () => void): TailParker {
  return { parkedAt: -1, tailMoved() { log.push(name); then?.(); } };
}

test('wake calls every parked subscriber once, then none until they park again', () => {
  const st = stream();
  const log: string[] = [];
  const ps = ['a', 'b', 'c', 'd'].map((n) => parker(n, log));
  for (const p of ps) st.park(p);
  st.unpark(ps[1]);
  st.unpark(ps[1]); // not parked any more: a no-op
  st.wake();
  assert.deepEqual(log.sort(), ['a', 'c', 'd']);
  assert.ok(ps.every((p) => p.parkedAt === -1));
  st.wake();
  assert.equal(log.length, 3, 'a second wake finds nobody parked');
});

test('parking twice (as a heartbeat turn does) keeps one entry: woken once, gone after one unpark', () => {
  const st = stream();
  const log: string[] = [];
  const a = parker('a', log);
  const b = parker('b', log);
  st.park(a);
  st.park(b);
  st.park(a);
  assert.deepEqual([a.parkedAt, b.parkedAt], [0, 1], 'no second entry for a');
  st.unpark(a);
  st.wake();
  assert.deepEqual(log, ['b'], 'a, unparked once, is not woken');
});

test('a callback that unparks another parked subscriber, or parks itself again, leaves the list sound', () => {
  const st = stream();
  const log: string[] = [];
  // a parks again from its callback (as a subscriber with nothing more to write would); b closes c.
  const a: TailParker = parker('a', log, () => st.park(a));
  const c = parker('c', log);
  const b = parker('b', log, () => st.unpark(c));
  for (const p of [a, b, c]) st.park(p);
  st.wake();
  assert.deepEqual(log, ['a', 'b', 'c'], 'c was woken by this wake before b closed it, so its callback still runs once');
  assert.equal(a.parkedAt, 0, 'a is parked for the next wake');
  assert.equal(c.parkedAt, -1);
  log.length = 0;
  st.wake();
  assert.deepEqual(log, ['a'], 'only a, once');
  assert.equal(a.parkedAt, 0, 'and parked again by its callback');
});

test('LiveSubscription.onReady: the callback runs once per tail move, and once when the subscription closes while parked', () => {
  const st = stream();
  const reader = {} as PageReader; // never read: the cursor stays at the tail
  let closed = 0;
  const sub = new LiveSubscription(st, 0, reader, () => { closed++; });
  let ready = 0;
  assert.equal(sub.atTail(), true);
  sub.onReady(() => { ready++; });
  st.wake();
  st.wake();
  assert.equal(ready, 1, 'one wait, one callback');
  sub.onReady(() => { ready++; });
  sub.close();
  assert.equal(ready, 2, 'closing a parked subscription ends its wait');
  st.wake();
  assert.equal(ready, 2, 'and it is no longer parked');
  sub.onReady(() => { ready++; });
  assert.equal(ready, 3, 'a closed subscription is not parked: the callback runs at once');
  st.wake();
  assert.equal(ready, 3);
  assert.equal(closed, 1);
  assert.equal(st.subscribers, 0);
});

test('an idle SSE subscriber stays parked once however many heartbeats it writes', async () => {
  const st = stream();
  const sub = new LiveSubscription(st, 0, {} as PageReader, () => undefined);
  const { sink, writes, close } = recordingSink();
  pumpSse(sink, sub, false, { heartbeatMs: 1, stallMs: 60_000 });
  // The parked list is private; its length is what this test is about.
  const parked = (): unknown[] | undefined => (st as unknown as { parked?: unknown[] }).parked;
  try {
    await new Promise<void>((resolve) => {
      const wait = (): void => { if (writes.filter((w) => w === ': hb\n\n').length >= 5) resolve(); else setTimeout(wait, 1); };
      wait();
    });
    assert.equal(parked()?.length, 1, 'one entry, not one per heartbeat');
  } finally {
    close(); // ends the pump and its heartbeat timer, also when an assertion failed
  }
  assert.equal(parked(), undefined, 'closing unparks it');
});
