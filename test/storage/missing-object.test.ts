// A settled segment whose object vanished from the store (an operator's mistake, a bucket lifecycle
// rule, damage) is not a trim: the read answers 500 naming the object key and the star logs it, so
// nobody retries a 410 forever without learning what is wrong. A trim, by contrast, still answers 410.
import assert from 'node:assert/strict';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { removeDir, startServer, waitForOutput } from '../helpers/server.ts';

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

async function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

test('a settled segment missing from the object store is a logged internal error naming its key, never 410', async () => {
  const star = await startServer({ engine: 'node', args: ['--wal-settle-after-ms', '200'] });
  try {
    assert.equal((await post(`${star.baseUrl}/v1/buckets/mo`, {})).status, 201);
    assert.equal((await post(`${star.baseUrl}/v1/streams/mo/s`, {})).status, 201);
    assert.equal((await post(`${star.baseUrl}/v1/streams/mo/s/records`, { records: [{ body: 'a' }, { body: 'b' }] })).status, 200);
    // Settled once the WAL file is sealed (--wal-settle-after-ms) and its segment written.
    const objectsDir = join(star.dataDir, 'objects');
    let segments: string[] = [];
    for (let i = 0; i < 200 && segments.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      try { segments = filesUnder(objectsDir).filter((f) => f.endsWith('.seg')); } catch { /* not made yet */ }
    }
    assert.equal(segments.length, 1, `one segment object: ${segments.join(', ')}`);
    rmSync(segments[0]);
    // Served from memory until the settle that wrote the object is recorded; then from the object.
    let res = await fetch(`${star.baseUrl}/v1/streams/mo/s/records?seq_num=0`);
    for (let i = 0; i < 200 && res.status === 200; i++) {
      await new Promise((r) => setTimeout(r, 50));
      res = await fetch(`${star.baseUrl}/v1/streams/mo/s/records?seq_num=0`);
    }
    const body = await res.json() as { error: string };
    assert.equal(res.status, 500, JSON.stringify(body));
    await waitForOutput(star, /segment object \S+ of stream \S+ \(records from 0\) is missing from the object store/);

    // A trim is still a trim: the records below it answer 410.
    assert.equal((await post(`${star.baseUrl}/v1/streams/mo/s/records`, { records: [{ body: 'c' }] })).status, 200);
    assert.equal((await post(`${star.baseUrl}/v1/streams/mo/s/trim`, { seq_num: 2 })).status, 204);
    assert.equal((await fetch(`${star.baseUrl}/v1/streams/mo/s/records?seq_num=0`)).status, 410);
  } finally {
    await star.stop();
    removeDir(star.dataDir);
  }
});
