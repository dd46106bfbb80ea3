// The SSE subscription against a real star: live delivery from each kind of start; resuming with
// Last-Event-ID across a SIGKILL and restart of the star and across a graceful stop, with nothing
// skipped or repeated; a frozen star detected by the missing heartbeat; typed errors when the stream
// is deleted under it or the start was trimmed away.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SvcClient, SvcError, type StreamAddress, type SubscriptionEvent } from '../../src/client/index.ts';
import { Star, text, uniq, waitFor } from './kit.ts';

let star: Star;
let c: SvcClient;
/** The star's heartbeat in these tests, so a silent connection shows within a second. */
const HEARTBEAT_MS = 200;
const SILENCE_MS = 1500;

before(async () => {
  star = await Star.start({ args: ['--sse-heartbeat-ms', String(HEARTBEAT_MS)] });
  c = new SvcClient({ url: star.url });
});
after(async () => { await star.stop(); });

async function newStream(config = {}): Promise<StreamAddress> {
  const bucket = uniq('b');
  await c.createBucket({ bucket });
  const a = { bucket, key: uniq('k') };
  await c.createStream(a, config);
  return a;
}

/** Consumes a subscription in the background, keeping every record's body and seq_num. */
function consume(a: StreamAddress, opts: Parameters<SvcClient['subscribe']>[1]) {
  const events: SubscriptionEvent[] = [];
  const sub = c.subscribe(a, { heartbeatSilenceMs: SILENCE_MS, ...opts, onEvent: (e) => events.push(e) });
  const seen: { seq: number; body: string }[] = [];
  const state: { error?: unknown } = {};
  const done = (async () => {
    try {
      for await (const b of sub) for (const r of b.records) seen.push({ seq: r.seq_num, body: text(r.body) });
    } catch (err) {
      state.error = err;
    }
  })();
  return { sub, seen, events, state, done };
}

async function appendRange(a: StreamAddress, from: number, to: number): Promise<void> {
  for (let i = from; i < to; i += 50) {
    await c.append(a, Array.from({ length: Math.min(50, to - i) }, (_, j) => ({ body: `r${i + j}` })));
  }
}

function assertExactly(seen: { seq: number; body: string }[], n: number, first = 0): void {
  assert.equal(seen.length, n - first, 'every record once');
  seen.forEach((r, i) => {
    assert.equal(r.seq, first + i, 'no gap, no repeat');
    assert.equal(r.body, `r${first + i}`);
  });
}

test('delivers live records from a seq_num, a tail offset and a timestamp', async () => {
  const a = await newStream();
  await appendRange(a, 0, 10);
  const fromSeq = consume(a, { start: { seqNum: 3 } });
  const fromTail = consume(a, { start: { tailOffset: 2 } });
  const tail = await c.checkTail(a);
  const fromTime = consume(a, { start: { timestampMs: tail.timestamp_ms + 1 } });
  await appendRange(a, 10, 20);
  await waitFor('all three caught up', () => fromSeq.seen.length === 17 && fromTail.seen.length === 12 && fromTime.seen.length >= 1);
  assertExactly(fromSeq.seen, 20, 3);
  assertExactly(fromTail.seen, 20, 8);
  assert.ok(fromTime.seen[0].seq >= 10, 'a time start resolves to records stamped at or after it');
  for (const s of [fromSeq, fromTail, fromTime]) { s.sub.close(); await s.done; assert.equal(s.state.error, undefined); }
});

test('resumes across a SIGKILL and restart of the star, and across a graceful stop: nothing skipped or repeated', async () => {
  const a = await newStream();
  const s = consume(a, { start: { seqNum: 0 } });
  await appendRange(a, 0, 500);
  await waitFor('the first 500 delivered', () => s.seen.length === 500);
  await star.killAndRestart();
  await appendRange(a, 500, 1000);
  await waitFor('1000 delivered after the SIGKILL', () => s.seen.length >= 1000 || s.state.error !== undefined);
  assert.ok(s.events.some((e) => e.type === 'reconnecting' && e.cursor === 500), 'reconnected at the cursor 500');

  await star.stopGracefully(); // the event stream simply ends
  await star.restart();
  await appendRange(a, 1000, 1200);
  await waitFor('1200 delivered after the graceful restart', () => s.seen.length >= 1200 || s.state.error !== undefined);
  assert.equal(s.state.error, undefined);
  assertExactly(s.seen, 1200);
  assert.equal(s.sub.cursor, 1200);
  s.sub.close();
  await s.done;
});

test('a frozen star (no heartbeat) is detected and the subscription reconnects and resumes', async () => {
  const a = await newStream();
  const s = consume(a, { start: { seqNum: 0 } });
  await appendRange(a, 0, 100);
  await waitFor('100 delivered', () => s.seen.length === 100);
  star.freeze();
  try {
    await waitFor('the heartbeat silence noticed', () => s.events.some((e) => e.type === 'reconnecting' && e.reason === 'silence'));
  } finally {
    star.thaw();
  }
  await appendRange(a, 100, 200);
  await waitFor('200 delivered', () => s.seen.length >= 200 || s.state.error !== undefined);
  assertExactly(s.seen, 200);
  s.sub.close();
  await s.done;
});

test('a deleted stream ends the subscription with not_found; a trimmed start is trimmed', async () => {
  const a = await newStream();
  const s = consume(a, { start: { seqNum: 0 } });
  await appendRange(a, 0, 10);
  await waitFor('10 delivered', () => s.seen.length === 10);
  await c.deleteStream(a);
  await s.done;
  assert.ok(s.state.error instanceof SvcError && s.state.error.kind === 'not_found', `not_found, got ${String(s.state.error)}`);

  const b = await newStream();
  await appendRange(b, 0, 10);
  await c.trim(b, { seqNum: 5 });
  const t = consume(b, { start: { seqNum: 0 } });
  await t.done;
  assert.ok(t.state.error instanceof SvcError && t.state.error.kind === 'trimmed', `trimmed, got ${String(t.state.error)}`);
});

test('a tail offset reaching past the retained history starts at the earliest retained record; on a fully trimmed stream, at the tail', async () => {
  const a = await newStream();
  await appendRange(a, 0, 7);
  await c.trim(a, { seqNum: 2 });
  const past = consume(a, { start: { tailOffset: 10 } });
  await appendRange(a, 7, 9);
  await waitFor('the retained records and the new ones', () => past.seen.length === 7 || past.state.error !== undefined);
  assert.equal(past.state.error, undefined);
  assertExactly(past.seen, 9, 2);

  const b = await newStream();
  await appendRange(b, 0, 5);
  await c.trim(b, { seqNum: 5 });
  const empty = consume(b, { start: { tailOffset: 10 } });
  await waitFor('connected', () => empty.events.some((e) => e.type === 'connected') || empty.state.error !== undefined);
  await appendRange(b, 5, 8);
  await waitFor('the new records', () => empty.seen.length === 3 || empty.state.error !== undefined);
  assert.equal(empty.state.error, undefined);
  assertExactly(empty.seen, 8, 5);
  for (const s of [past, empty]) { s.sub.close(); await s.done; }
});

test('closing a subscription ends it quietly: no reconnect is told of (svc tail -f printed one on every Ctrl-C)', async () => {
  const a = await newStream();
  const s = consume(a, { start: { seqNum: 0 } });
  await waitFor('connected', () => s.events.some((e) => e.type === 'connected'));
  s.sub.close();
  await s.done;
  assert.equal(s.state.error, undefined);
  assert.deepEqual(s.events.filter((e) => e.type === 'reconnecting'), []);
});
