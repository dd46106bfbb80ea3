// The disk floor: 4 KiB append + fdatasync, timed pair by pair with synchronous calls, on the
// filesystem that holds svcd's data dirs (the OS temp dir, where the bench's servers keep theirs).
import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { newHistogram, recordNs, type Histogram } from '../lib/hist.ts';
import { removeDir, tempDir } from '../../test/helpers/server.ts';

export interface FsyncFloor {
  ops: number;
  opsPerS: number;
  hist: Histogram;
  dir: string;
}

export function measureFdatasync(opts: { blockBytes: number; durationMs: number; opsMax: number }): FsyncFloor {
  const dir = tempDir('svcd-bench-fsync-');
  const file = join(dir, 'floor.dat');
  const block = Buffer.alloc(opts.blockBytes, 0x61);
  const hist = newHistogram();
  const fd = openSync(file, 'a');
  let ops = 0;
  try {
    // A few unmeasured pairs first: the first extents of a new file cost more.
    for (let i = 0; i < 20; i++) { writeSync(fd, block); fdatasyncSync(fd); }
    const start = performance.now();
    while (ops < opts.opsMax && performance.now() - start < opts.durationMs) {
      const s = process.hrtime.bigint();
      writeSync(fd, block);
      fdatasyncSync(fd);
      recordNs(hist, Number(process.hrtime.bigint() - s));
      ops++;
    }
    const elapsedMs = performance.now() - start;
    return { ops, opsPerS: (ops / elapsedMs) * 1000, hist, dir };
  } finally {
    closeSync(fd);
    removeDir(dir);
  }
}
