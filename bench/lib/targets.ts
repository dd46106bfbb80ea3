// The performance targets, printed next to what was measured. They are never asserted: the bench
// reports, it does not fail.
import { pctMs } from './hist.ts';
import { fix, int, ms } from './format.ts';
import { cellKey, type Report } from './report.ts';
import { BASELINE_FDATASYNC_4K } from '../cases/peers.ts';
import { clusterTargets } from '../cases/cluster.ts';

export interface TargetRow {
  target: string;
  measured: string;
  /** true met, false missed, undefined not measured in this run. */
  met: boolean | undefined;
}

export function evaluateTargets(r: Report): TargetRow[] {
  const rows: TargetRow[] = [];
  const one = r.append.get(cellKey({ recordBytes: 100, batch: 1, producers: 1 }));
  const fsyncP50 = r.fsync ? pctMs(r.fsync.hist, 50) : BASELINE_FDATASYNC_4K.p50Ms;
  const fsyncSrc = r.fsync ? 'this run' : 'perf-baselines.md';
  if (one) {
    const p50 = pctMs(one.hist, 50);
    rows.push({
      target: 'ack p50 at 1 producer (100 B, single record) within 1 ms of fdatasync p50',
      measured: `ack p50 ${ms(p50)} ms vs fdatasync p50 ${ms(fsyncP50)} ms (${fsyncSrc}): ${p50 >= fsyncP50 ? '+' : '−'}${ms(Math.abs(p50 - fsyncP50))} ms`,
      met: p50 - fsyncP50 <= 1,
    });
  } else rows.push({ target: 'ack p50 at 1 producer within 1 ms of fdatasync p50', measured: 'not run', met: undefined });

  const c64 = r.append.get(cellKey({ recordBytes: 100, batch: 1, producers: 64 }));
  const rate64 = c64 ? (c64.records / c64.elapsedMs) * 1000 : NaN;
  rows.push({ target: '≥ 45,000 single-record appends/s at 64 producers (100 B)', measured: c64 ? `${int(rate64)} /s` : 'not run', met: c64 ? rate64 >= 45_000 : undefined });

  const b64 = r.append.get(cellKey({ recordBytes: 100, batch: 100, producers: 64 }));
  const rateB = b64 ? (b64.records / b64.elapsedMs) * 1000 : NaN;
  rows.push({ target: '≥ 500,000 records/s of 100 B, 64 producers × 100-record batches', measured: b64 ? `${int(rateB)} records/s` : 'not run', met: b64 ? rateB >= 500_000 : undefined });

  const sse = r.sse;
  const p99 = sse ? pctMs(sse.fromAck, 99) : NaN;
  const all = sse ? sse.complete === sse.subscribers && sse.delivered === sse.expected && sse.duplicates === 0 : false;
  rows.push({
    target: `SSE, ${sse ? int(sse.subscribers) : 'N'} subscribers on one stream: p99 ≤ 50 ms from ack (and every subscriber gets every batch once)`,
    measured: sse ? `p99 ${ms(p99)} ms; ${int(sse.complete)}/${int(sse.subscribers)} subscribers complete (${fix((sse.delivered / sse.expected) * 100, 2)} % delivered)` : 'not run',
    met: sse ? p99 <= 50 && all : undefined,
  });
  const ackP99 = sse ? pctMs(sse.ackHist, 99) : NaN;
  rows.push({
    target: 'appends during SSE fan-out: ack p99 ≤ 10 ms',
    measured: sse ? `ack p99 ${ms(ackP99)} ms with ${int(sse.subscribers)} subscribers` : 'not run',
    met: sse ? ackP99 <= 10 : undefined,
  });
  if (r.cluster) rows.push(...clusterTargets(r.cluster));
  return rows;
}
