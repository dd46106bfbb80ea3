// The append matrix: record size × records per request × concurrent producers, and the request
// body each cell sends.
import { cellKey, type AppendCell } from '../lib/report.ts';

export const RECORD_SIZES_BYTES = [100, 4096] as const;
export const BATCH_SIZES = [1, 100] as const;
export const PRODUCER_COUNTS = [1, 16, 64] as const;

/** Every cell, or those named in `only` (cellKey form). */
export function appendCells(only: ReadonlySet<string> = new Set()): AppendCell[] {
  const cells: AppendCell[] = [];
  for (const recordBytes of RECORD_SIZES_BYTES) {
    for (const batch of BATCH_SIZES) {
      for (const producers of PRODUCER_COUNTS) {
        const c = { recordBytes, batch, producers };
        if (only.size === 0 || only.has(cellKey(c))) cells.push(c);
      }
    }
  }
  return cells;
}

/** `{"records":[{"body":"xxx…"},…]}` with `batch` records of `recordBytes` ASCII bytes each. */
export function appendBody(recordBytes: number, batch: number): string {
  const rec = JSON.stringify({ body: 'x'.repeat(recordBytes) });
  return `{"records":[${Array.from({ length: batch }, () => rec).join(',')}]}`;
}

export const streamKeyOf = (c: AppendCell): string => `a-${c.recordBytes}-b${c.batch}-p${c.producers}`;
