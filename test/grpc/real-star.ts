// Builds the real core through src/server.ts's startStar (the same composition as the svcd binary:
// fs object store, local metadata, the WAL flusher, the worker pool) in a temp data dir, with no HTTP
// listener, so the gRPC adapter tests run in-process against the real StreamService.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/config.ts';
import type { Star } from '../../src/core/star.ts';
import { AUTH_FLAGS, startStar } from '../../src/server.ts';

export interface RealStar {
  star: Star;
  dataDir: string;
  stop(): Promise<void>;
}

export async function startRealStar(): Promise<RealStar> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svcd-grpc-'));
  const running = await startStar(loadConfig(['--listen', '', '--data-dir', dataDir, '--lease-idle-ms', '0'], {}, AUTH_FLAGS));
  return {
    star: running.star,
    dataDir,
    async stop() {
      await running.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
