// The SSE cohort (src/api/sse-cohort.ts): caught-up subscribers of one stream served as one. Seeded:
// subscribers join at the tail and behind it while batches commit, their sockets fill and drain at
// random, heartbeats fall between rounds, some subscribers leave; every subscriber still left must
// have received every batch from its start exactly once, in order. Ordering only, no timing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SseSink } from '../../src/api/exchange.ts';
import { pumpSse } from '../../src/api/sse.ts';
import { StreamState, heldBatch } from '../../src/core/stream-state.ts';
import { LiveSubscription } from '../../src/core/subscription.ts';
import type { PageReader } from '../../src/core/page-reader.ts';
import { DEFAULT_BUCKET_CONFIG, streamDefaultsOf } from '../../src/core/types.ts';
import { encodeBatch, sealFrame } from '../../src/storage/format/record-codec.ts';
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

interface Client {
  start: number;
  /** Record bodies received, in order. */
  got: string[];
  closed: boolean;
  sink: SseSink;
  close(): void;
  /** Its socket is full: the drain the pump waits for, fired later by the test. */
  drain: (() => void) | undefined;
}

/** A sink whose writes fill the socket with probability `fullP` (the write is kept, as uWS keeps it). */
function client(start: number, rand: () => number, fullP: number): Client {
  let onClose: (() => void) | undefined;
  const state = { closed: false };
  const c: Client = {
    start, got: [], closed: false, drain: undefined,
    sink: {
      get closed() { return state.closed; },
      write(chunk) {
        const text = String(chunk);
        for (const m of text.matchAll(/"body":"(r\d+)"/g)) c.got.push(m[1]);
        return rand() >= fullP;
      },
      cork(fn) { fn(); },
      onWritable(cb) { c.drain = cb; },
      onClose(cb) { onClose = cb; },
      end() { state.closed = true; },
      destroy() { state.closed = true; },
    },
    close() { c.closed = true; state.closed = true; onClose?.(); },
  };
  return c;
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
  test(`cohort: every subscriber gets every batch from its start once, in order (seed ${seed})`, async () => {
    const rand = makeRng(seed);
    const st = stream();
    const clients: Client[] = [];
    const boundaries = [0];
    const ends: (() => void)[] = [];
    const subscribe = (): void => {
      // Most join at the tail; some from a batch boundary behind it (they catch up alone, then join).
      // (A start inside a batch is a history read, which this in-memory stream has no reader for.)
      const start = rand() < 0.7 ? st.tail : boundaries[Math.floor(rand() * boundaries.length)];
      const c = client(start, rand, rand() < 0.3 ? 0.2 : 0);
      clients.push(c);
      const sub = new LiveSubscription(st, start, {} as PageReader, () => undefined);
      ends.push(pumpSse(c.sink, sub, false, { heartbeatMs: 1 + Math.floor(rand() * 5), stallMs: 60_000 }));
    };
    // More than a turn's SSE_SOCKETS_PER_TURN_MAX (128), so a round spans turns and batches, joins
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
      if (clients.every((c) => c.closed || c.got.length === tail - c.start)) break;
    }
    try {
      for (const [i, c] of clients.entries()) {
        const want = Array.from({ length: (c.closed ? c.got.length : tail - c.start) }, (_, k) => `r${c.start + k}`);
        assert.deepEqual(c.got, want, `subscriber ${i} (from ${c.start}${c.closed ? ', closed' : ''})`);
      }
    } finally {
      for (const end of ends) end();
    }
    assert.equal(st.subscribers, 0, 'every subscription, the cohort\'s own included, is closed');
  });
}
