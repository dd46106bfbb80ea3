// The SSE cohort (src/api/sse-cohort.ts): caught-up subscribers of one stream served as one. Seeded:
// subscribers join at the tail and behind it while batches commit, their sockets fill and drain at
// random, heartbeats fall between rounds, some subscribers leave; every subscriber still left must
// have received every batch from its start exactly once, in order, and no socket may be written while
// full (before its drain). Ordering only, no timing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RoundWrite, SseSink } from '../../src/api/exchange.ts';
import { pumpSse } from '../../src/api/sse.ts';
import { StreamState, heldBatch } from '../../src/core/stream-state.ts';
import { LiveSubscription } from '../../src/core/subscription.ts';
import type { PageReader } from '../../src/core/page-reader.ts';
import { DEFAULT_BUCKET_CONFIG, streamDefaultsOf } from '../../src/core/types.ts';
import { encodeBatch, forEachRecord, sealFrame } from '../../src/storage/format/record-codec.ts';
import type { SequencedRecord } from '../../src/core/types.ts';
import { rng as makeRng } from '../helpers/rng.ts';

const STREAM_ID = '00000000-0000-4000-8000-000000000001';

function stream(): StreamState {
  const meta = {
    stream_id: STREAM_ID, bucket: 'b', key: 'k', config: {}, created_at_unix_ms: 0, creation_token: '',
    fencing_token: '', trim_seq: 0, settled_end_seq: 0, settled_end_ts: 0, segments: [],
  };
  return new StreamState(meta, streamDefaultsOf(DEFAULT_BUCKET_CONFIG));
}

/** Commits `count` records (bodies `r<seq>`) at the tail and wakes the stream, as a star does. */
function commit(st: StreamState, count: number): void {
  const first = st.tail;
  const frame = encodeBatch(STREAM_ID, first, Array.from({ length: count }, (_, i) => ({ timestamp_ms: 1, headers: [], body: Buffer.from(`r${first + i}`) })));
  sealFrame(frame, 0, frame.length);
  st.commitBatch(heldBatch({ firstSeq: first, count, frame, maxTs: 1, contentBytes: count }, 1));
  st.wake();
}

/** Reads pages from the stream's batches in memory (all of this stream is), as a star's reader would
 *  from its WAL: for subscribers whose cursor is not at a batch's start. */
const memReader = {
  async page(st: StreamState, start: number, lim: { limit: number }): Promise<SequencedRecord[]> {
    const out: SequencedRecord[] = [];
    for (const b of st.mem) {
      if (b.firstSeq + b.count <= start) continue;
      forEachRecord(b.frame, 0, Math.max(0, start - b.firstSeq), (r) => { out.push(r); return out.length < lim.limit; });
      if (out.length >= lim.limit) break;
    }
    return out;
  },
} as unknown as PageReader;

interface Client {
  start: number;
  /** Record bodies received, in order. */
  got: string[];
  closed: boolean;
  /** Writes made while its socket was full (before the drain): the pump must wait for the drain. */
  writesWhileFull: number;
  sink: SseSink;
  close(): void;
  /** Its socket is full: the drain the pump waits for, fired later by the test. */
  drain: (() => void) | undefined;
  /** Runs at the start of every write to its socket (a test closes subscribers from inside one). */
  onWrite?: () => void;
}

/** A sink whose writes fill the socket with probability `fullP` (the write is kept, as uWS keeps it).
 *  `withRound`: it also offers a cohort the socket to write rounds to directly (SseSink.round, as the
 *  uWS sink does), whose writes fill it the same way. */
