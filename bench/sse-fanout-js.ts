// The SSE fan-out's own JavaScript cost per delivery, without sockets: SUBS subscribers (default
// 16,384) over STREAMS streams (default 16) of an in-memory star state, sinks that take every write,
// BATCHES batches committed round-robin over the streams, each delivered to every subscriber of its
// stream through the real pump, cohort and fan-out turns. Prints CPU µs per delivery. What the kernel
// and uWS add per socket write (about 10 µs here) is left out on purpose: this is the part a change to
// the fan-out's code can move. `npx tsx bench/sse-fanout-js.ts`
import type { SseSink } from '../src/api/exchange.ts';
import { pumpSse } from '../src/api/sse.ts';
import { StreamState, heldBatch } from '../src/core/stream-state.ts';
import { LiveSubscription } from '../src/core/subscription.ts';
import type { PageReader } from '../src/core/page-reader.ts';
import { DEFAULT_BUCKET_CONFIG, streamDefaultsOf } from '../src/core/types.ts';
import { encodeBatch, sealFrame } from '../src/storage/format/record-codec.ts';

const SUBS = Number(process.env.SUBS ?? 16_384);
const STREAMS = Number(process.env.STREAMS ?? 16);
const BATCHES = Number(process.env.BATCHES ?? 400);
const RECORDS_PER_BATCH = 10;

function stream(i: number): StreamState {
  const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  return new StreamState({
    stream_id: id, bucket: 'b', key: `k${i}`, config: {}, created_at_unix_ms: 0, creation_token: '', fencing_token: '',
    trim_seq: 0, settled_end_seq: 0, settled_end_ts: 0, segments: [],
  }, streamDefaultsOf(DEFAULT_BUCKET_CONFIG));
}

let delivered = 0;
function sink(): SseSink {
  return {
    closed: false,
    write() { delivered++; return true; },
    cork(fn) { fn(); },
    onWritable() { /* never full */ },
    onClose() { /* never closed by the client */ },
    end() { /* kept open */ },
    destroy() { /* kept open */ },
  };
}

function commit(st: StreamState): void {
  const first = st.tail;
  const records = Array.from({ length: RECORDS_PER_BATCH }, () => ({ timestamp_ms: 1, headers: [], body: Buffer.alloc(100, 120) }));
  const frame = encodeBatch(st.meta.stream_id, first, records);
  sealFrame(frame, 0, frame.length);
  st.commitBatch(heldBatch({ firstSeq: first, count: RECORDS_PER_BATCH, frame, maxTs: 1, contentBytes: 1000 }, 1));
  st.wake();
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function main(): Promise<void> {
  const streams = Array.from({ length: STREAMS }, (_, i) => stream(i));
  const ends: (() => void)[] = [];
  for (let i = 0; i < SUBS; i++) {
    const st = streams[i % STREAMS];
    ends.push(pumpSse(sink(), new LiveSubscription(st, 0, {} as PageReader, () => undefined), false, {}));
  }
  for (let i = 0; i < 20; i++) await turn(); // every pump caught up and waiting at the tail
  const perBatch = SUBS / STREAMS;
  for (const pass of ['warm-up', 'measured']) {
    delivered = 0;
    const cpu0 = process.cpuUsage();
    for (let b = 0; b < BATCHES; b++) {
      commit(streams[b % STREAMS]);
      // A batch every other turn or so, as under load: rounds overlap.
      if (b % 2 === 1) await turn();
    }
    while (delivered < BATCHES * perBatch) await turn();
    const c = process.cpuUsage(cpu0);
    if (pass === 'measured') {
      console.log(`${SUBS} subscribers over ${STREAMS} streams, ${BATCHES} batches: ${delivered} deliveries, ${((c.user + c.system) / delivered).toFixed(3)} CPU µs a delivery (JS only, no sockets)`);
    }
  }
  for (const end of ends) end();
}

void main();
