// `npm start` runs the built main (scripts/build.mjs → src/main.bundle.mjs): it must serve, reach its
// worker threads (flusher, piscina) from the bundle's location, and survive a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT, removeDir, startServer, tempDir, waitForOutput } from '../helpers/server.ts';

test('the built main serves appends (inline and worker-parsed), reads and a restart', async (t) => {
  // `npm test` built the bundle before any test ran; rebuilding it here would rewrite the file other
  // tests are starting stars from.
  if (process.env.SVCD_SERVER_ENTRY !== 'bundle') execFileSync(process.execPath, [join(REPO_ROOT, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  const prev = process.env.SVCD_SERVER_ENTRY;
  process.env.SVCD_SERVER_ENTRY = 'bundle';
  const dataDir = tempDir();
  t.after(() => {
    if (prev === undefined) delete process.env.SVCD_SERVER_ENTRY;
    else process.env.SVCD_SERVER_ENTRY = prev;
    removeDir(dataDir);
  });
  const post = async (base: string, path: string, body: unknown): Promise<Response> =>
    fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  // With gRPC on: the bundle lives in src/, not src/api/grpc/, and must still find proto/.
  let srv = await startServer({ dataDir, args: ['--grpc-listen', '127.0.0.1:0'] });
  try {
    await waitForOutput(srv, /grpc listening on 127\.0\.0\.1:\d+/);
    assert.equal((await post(srv.baseUrl, '/v1/buckets/b', {})).status, 201);
    assert.equal((await post(srv.baseUrl, '/v1/streams/b/s', {})).status, 201);
    assert.equal((await post(srv.baseUrl, '/v1/streams/b/s/records', { records: [{ body: 'small' }] })).status, 200);
    // Over WORKER_PARSE_BYTES_MIN: parsed on a piscina worker started from the bundle.
    const big = await post(srv.baseUrl, '/v1/streams/b/s/records', { records: Array.from({ length: 3000 }, (_, i) => ({ body: `${i}`.padEnd(100, 'x') })) });
    assert.equal(big.status, 200, await big.clone().text());
    assert.equal(((await big.json()) as { end: { seq_num: number } }).end.seq_num, 3001);
  } finally {
    await srv.stop();
  }
  srv = await startServer({ dataDir });
  try {
    const page = (await (await fetch(`${srv.baseUrl}/v1/streams/b/s/records?seq_num=0&limit=2`)).json()) as { records: { body: string }[]; tail: { seq_num: number } };
    assert.deepEqual(page.records.map((r: { body: string }) => r.body), ['small', '0'.padEnd(100, 'x')]);
    assert.equal(page.tail.seq_num, 3001);
  } finally {
    await srv.stop();
  }
});