function client(start: number, rand: () => number, fullP: number, withRound = false): Client {
  let onClose: (() => void) | undefined;
  const state = { closed: false };
  let full = false;
  const take = (chunk: string | Buffer): boolean => {
    c.onWrite?.();
    if (full) c.writesWhileFull += 1;
    const text = String(chunk);
    // A heartbeat never fills the socket here (the pump writes one ahead of frames in a corked
    // write without looking at the answer; the frame's own write then reports the socket full).
    if (text === ': hb\n\n') return !full;
    for (const m of text.matchAll(/"body":"(r\d+)"/g)) c.got.push(m[1]);
    full = rand() < fullP;
    return !full;
  };
  const round: RoundWrite = (out, frames) => {
    assert.equal(out, c, 'a round is written to its own member\'s socket');
    if (state.closed) return 0;
    for (let i = 0; i < frames.length; i++) if (!take(frames[i])) return -(i + 1);
    return frames.length;
  };
  const c: Client = {
    start, got: [], closed: false, drain: undefined, writesWhileFull: 0,
    sink: {
      get closed() { return state.closed; },
      write: take,
      cork(fn) { fn(); },
      onWritable(cb) { c.drain = () => { full = false; cb(); }; },
      onClose(cb) { onClose = cb; },
      end() { state.closed = true; },
      destroy() { state.closed = true; },
    },
    close() { c.closed = true; state.closed = true; onClose?.(); },
  };
  if (withRound) Object.assign(c.sink, { round: { out: c, write: round } });
  return c;
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** `count` subscribers of `st` from `start` whose sockets never fill, each pumped, with every chunk
 *  written to each recorded. */
function subscribedFrom(st: StreamState, start: number, count: number): { clients: Client[]; writes: string[][]; ends: (() => void)[] } {
  const clients = Array.from({ length: count }, () => client(start, () => 1, 0));
  const writes = clients.map(() => [] as string[]);
  clients.forEach((c, i) => {
    const write = c.sink.write.bind(c.sink);
    c.sink.write = (chunk) => { writes[i].push(String(chunk)); return write(chunk); };
  });
  const ends = clients.map((c) => pumpSse(c.sink, new LiveSubscription(st, start, memReader, () => undefined), false, {}));
  return { clients, writes, ends };
}

for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
  test(`cohort: every subscriber gets every batch from its start once, in order (seed ${seed})`, async () => {
    const rand = makeRng(seed);
    const st = stream();
    const clients: Client[] = [];
    const boundaries = [0];
    const ends: (() => void)[] = [];
    const subscribe = (): void => {
      // Most join at the tail; some from behind it (they catch up alone, then join), inside a batch
      // too; some from a cursor the stream has not reached (it pends until the stream gets there, and
      // must not hold back those waiting at the tail).
      const r = rand();
      const start = r < 0.6 ? st.tail
        : r < 0.75 ? boundaries[Math.floor(rand() * boundaries.length)]
        : r < 0.9 ? Math.floor(rand() * (st.tail + 1))
        : st.tail + 1 + Math.floor(rand() * 5);
      const c = client(start, rand, rand() < 0.3 ? 0.2 : 0, rand() < 0.5);
      // Now and then a subscriber goes away from inside a write to a socket, its own or another's (uWS
      // runs a client's close callbacks at once): the round goes on with the members it has left.
      c.onWrite = () => {
        if (rand() >= 0.01) return;
        const open = clients.filter((x) => !x.closed);
        if (open.length > 0) open[Math.floor(rand() * open.length)].close();
      };
      clients.push(c);
      const sub = new LiveSubscription(st, start, memReader, () => undefined);
      ends.push(pumpSse(c.sink, sub, false, { heartbeatMs: 1 + Math.floor(rand() * 5), stallMs: 60_000 }));
    };
    // More than a turn's SSE_SOCKETS_PER_TURN_MAX (64), so a round spans turns and batches, joins
    // and leaves fall inside it.
    for (let i = 0; i < 400; i++) subscribe();
    for (let step = 0; step < 300; step++) {
      const r = rand();
      if (r < 0.35) {
        commit(st, 1 + Math.floor(rand() * 3));
        boundaries.push(st.tail);
      }
      else if (r < 0.45) for (let i = 0; i < 10; i++) subscribe();
      else if (r < 0.5) {
        const open = clients.filter((c) => !c.closed);
        for (let i = 0; i < 10 && open.length > 0; i++) open.splice(Math.floor(rand() * open.length), 1)[0].close();
      } else if (r < 0.75) {
        const full = clients.filter((c) => c.drain !== undefined && !c.closed);
        for (let i = 0; i < 10 && full.length > 0; i++) {
          const c = full.splice(Math.floor(rand() * full.length), 1)[0];
          const d = c.drain!;
          c.drain = undefined;
          d();
        }
      } else if (r < 0.9) await turn();
      else await new Promise((resolve) => setTimeout(resolve, 1));
    }
    // Let everything drain: sockets empty, queued turns run, until nobody is behind.
    const tail = st.tail;
    for (let i = 0; i < 10_000; i++) {
      for (const c of clients) {
        if (c.drain && !c.closed) { const d = c.drain; c.drain = undefined; d(); }
      }
      await turn();
      if (clients.every((c) => c.closed || c.got.length === Math.max(0, tail - c.start))) break;
    }
    try {
      for (const [i, c] of clients.entries()) {
        const want = Array.from({ length: (c.closed ? c.got.length : Math.max(0, tail - c.start)) }, (_, k) => `r${c.start + k}`);
        assert.deepEqual(c.got, want, `subscriber ${i} (from ${c.start}${c.closed ? ', closed' : ''})`);
        assert.equal(c.writesWhileFull, 0, `subscriber ${i}: written while its socket was full, before the drain`);
      }
    } finally {
      for (const end of ends) end();
    }
    assert.equal(st.subscribers, 0, 'every subscription, the cohort\'s own included, is closed');
  });
}

