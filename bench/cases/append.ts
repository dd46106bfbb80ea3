// Append throughput and ack latency: every cell of the matrix against a real svcd, closed loop,
// all producers of a cell appending to one shared stream.
import type { BenchConfig } from '../lib/config.ts';
import { startLoadgen, type Loadgen } from '../lib/loadgen.ts';
import { cellKey, type AppendCell, type Report } from '../lib/report.ts';
import { startSvcd, type Svcd } from '../lib/svcd.ts';
import { appendBody, appendCells, streamKeyOf } from './cells.ts';

const BUCKET = 'bench';

async function runCell(cfg: BenchConfig, svcd: Svcd, loadgen: Loadgen, cell: AppendCell, report: Report): Promise<void> {
  const key = streamKeyOf(cell);
  await svcd.createStream(BUCKET, key);
  const m = await loadgen.run({
    host: svcd.host, port: svcd.port, conns: cell.producers, warmupMs: cfg.warmupMs, measureMs: cfg.measureMs,
    work: {
      kind: 'append', paths: [`/v1/streams/${BUCKET}/${key}/records`], body: appendBody(cell.recordBytes, cell.batch),
      recordsPerRequest: cell.batch, recordBytes: cell.recordBytes, checkSpan: true,
    },
  }, svcd.pid);
  report.append.set(cellKey(cell), m);
  if (m.unanswered > 0 || m.requests === 0) report.notes.push(`append ${cellKey(cell)}: ${m.requests} answers in the window, ${m.unanswered} requests never answered`);
  if (m.errors > 0) report.notes.push(`append ${cellKey(cell)}: ${m.errors} errors (${JSON.stringify(m.statuses)}), first: ${m.firstError}`);
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
