// `svc bench`: append and read throughput against a real stream, with ack latency (submit to durable
// ack) and end-to-end latency (submit to delivery through a live subscription) percentiles, recorded
// with hdr-histogram-js. Modes: the batching producer over HTTP (default), over a gRPC session, or a
// plain loop of one-record appends (the baseline a producer is measured against).

import type * as hdr from 'hdr-histogram-js';
import { performance } from 'node:perf_hooks';
import { parseStreamAddress, utf8DecodeLossy, type AppendRecord, type Producer, type SvcClient } from '../../../client/index.ts';
import { UsageError } from '../args.ts';
import type { Command } from '../command.ts';
import { PRODUCER_FLAGS, producerOptionsOf } from '../producer-flags.ts';

/** Ack latency is recorded for one record in this many (a promise per record would slow the run). */
const ACK_SAMPLE_EVERY = 10;
/** Longest wait for the subscription to deliver the last record after the appends finished. */
const DELIVERY_WAIT_MS_MAX = 60_000;
/** Latencies are recorded in microseconds, up to a minute. */
const LATENCY_US_MAX = 60_000_000;
const MODES = ['producer', 'grpc', 'plain'] as const;
type Mode = (typeof MODES)[number];

/** Loaded by the command itself: every other `svc` command starts without it. */
async function histograms(): Promise<() => hdr.Histogram> {
  const { build } = await import('hdr-histogram-js');
  return () => build({ lowestDiscernibleValue: 1, highestTrackableValue: LATENCY_US_MAX, numberOfSignificantValueDigits: 3 });
}

/** A body of `bytes` bytes (at least the stamp) that starts with its submit time in ms (performance.now). */
function body(bytes: number, sentMs: number): string {
  const stamp = `${sentMs.toFixed(3)}:`;
  return stamp.length >= bytes ? stamp : stamp + 'x'.repeat(bytes - stamp.length);
}

function pct(h: hdr.Histogram): { p50_ms: number; p90_ms: number; p99_ms: number; max_ms: number } {
  // A percentile is the highest value equivalent to its sample (3 significant digits), which can sit
  // above the exact maximum: never print one above the largest sample.
  const ms = (us: number): number => Math.round(Math.min(us, h.maxValue)) / 1000;
  return { p50_ms: ms(h.getValueAtPercentile(50)), p90_ms: ms(h.getValueAtPercentile(90)), p99_ms: ms(h.getValueAtPercentile(99)), max_ms: ms(h.maxValue) };
}

