// One composition with ordered start and stop (issue 16): src/lifecycle.ts stops parts phase by phase,
// newest first within a phase, and a boot that fails part-way stops what had started. Checked on the
// Lifecycle itself and on a real star whose boot fails after it locked its data dir.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Lifecycle } from '../../src/lifecycle.ts';
import { loadConfig } from '../../src/config/config.ts';
import { AUTH_FLAGS, startStar } from '../../src/server.ts';

describe('Lifecycle', () => {
  it('stops phase by phase in the documented order, newest first within a phase, once', async () => {
    const stopped: string[] = [];
    const life = new Lifecycle(() => undefined);
    life.started('lock', 'data-dir', () => { stopped.push('lock'); });
    life.started('metadata', 'stores', () => { stopped.push('metadata'); });
    life.started('auth', 'requests', () => { stopped.push('auth'); });
    life.started('log', 'log', async () => { await new Promise((r) => setImmediate(r)); stopped.push('log'); });
    life.started('star', 'core', () => { stopped.push('star'); });
    life.started('leases', 'leadership', () => { stopped.push('leases'); });
    life.started('in flight', 'requests', () => { stopped.push('in flight'); });
    life.started('bridge', 'listeners', () => { stopped.push('bridge'); });
    life.started('grpc', 'listeners', () => { stopped.push('grpc'); });
    await Promise.all([life.stop(), life.stop()]);
    assert.deepEqual(stopped, ['grpc', 'bridge', 'in flight', 'auth', 'log', 'star', 'leases', 'metadata', 'lock']);
  });

  it('a part that fails to stop is logged and the rest still stop', async () => {
    const logged: string[] = [];
    const stopped: string[] = [];
    const life = new Lifecycle((m) => logged.push(m));
    life.started('lock', 'data-dir', () => { stopped.push('lock'); });
    life.started('pool', 'workers', () => { throw new Error('stuck'); });
    await life.stop();
    assert.deepEqual(stopped, ['lock']);
    assert.deepEqual(logged, ['stopping pool failed']);
  });

  it('a boot that throws stops what had started and throws its own error', async () => {
    const stopped: string[] = [];
    const life = new Lifecycle(() => undefined);
    await assert.rejects(life.boot(async () => {
      life.started('lock', 'data-dir', () => { stopped.push('lock'); });
      life.started('flusher', 'log', () => { stopped.push('flusher'); });
      throw new Error('port in use');
    }), /port in use/);
    assert.deepEqual(stopped, ['flusher', 'lock']);
  });
});

describe('a star whose boot fails late', () => {
  it('leaves its data dir unlocked: the next start on it succeeds', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svcd-lifecycle-'));
    // The gRPC port is taken, so the boot fails after the lock, the WAL flusher, the pools and the
    // data bridge have started.
    const taken: Server = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    const port = (taken.address() as { port: number }).port;
    try {
      await assert.rejects(startStar(loadConfig(['--listen', '127.0.0.1:0', '--grpc-listen', `127.0.0.1:${port}`, '--data-dir', dataDir], {}, AUTH_FLAGS)));
      const again = await startStar(loadConfig(['--listen', '127.0.0.1:0', '--data-dir', dataDir], {}, AUTH_FLAGS));
      await again.stop();
    } finally {
      taken.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
