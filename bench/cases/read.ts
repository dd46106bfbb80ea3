// Read throughput from settled history: write a 100 B stream and then a 4 KiB stream so the first
// 64 MiB WAL file (all of the 100 B stream, the start of the 4 KiB one) seals and settles into
// segments, wait until that WAL file is gone, then read pages of 1000 records. The newest 4 KiB
// records (still in the WAL and in memory) are read too, for contrast.
import type { BenchConfig } from '../lib/config.ts';
import { startLoadgen, type Loadgen } from '../lib/loadgen.ts';
import type { Report } from '../lib/report.ts';
import { withSvcd, type Svcd } from '../lib/svcd.ts';
import { appendBody } from './cells.ts';

const BUCKET = 'bench';
const PAGE_RECORDS = 1000;
/** 4 KiB records read from the settled head of the stream (well inside the first 64 MiB WAL file). */
const SETTLED_4K_RECORDS = 5000;
const READERS = [1, 4] as const;
const SETTLE_WAIT_MS_MAX = 60_000;
const FILL_CONNS = 4;
const FILL_CAP_MS = 60_000;

async function fill(svcd: Svcd, loadgen: Loadgen, key: string, recordBytes: number, batch: number, records: number): Promise<void> {
  await svcd.createStream(BUCKET, key);
  const m = await loadgen.run({
    host: svcd.host, port: svcd.port, conns: FILL_CONNS, warmupMs: 0, measureMs: FILL_CAP_MS, stopAfterRecords: records,
    work: { kind: 'append', paths: [`/v1/streams/${BUCKET}/${key}/records`], body: appendBody(recordBytes, batch), recordsPerRequest: batch, recordBytes, checkSpan: true },
  });
  if (m.errors > 0) throw new Error(`read fill ${key}: ${m.errors} errors, first: ${m.firstError}`);
  if (m.records < records) throw new Error(`read fill ${key}: only ${m.records} of ${records} records acked (${m.unanswered} requests unanswered)`);
}

async function waitSettled(svcd: Svcd, firstWal: number | undefined, log: (s: string) => void): Promise<boolean> {
  const t0 = performance.now();
  while (performance.now() - t0 < SETTLE_WAIT_MS_MAX) {
    const files = svcd.walFiles();
    if (firstWal === undefined || files.length === 0 || files[0] > firstWal) {
      log(`read: first WAL file settled after ${Math.round(performance.now() - t0)} ms (WAL files now ${files.join(',') || 'none'})`);
      return true;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

export async function runRead(cfg: BenchConfig, report: Report, log: (s: string) => void): Promise<void> {
  const loadgen = await startLoadgen();
  try {
    await withSvcd({ profileDir: cfg.profileDir }, async (svcd) => {
      const firstWal = svcd.walFiles()[0];
      log(`read: writing ${cfg.readFill100B} × 100 B then ${cfg.readFill4KiB} × 4 KiB records`);
      await fill(svcd, loadgen, 'r100', 100, 1000, cfg.readFill100B);
      await fill(svcd, loadgen, 'r4k', 4096, 50, cfg.readFill4KiB);
      const tail100 = await svcd.tail(BUCKET, 'r100');
      const tail4k = await svcd.tail(BUCKET, 'r4k');
      if (!(await waitSettled(svcd, firstWal, log))) report.notes.push('read: the first WAL file had not settled; "settled" rows may read the WAL');
      const settled4k = Math.min(SETTLED_4K_RECORDS, tail4k);
      const ranges: { label: string; key: string; recordBytes: number; range: [number, number] }[] = [
        { label: 'settled', key: 'r100', recordBytes: 100, range: [0, tail100] },
        { label: 'settled', key: 'r4k', recordBytes: 4096, range: [0, settled4k] },
        { label: 'recent (WAL, unsettled)', key: 'r4k', recordBytes: 4096, range: [Math.max(0, tail4k - SETTLED_4K_RECORDS), tail4k] },
      ];
      for (const r of ranges) {
        for (const readers of READERS) {
          log(`read: ${r.label} ${r.key} [${r.range[0]}, ${r.range[1]}) × ${readers} readers`);
          const m = await loadgen.run({
            host: svcd.host, port: svcd.port, conns: readers, warmupMs: Math.min(500, cfg.warmupMs), measureMs: cfg.readMeasureMs,
            work: { kind: 'read', path: `/v1/streams/${BUCKET}/${r.key}/records`, fromSeq: r.range[0], toSeq: r.range[1], pageRecords: PAGE_RECORDS, recordBytes: r.recordBytes },
          }, svcd.pid);
          if (m.errors > 0) report.notes.push(`read ${r.key} ×${readers}: ${m.errors} errors, first: ${m.firstError}`);
          report.read.push({ label: r.label, recordBytes: r.recordBytes, readers, range: r.range, m });
        }
      }
    });
  } finally {
    await loadgen.stop();
  }
}
