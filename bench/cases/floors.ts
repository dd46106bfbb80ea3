// Floors: this disk's fdatasync latency, and a bare native uWS server answering the same append
// requests over the same load generator and connections as svcd gets.
import { measureFdatasync } from '../floors/fsync.ts';
import { startChild } from '../lib/child.ts';
import type { BenchConfig } from '../lib/config.ts';
import { startLoadgen } from '../lib/loadgen.ts';
import { cellKey, type Report } from '../lib/report.ts';
import { appendBody, appendCells } from './cells.ts';

const FSYNC_BLOCK_BYTES = 4096;

export async function runFloors(cfg: BenchConfig, report: Report, log: (s: string) => void): Promise<void> {
  log(`floors: 4 KiB append + fdatasync for ${cfg.fsyncMs} ms`);
  report.fsync = measureFdatasync({ blockBytes: FSYNC_BLOCK_BYTES, durationMs: cfg.fsyncMs, opsMax: cfg.fsyncOpsMax });

  const echo = startChild('floors/uws-echo-server.ts');
  const loadgen = await startLoadgen();
  try {
    const msg = await echo.next<{ type: string; port?: number; message?: string }>('listening', 'error');
    if (msg.type !== 'listening' || msg.port === undefined) throw new Error(`uWS echo floor did not start: ${msg.message}`);
    for (const cell of appendCells(cfg.cells)) {
      log(`floors: uWS echo ${cellKey(cell)}`);
      const m = await loadgen.run({
        host: '127.0.0.1', port: msg.port, conns: cell.producers,
        warmupMs: cfg.echoWarmupMs, measureMs: cfg.echoMeasureMs,
        work: {
          kind: 'append', paths: ['/v1/streams/bench/echo/records'], body: appendBody(cell.recordBytes, cell.batch),
          recordsPerRequest: cell.batch, recordBytes: cell.recordBytes, checkSpan: false,
        },
      }, echo.proc.pid);
      report.echo.set(cellKey(cell), m);
      if (m.errors > 0 || m.unanswered > 0) report.notes.push(`uWS echo ${cellKey(cell)}: ${m.errors} errors, ${m.unanswered} unanswered`);
    }
  } finally {
    await loadgen.stop();
    await echo.stop();
  }
}