test('cohort: a subscriber whose cursor the stream has not reached does not hold back those at the tail', async () => {
  const st = stream();
  commit(st, 2);
  const ahead = client(5, () => 1, 0); // rand() 1: its socket never fills
  const atTail = client(2, () => 1, 0);
  // The one ahead is caught up first (nothing to send it yet), so the stream's cohort starts with it.
  const ends = [
    pumpSse(ahead.sink, new LiveSubscription(st, 5, memReader, () => undefined), false, {}),
    pumpSse(atTail.sink, new LiveSubscription(st, 2, memReader, () => undefined), false, {}),
  ];
  try {
    for (let i = 0; i < 5; i++) await turn();
    // Each batch reaches the one at the tail before the stream reaches the other's cursor.
    commit(st, 1); // [2, 3)
    for (let i = 0; i < 50 && atTail.got.length < 1; i++) await turn();
    assert.deepEqual(atTail.got, ['r2']);
    commit(st, 2); // [3, 5)
    for (let i = 0; i < 50 && atTail.got.length < 3; i++) await turn();
    assert.deepEqual(atTail.got, ['r2', 'r3', 'r4']);
    assert.deepEqual(ahead.got, [], 'nothing below its cursor');
    commit(st, 2); // [5, 7)
    for (let i = 0; i < 50 && atTail.got.length < 5; i++) await turn();
    assert.deepEqual(atTail.got, ['r2', 'r3', 'r4', 'r5', 'r6'], 'the one at the tail gets every batch as it commits');
    for (let i = 0; i < 50 && ahead.got.length < 2; i++) await turn();
    assert.deepEqual(ahead.got, ['r5', 'r6'], 'the one ahead starts where it asked');
  } finally {
    for (const end of ends) end();
  }
  assert.equal(st.subscribers, 0);
});

test('cohort: a stream deleted while a round is being written gets no more of it: every subscriber ends with the error event', async () => {
  const st = stream();
  commit(st, 1);
  // More subscribers than a turn serves (SSE_SOCKETS_PER_TURN_MAX, 64), so the round spans turns.
  const { clients, writes, ends } = subscribedFrom(st, 1, 400);
  try {
    for (let i = 0; i < 5; i++) await turn();
    commit(st, 1); // the round for [1, 2) starts; one turn serves part of it
    await turn();
    const servedBefore = clients.filter((c) => c.got.length === 1).length;
    assert.ok(servedBefore > 0 && servedBefore < clients.length, `the round is under way (${servedBefore} served)`);
    st.deleted = true; // as Star deletes a stream: flagged, then woken
    st.wake();
    for (let i = 0; i < 50; i++) await turn();
    assert.equal(clients.filter((c) => c.got.length === 1).length, servedBefore, 'nobody got the round after the delete');
    for (const [i, w] of writes.entries()) assert.match(w.at(-1) ?? '', /^event: error\n/, `subscriber ${i} ended with the error event`);
  } finally {
    for (const end of ends) end();
  }
  assert.equal(st.subscribers, 0);
});

