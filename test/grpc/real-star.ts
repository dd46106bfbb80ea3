// Builds the real core (Star over the fs object store, local metadata, the WAL flusher worker and the
// worker pool) in a temp data dir, the way src/main.ts composes it, minus the HTTP listener, so the
// gRPC adapter tests can run against the real StreamService.
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { META_JOURNAL_ENTRIES_MAX } from '../../src/config/limits.ts';
import { Star } from '../../src/core/star.ts';
import { LocalMetadataStore } from '../../src/storage/metadata/local-store.ts';
import { FsObjectStore } from '../../src/storage/objects/fs-store.ts';
import { createRingBuffers, LogRingWriter } from '../../src/storage/wal/log-ring.ts';
import { removeWalFile } from '../../src/storage/wal/wal-files.ts';
import { createPool, PoolSettler } from '../../src/workers/pool.ts';

/** A small ring is plenty for tests (production sizes it by LOG_RING_BYTES). */
const TEST_RING_BYTES = 64 * 1024 * 1024;

export interface RealStar {
  star: Star;
  dataDir: string;
  stop(): Promise<void>;
}

export async function startRealStar(): Promise<RealStar> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svcd-grpc-'));
  const walDir = join(dataDir, 'wal');
  const objectsDir = join(dataDir, 'objects');
  mkdirSync(walDir, { recursive: true });
  mkdirSync(objectsDir, { recursive: true });
  const metadata = new LocalMetadataStore(join(dataDir, 'meta'), META_JOURNAL_ENTRIES_MAX);
  const state = await metadata.load();
  const ring = createRingBuffers(TEST_RING_BYTES);
  const walFileNo = 1;
  const flusher = new Worker(new URL('./ts-worker.mjs', import.meta.url), {
    workerData: {
      ring, walDir, fileNo: walFileNo,
      tsWorkerEntry: new URL('../../src/storage/wal/flusher-worker.ts', import.meta.url).href,
    },
  });
  flusher.on('error', (err) => console.error('flusher worker failed:', err));
  const pool = createPool(['--import', 'tsx']);
  const log = new LogRingWriter(ring);
  const star = new Star({
    clock: { nowMs: () => Date.now() },
    timers: {
      setTimeout: (fn, ms) => { const t = setTimeout(fn, ms); return { cancel: () => clearTimeout(t) }; },
      setInterval: (fn, ms) => { const t = setInterval(fn, ms); t.unref(); return { cancel: () => clearInterval(t) }; },
      defer: (fn) => { setImmediate(fn); },
    },
    ids: { uuid: () => randomUUID() },
    log,
    metadata,
    objects: new FsObjectStore(objectsDir),
    settler: new PoolSettler(pool, { backend: 'fs', dir: objectsDir }),
    wal: { removeFile: (n) => removeWalFile(walDir, n) },
    walFileNo,
    log_error: (msg, err) => console.error(`star: ${msg}`, err ?? ''),
  });
  star.open(state, []);
  return {
    star,
    dataDir,
    async stop() {
      await star.close();
      log.stop();
      await new Promise<void>((r) => { flusher.once('exit', () => r()); });
      await pool.destroy();
      await metadata.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
