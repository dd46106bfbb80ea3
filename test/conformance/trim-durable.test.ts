// A trim is acknowledged only once durable (issue 14's last item; the core made trims visible only
// after their metadata write, README "The seeded simulation"): over HTTP on both engines, a star
// killed with SIGKILL right after a trim's 204 comes back with the trim in force: reads below it are
// 410, clamped reads start at it, and nothing was renumbered. (That no reader sees a trim before it
// is durable is the simulation's to show: over HTTP it needs a metadata write held back.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, removeDir, startServer, tempDir } from '../helpers/server.ts';
import { Client, assertError, bodies, stopServer } from './client.ts';

for (const engine of ENGINES) {
  test(`an acknowledged trim survives SIGKILL (${engine})`, { timeout: 60_000 }, async () => {
    const dataDir = tempDir();
    try {
      const first = await startServer({ engine, dataDir });
      const c = new Client(first.baseUrl);
      const { bucket, key, path } = await c.freshStream();
      await c.appendOk(bucket, key, bodies(10));
      const trim = await c.post(`${path}/trim`, { seq_num: 6 });
      assert.equal(trim.status, 204, trim.text);
      assertError(await c.read(bucket, key, { seq_num: 0 }), 410, 'trimmed before the crash');
      await first.kill();

      const second = await startServer({ engine, dataDir });
      try {
        const c2 = new Client(second.baseUrl);
        assertError(await c2.read(bucket, key, { seq_num: 5 }), 410, 'still trimmed after the crash');
        const page = await c2.readOk(bucket, key, { seq_num: 0, clamp: true });
        assert.deepEqual(page.records.map((r: { seq_num: number }) => r.seq_num), [6, 7, 8, 9]);
        assert.deepEqual(page.records.map((r: { body: string }) => r.body), ['r6', 'r7', 'r8', 'r9']);
        assert.equal(page.tail.seq_num, 10);
      } finally {
        await stopServer(second);
      }
    } finally {
      removeDir(dataDir);
    }
  });
}