export const bench: Command = {
  name: 'bench',
  usage: 'svc://BUCKET/KEY [--records N] [--record-bytes B] [--mode producer|grpc|plain]',
  summary: 'measure append and read throughput and latency on a stream',
  details: [
    'Appends N records of B bytes (producer: the batching producer over HTTP; grpc: over a gRPC',
    'session, needs --grpc; plain: one awaited HTTP append per record, the baseline), while a live',
    'subscription receives them; then reads them back. Prints records/s and MB/s for appends and',
    'reads, and ack and end-to-end latency percentiles. The stream must exist (its tail is read',
    'first, and the subscription needs it): create it with svc create. Nothing here is a pass/fail check.',
  ].join('\n'),
  flags: [
    { name: 'records', value: 'N', help: 'records to append (default 100000)' },
    { name: 'record-bytes', value: 'B', help: 'body size (default 100)' },
    { name: 'mode', value: MODES.join('|'), help: 'how to append (default producer)' },
    ...PRODUCER_FLAGS,
    { name: 'match-seq-num', value: 'tail', help: 'pin batches with match_seq_num from the tail (HTTP pipelining, exact retries)' },
  ],
  async run(ctx) {
    const [text] = ctx.args.expect(1, 1, 'one stream address: svc://BUCKET/KEY');
    const addr = parseStreamAddress(text);
    const n = ctx.args.int('records') ?? 100_000;
    const size = ctx.args.int('record-bytes') ?? 100;
    const mode = (ctx.args.str('mode') ?? 'producer') as Mode;
    if (!MODES.includes(mode)) throw new UsageError(`--mode must be one of ${MODES.join(', ')}`);
    const match = ctx.args.str('match-seq-num');
    if (match !== undefined && match !== 'tail') throw new UsageError('--match-seq-num takes tail here');
    const matchTail = match === 'tail';
    // The gRPC address is checked before anything starts: a usage error must not leave the
    // subscription below open (it kept the process alive).
    const grpc = mode === 'grpc' ? await ctx.grpcClient() : undefined;
    const c = ctx.client();
    const newHist = await histograms();
    const start = (await c.checkTail(addr)).seq_num;

    // End-to-end: a live subscription from the current tail, timing each record it receives.
    const e2e = newHist();
    let delivered = 0;
    const sub = c.subscribe(addr, { start: { seqNum: start } });
    let allDelivered!: () => void;
    const deliveredAll = new Promise<void>((resolve) => { allDelivered = resolve; });
    const consuming = (async () => {
      for await (const b of sub) {
        const now = performance.now();
        for (const r of b.records) {
          const sent = Number(utf8DecodeLossy(r.body.subarray(0, 24)).split(':')[0]);
          if (Number.isFinite(sent)) e2e.recordValue(Math.max(1, Math.round((now - sent) * 1000)));
        }
        delivered += b.records.length;
        if (delivered >= n) { allDelivered(); return; }
      }
    })();
    consuming.catch(() => {});

    const ack = newHist();
    const t0 = performance.now();
    try {
      if (mode === 'plain') await plainLoop(c, addr, n, size, ack);
      else {
        const opts = {
          ...producerOptionsOf(ctx.args),
          ...(matchTail ? { matchSeqNum: 'tail' as const } : {}),
        };
        await produce(grpc ? grpc.producer(addr, opts) : c.producer(addr, opts), n, size, ack);
      }
    } catch (err) {
      sub.close(); // an open subscription would keep the process alive after the error
      throw err;
    }
    const appendS = (performance.now() - t0) / 1000;
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), DELIVERY_WAIT_MS_MAX).unref());
    const got = await Promise.race([deliveredAll.then(() => 'ok' as const), timeout]);
    sub.close();

    const t1 = performance.now();
    let read = 0;
    for await (const page of c.readPages(addr, { start: { seqNum: start }, limit: n })) read += page.records.length;
    const readS = (performance.now() - t1) / 1000;

    const result = {
      mode, records: n, record_bytes: size, match_seq_num: matchTail,
      append: { seconds: +appendS.toFixed(3), records_per_s: Math.round(n / appendS), mb_per_s: +((n * size) / appendS / 1e6).toFixed(2) },
      ack_latency: pct(ack),
      end_to_end_latency: { ...pct(e2e), delivered, complete: got === 'ok' },
      read: { records: read, seconds: +readS.toFixed(3), records_per_s: Math.round(read / readS), mb_per_s: +((read * size) / readS / 1e6).toFixed(2) },
    };
    if (ctx.json) { await ctx.out.line(JSON.stringify(result)); return; }
    const lat = (l: { p50_ms: number; p90_ms: number; p99_ms: number; max_ms: number }): string => `p50 ${l.p50_ms} ms  p90 ${l.p90_ms} ms  p99 ${l.p99_ms} ms  max ${l.max_ms} ms`;
    await ctx.out.line(`mode ${mode}${matchTail ? ' (match_seq_num)' : ''}: ${n} records of ${size} bytes`);
    await ctx.out.line(`append      ${result.append.records_per_s} rec/s  ${result.append.mb_per_s} MB/s  (${result.append.seconds} s)`);
    await ctx.out.line(`ack         ${lat(result.ack_latency)}`);
    await ctx.out.line(`end-to-end  ${lat(result.end_to_end_latency)}${got === 'ok' ? '' : `  (only ${delivered} delivered)`}`);
    await ctx.out.line(`read        ${result.read.records_per_s} rec/s  ${result.read.mb_per_s} MB/s  (${result.read.seconds} s)`);
  },
};

async function produce(p: Producer, n: number, size: number, ack: hdr.Histogram): Promise<void> {
  for (let i = 0; i < n; i++) {
    const sent = performance.now();
    const t = await p.submit({ body: body(size, sent) });
    if (i % ACK_SAMPLE_EVERY === 0) void t.ack().then(() => ack.recordValue(Math.max(1, Math.round((performance.now() - sent) * 1000))), () => {});
  }
  await p.close();
}

async function plainLoop(c: SvcClient, addr: ReturnType<typeof parseStreamAddress>, n: number, size: number, ack: hdr.Histogram): Promise<void> {
  for (let i = 0; i < n; i++) {
    const sent = performance.now();
    const rec: AppendRecord = { body: body(size, sent) };
    await c.append(addr, [rec]);
    ack.recordValue(Math.max(1, Math.round((performance.now() - sent) * 1000)));
  }
}
