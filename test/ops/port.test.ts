// A taken port fails the start with one line (uWS would otherwise share it through SO_REUSEPORT),
// on both engines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { ENGINES, REPO_ROOT, removeDir, starEntry, startServer, tempDir } from '../helpers/server.ts';

test('a second star on a taken port refuses to start', async (t) => {
  const first = await startServer({ engine: 'uws' });
  t.after(() => first.stop());
  for (const engine of ENGINES) {
    const dir = tempDir();
    try {
      const r = spawnSync(process.execPath, [...starEntry(), '--listen', `127.0.0.1:${first.port}`, '--data-dir', dir, '--http-engine', engine], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 20_000 });
      assert.equal(r.status, 2, `${engine}: ${r.stderr}`);
      assert.match(r.stderr, /cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE/);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    } finally {
      removeDir(dir);
    }
  }
  assert.equal((await fetch(`${first.baseUrl}/healthz`)).status, 200);
});
