// Append throughput and ack latency: every cell of the matrix against a real svcd, closed loop,
// all producers of a cell appending to one shared stream.
import type { BenchConfig } from '../lib/config.ts';
import { startLoadgen, type Loadgen, type Measured } from '../lib/loadgen.ts';
import { cellKey, type AppendCell, type Report } from '../lib/report.ts';
import { startSvcd, type Svcd } from '../lib/svcd.ts';
import { appendBody, appendCells, streamKeyOf } from './cells.ts';

const BUCKET = 'bench';

/** One cell against a running svcd; problems go to `notes`. The peers case measures svcd's
 *  100 B / 1 / 64 cell through this too when the append case did not run it. */
export async function measureAppendCell(cfg: BenchConfig, svcd: Svcd, loadgen: Loadgen, cell: AppendCell, notes: string[]): Promise<Measured> {
  const key = streamKeyOf(cell);
  await svcd.createStream(BUCKET, key);
  const m = await loadgen.run({
    host: svcd.host, port: svcd.port, conns: cell.producers, warmupMs: cfg.warmupMs, measureMs: cfg.measureMs,
    work: {
      kind: 'append', paths: [`/v1/streams/${BUCKET}/${key}/records`], body: appendBody(cell.recordBytes, cell.batch),
      recordsPerRequest: cell.batch, recordBytes: cell.recordBytes, checkSpan: true,
    },
  }, svcd.pid);
  if (m.unanswered > 0 || m.requests === 0) notes.push(`append ${cellKey(cell)}: ${m.requests} answers in the window, ${m.unanswered} requests never answered`);
  if (m.errors > 0) notes.push(`append ${cellKey(cell)}: ${m.errors} errors (${JSON.stringify(m.statuses)}), first: ${m.firstError}`);
  return m;
}

async function runCell(cfg: BenchConfig, svcd: Svcd, loadgen: Loadgen, cell: AppendCell, report: Report): Promise<void> {
  report.append.set(cellKey(cell), await measureAppendCell(cfg, svcd, loadgen, cell, report.notes));
}

export async function runAppend(cfg: BenchConfig, report: Report, log: (s: string) => void): Promise<void> {
  const loadgen = await startLoadgen();
  let shared: Svcd | undefined;
  try {
    for (const cell of appendCells(cfg.cells)) {
      log(`append: ${cellKey(cell)} (record bytes/batch/producers)`);
      if (cfg.freshServerPerCell) {
        const svcd = await startSvcd({ profileDir: cfg.profileDir });
        try { await runCell(cfg, svcd, loadgen, cell, report); } finally { await svcd.stop(); }
      } else {
        shared ??= await startSvcd({ profileDir: cfg.profileDir });
        await runCell(cfg, shared, loadgen, cell, report);
      }
    }
  } finally {
    await shared?.stop();
    await loadgen.stop();
  }
}
