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

  rows.push(...sseTargets(r));
  if (r.cluster) rows.push(...clusterTargets(r.cluster));
  return rows;
}

/** Issue 13: the one-stream cell's p99 ≤ 50 ms, the spread cell's ≤ 100 ms, each with every batch
 *  delivered once; appends during either fan-out acked at p99 ≤ 10 ms. */
function sseTargets(r: Report): TargetRow[] {
  const rows: TargetRow[] = [];
  const floor = r.sse.find((s) => s.cell === 'floor');
  const floorNote = floor ? `; floor (bare uWS, ${int(floor.subscribers)} subscribers) from send p99 ${ms(pctMs(floor.fromSend, 99))} ms` : '';
  for (const [cell, p99Max, what] of [['one', 50, 'on one stream'], ['spread', 100, 'across streams']] as const) {
    const s = r.sse.find((x) => x.cell === cell);
    const p99 = s?.fromAck ? pctMs(s.fromAck, 99) : NaN;
    const all = s ? s.complete === s.subscribers && s.delivered === s.expected && s.duplicates === 0 && s.misrouted === 0 : false;
    rows.push({
      target: `SSE, ${s ? int(s.subscribers) : 'N'} subscribers ${what}${s && s.streams > 1 ? ` (${s.streams})` : ''}: p99 ≤ ${p99Max} ms from ack (and every subscriber gets every batch once)`,
      measured: s ? `p99 ${ms(p99)} ms; ${int(s.complete)}/${int(s.subscribers)} subscribers complete (${fix((s.delivered / s.expected) * 100, 2)} % delivered)${cell === 'one' ? floorNote : ''}` : 'not run',
      met: s ? p99 <= p99Max && all : undefined,
    });
    const ackP99 = s?.ackHist ? pctMs(s.ackHist, 99) : NaN;
    rows.push({
      target: `appends during SSE fan-out ${what}: ack p99 ≤ 10 ms`,
      measured: s ? `ack p99 ${ms(ackP99)} ms with ${int(s.subscribers)} subscribers` : 'not run',
      met: s ? ackP99 <= 10 : undefined,
    });
  }
  return rows;
}