test('a stream whose lease moves to another star ends every subscriber\'s stream with no error frame (spec: Events, rule 5); a trim under the cursor still sends one', async () => {
  const st = stream();
  commit(st, 1);
  const { clients, writes, ends } = subscribedFrom(st, 1, 100);
  try {
    for (let i = 0; i < 5; i++) await turn();
    commit(st, 1);
    for (let i = 0; i < 5; i++) await turn();
    assert.ok(clients.every((c) => c.got.length === 1), 'every subscriber had the batch before the move');
    // As Star gives up a stream whose lease another star took (evictState, then dropStream): flagged
    // moved and dropped, then woken.
    st.evicted = true;
    st.deleted = true;
    st.wake();
    for (let i = 0; i < 50; i++) await turn();
    assert.ok(clients.every((c) => c.sink.closed), 'every stream ended');
    for (const [i, w] of writes.entries()) assert.ok(!w.some((x) => x.startsWith('event: error')), `subscriber ${i} got an error frame: ${w.at(-1)}`);
  } finally {
    for (const end of ends) end();
  }

  // The control: a trim under the cursor is an end a reconnect would meet again, so it says why.
  const trimmed = stream();
  commit(trimmed, 3);
  trimmed.meta.trim_seq = 2; // trimmed past the cursor before it is read
  const control = subscribedFrom(trimmed, 0, 1);
  try {
    for (let i = 0; i < 20; i++) await turn();
    assert.match(control.writes[0].at(-1) ?? '', /^event: error\n/);
  } finally { for (const end of control.ends) end(); }
});

/** Three caught-up subscribers of a stream holding one record (in its cohort, once the turns ran),
 *  with a round writer or written through deliver(); `run` acts, then every pump ends. */
async function threeCaughtUp(withRound: boolean, run: (st: StreamState, cs: Client[]) => Promise<void>): Promise<void> {
  const st = stream();
  commit(st, 1);
  const cs = [0, 1, 2].map(() => client(st.tail, () => 1, 0, withRound));
  const ends = cs.map((x) => pumpSse(x.sink, new LiveSubscription(st, st.tail, memReader, () => undefined), false, { heartbeatMs: 1e9 }));
  try {
    for (let i = 0; i < 5; i++) await turn();
    await run(st, cs);
  } finally {
    for (const end of ends) end();
  }
}

/** Runs `count` event-loop turns. */
async function turns(count: number): Promise<void> {
  for (let i = 0; i < count; i++) await turn();
}

for (const withRound of [true, false]) {
  const how = withRound ? 'round writer' : 'deliver';
  test(`cohort: a served subscriber that goes away while another is written leaves the rest their round (${how})`, async () => {
    // A's leaving moves the list's last, unserved member (C) into A's slot before B's; C must still
    // be written this round (review of stop 49: the round writer's path counted it as served).
    await threeCaughtUp(withRound, async (st, [a, b, c]) => {
      let once = true;
      b.onWrite = () => { if (once) { once = false; a.close(); } };
      commit(st, 1);
      await turns(20);
      assert.deepEqual(b.got, ['r1']);
      assert.deepEqual(c.got, ['r1'], 'C gets the batch in the round it was committed');
    });
  });

  test(`cohort: a subscriber that goes away while it is written leaves the others every batch (${how})`, async () => {
    await threeCaughtUp(withRound, async (st, [a, b, c]) => {
      let once = true;
      a.onWrite = () => { if (once) { once = false; a.close(); } };
      commit(st, 1);
      await turns(20);
      commit(st, 1);
      await turns(20);
      assert.deepEqual(b.got, ['r1', 'r2']);
      assert.deepEqual(c.got, ['r1', 'r2']);
    });
  });
}
