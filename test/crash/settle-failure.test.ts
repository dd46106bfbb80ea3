// A WAL file that fails to settle (the object store refuses the segment) is retried until it
// settles; later files wait behind it, nothing acknowledged is lost or skipped, and a SIGKILL and
// restart in the middle changes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, startServer, tempDir, type RunningServer } from '../helpers/server.ts';

const WAIT_MS = 20_000;

async function call(srv: RunningServer, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(srv.baseUrl + path, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

async function until(what: string, pred: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every record from 0 to the tail, page by page (a page stops short at the settled frontier). */
async function bodies(srv: RunningServer): Promise<string[]> {
  const out: string[] = [];
  for (let seq = 0, pages = 0; pages < 100; pages++) {
    const page = await call(srv, 'GET', `/v1/streams/b/s/records?seq_num=${seq}`);
    for (const r of page.records) { assert.equal(r.seq_num, seq++); out.push(r.body); }
    if (seq >= page.tail.seq_num) return out;
  }
  throw new Error('no end to the pages');
}

test('a failed settle is retried in order and loses nothing, across a SIGKILL', async (t) => {
  const dataDir = tempDir();
  t.after(() => removeDir(dataDir));
  const args = ['--wal-settle-after-ms', '300'];
  let srv = await startServer({ dataDir, args });
  try {
    await call(srv, 'POST', '/v1/buckets/b', {});
    const { stream_id: id } = await call(srv, 'POST', '/v1/streams/b/s', {});
    // A plain file where the stream's segment directory must go makes every segment upload fail.
    const blocker = join(dataDir, 'objects', 'streams', id);
    mkdirSync(join(dataDir, 'objects', 'streams'), { recursive: true });
    writeFileSync(blocker, 'not a directory');
    await call(srv, 'POST', '/v1/streams/b/s/records', { records: [{ body: 'r0' }, { body: 'r1' }] });
    await until('a failed settle attempt', () => /settling WAL file \d+ failed/.test(srv.output()));
    await call(srv, 'POST', '/v1/streams/b/s/records', { records: [{ body: 'r2' }, { body: 'r3' }] });
    await new Promise((r) => setTimeout(r, 800)); // the second file seals and queues behind the first
    assert.deepEqual(await bodies(srv), ['r0', 'r1', 'r2', 'r3']);

    await srv.kill();
    srv = await startServer({ dataDir, args });
    assert.deepEqual(await bodies(srv), ['r0', 'r1', 'r2', 'r3'], 'after a restart with the settle still failing');

    rmSync(blocker);
    await until('the WAL to settle', () => readdirSync(join(dataDir, 'wal')).filter((f) => f.endsWith('.wal')).length <= 1
      && existsSync(join(dataDir, 'objects', 'streams', id)) && readdirSync(join(dataDir, 'objects', 'streams', id)).length > 0);
    assert.deepEqual(await bodies(srv), ['r0', 'r1', 'r2', 'r3'], 'served from segments');

    await srv.kill();
    srv = await startServer({ dataDir, args });
    assert.deepEqual(await bodies(srv), ['r0', 'r1', 'r2', 'r3'], 'after settling and a restart');
    const tail = await call(srv, 'GET', '/v1/streams/b/s/records/tail');
    assert.equal(tail.seq_num, 4);
  } finally {
    await srv.stop();
  }
});
