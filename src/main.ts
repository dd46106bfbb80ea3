// The composition root: parse config, recover metadata and the WAL, start the flusher and the worker
// pool, build the star, and serve the route table over uWS (or node:http when uWS cannot load).

import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ConfigError, helpText, loadConfig, type Config } from './config/config.ts';
import { LOG_RING_BYTES, META_JOURNAL_ENTRIES_MAX } from './config/limits.ts';
import { Star } from './core/star.ts';
import { ServiceError } from './core/errors.ts';
import type { AppendInput } from './core/types.ts';
import { Dispatcher } from './api/dispatch.ts';
import { loadNativeUws, startUwsServer } from './api/uws.ts';
import { startNodeServer } from '../native-free/http-node.ts';
import { frameTimestamps, forEachRecord, contentBytes } from './storage/format/record-codec.ts';
import { LocalMetadataStore } from './storage/metadata/local-store.ts';
import { FsObjectStore } from './storage/objects/fs-store.ts';
import { createRingBuffers, LogRingWriter } from './storage/wal/log-ring.ts';
import { recoverWal, removeWalFile } from './storage/wal/wal-files.ts';
import { createPool, PoolSettler } from './workers/pool.ts';
import type { ParseResult } from './workers/parse-task.ts';

/** Worker threads need the TypeScript loader too when we run from source. */
function workerExecArgv(): string[] {
  return ['--import', 'tsx'];
}

function logError(msg: string, err?: unknown): void {
  console.error(`svcd: ${msg}${err ? `: ${err instanceof Error ? err.stack ?? err.message : String(err)}` : ''}`);
}

export async function startStar(cfg: Config): Promise<{ port: number; engine: string; stop(): Promise<void> }> {
  const dataDir = resolve(cfg.dataDir);
  const walDir = join(dataDir, 'wal');
  const objectsDir = join(dataDir, 'objects');
  mkdirSync(walDir, { recursive: true });
  mkdirSync(objectsDir, { recursive: true });

  const metadata = new LocalMetadataStore(join(dataDir, 'meta'), META_JOURNAL_ENTRIES_MAX);
  const state = await metadata.load();
  const recovered: Parameters<Star['open']>[1] extends Iterable<infer T> ? T[] : never = [];
  const { lastFileNo, cutBytes } = recoverWal(walDir, (f) => {
    let content = 0;
    forEachRecord(f.frame, 0, 0, (r) => { content += contentBytes(r); return true; });
    recovered.push({
      fileNo: f.fileNo, streamId: f.info.streamId, firstSeq: f.info.firstSeq, count: f.info.recordCount,
      frame: f.frame, timestamps: frameTimestamps(f.frame), contentBytes: content,
    });
  });
  if (cutBytes > 0) console.error(`svcd: recovery cut a torn WAL tail of ${cutBytes} bytes`);

  const ring = createRingBuffers(LOG_RING_BYTES);
  const walFileNo = lastFileNo + 1;
  const flusher = new Worker(new URL('./storage/wal/flusher-boot.mjs', import.meta.url), {
    workerData: { ring, walDir, fileNo: walFileNo },
    execArgv: workerExecArgv(),
  });
  flusher.on('error', (err) => logError('flusher crashed', err));
  const pool = createPool(workerExecArgv());
  const objects = new FsObjectStore(objectsDir);
  const log = new LogRingWriter(ring);
  const star = new Star({
    clock: { nowMs: () => Date.now() },
    timers: {
      setTimeout: (fn, ms) => { const t = setTimeout(fn, ms); return { cancel: () => clearTimeout(t) }; },
      setInterval: (fn, ms) => { const t = setInterval(fn, ms); t.unref(); return { cancel: () => clearInterval(t) }; },
    },
    ids: { uuid: () => randomUUID() },
    log,
    metadata,
    objects,
    settler: new PoolSettler(pool, { backend: 'fs', dir: objectsDir }),
    wal: { removeFile: (n) => removeWalFile(walDir, n) },
    walFileNo,
    readRecordsMax: cfg.maxReadRecords,
    readBytesMax: cfg.maxReadBytes,
    log_error: logError,
  });
  star.open(state, recovered);

  const parseOffThread = async (body: Buffer): Promise<AppendInput> => {
    const r = (await pool.run(body, { name: 'parseAppend' })) as ParseResult;
    if (!r.ok) throw new ServiceError(r.code, r.message);
    return r.input;
  };
  const dispatcher = new Dispatcher({ svc: star, parseOffThread, logError });

  let engine: string = cfg.httpEngine;
  let server: { port: number; close(): void } | undefined;
  if (cfg.listen) {
    if (cfg.httpEngine === 'uws') {
      const loaded = loadNativeUws();
      if ('uws' in loaded) server = await startUwsServer(loaded.uws, cfg.listen.host, cfg.listen.port, dispatcher);
      else {
        console.error(`svcd: ${loaded.error}; serving with node:http (native-free/)`);
        engine = 'node';
      }
    }
    server ??= await startNodeServer(cfg.listen.host, cfg.listen.port, dispatcher);
  }

  return {
    port: server?.port ?? 0,
    engine,
    async stop() {
      server?.close();
      await star.close();
      log.stop();
      await new Promise<void>((r) => { flusher.once('exit', () => r()); });
      await pool.destroy();
      await metadata.close();
    },
  };
}

async function main(): Promise<void> {
  let cfg: Config;
  try {
    cfg = loadConfig(process.argv.slice(2), process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`svcd: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  if (cfg.help) {
    console.log(helpText());
    return;
  }
  const running = await startStar(cfg);
  const host = cfg.listen?.host ?? '127.0.0.1';
  console.log(`svcd listening on http://${host}:${running.port} (engine ${running.engine}) data-dir ${resolve(cfg.dataDir)}`);
  let stopping = false;
  const shutdown = (): void => {
    if (stopping) return;
    stopping = true;
    void running.stop().then(() => process.exit(0), (err) => { logError('shutdown failed', err); process.exit(1); });
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

main().catch((err) => {
  logError('fatal', err);
  process.exit(1);
});
