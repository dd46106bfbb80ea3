// A read plan's presigned URL keeps answering for as long as it is valid, even after the records it
// names are trimmed away: unreferenced segments are deleted from the object store only once the
// read-plan validity has passed (issue 11: they were deleted at once, and the URL answered 404).
import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bytes, call } from '../grpc/client.ts';
import { startGrpcChild, type GrpcChild } from '../grpc/child.ts';

/** Longest wait for settling, and for the reclaimed object to go. */
const WAIT_MS = 30_000;

async function until(what: string, done: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a trimmed segment outlives the read plans that name it', () => {
  let c: GrpcChild;
  before(async () => { c = await startGrpcChild({ args: ['--readplan-ttl', '6s', '--read-grace', '12s', '--wal-settle-after-ms', '100'] }); });
  after(async () => { await c.stop(); });

  it('the URL answers with the same bytes after the trim, and the object is deleted once no plan can name it', async () => {
    const base = c.server.baseUrl;
    assert.equal((await fetch(`${base}/v1/buckets/b`, { method: 'POST', body: '{}' })).status, 201);
    assert.equal((await fetch(`${base}/v1/streams/b/s`, { method: 'POST', body: '{}' })).status, 201);
    const records = Array.from({ length: 5 }, (_, i) => ({ body: `r${i}` }));
    assert.equal((await fetch(`${base}/v1/streams/b/s/records`, { method: 'POST', body: JSON.stringify({ records }) })).status, 200);
    let entries: Awaited<ReturnType<typeof plan>> = [];
    const plan = async () => (await call(c.data.ReadPlan.bind(c.data), { bucket: 'b', key: bytes('s'), seq_num: 0 })).entries;
    await until('the records to settle', async () => (entries = await plan()).length > 0);
    const url = entries[0].presigned_url ?? '';
    const before = Buffer.from(await (await fetch(url)).arrayBuffer());
    assert.ok(before.length > 0);

    assert.equal((await fetch(`${base}/v1/streams/b/s/trim`, { method: 'POST', body: JSON.stringify({ seq_num: 5 }) })).status, 204);
    await assert.rejects(plan(), (e: { code?: number }) => e.code === 11, 'no plan names records below the trim (OUT_OF_RANGE)');
    const after = await fetch(url);
    assert.equal(after.status, 200, 'a URL vended before the trim still answers while it is valid');
    assert.deepEqual(Buffer.from(await after.arrayBuffer()), before);

    const objectKey = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
    const path = join(c.server.dataDir, 'objects', ...objectKey.split('/'));
    assert.ok(existsSync(path), `the segment is still in the store: ${path}`);
    await until('the segment to be reclaimed after the read-plan validity', () => !existsSync(path));
  });

  it('a segment partly below the trim is never vended: the plan vends nothing from its start, and the records above the trim are read', async () => {
    const base = c.server.baseUrl;
    assert.equal((await fetch(`${base}/v1/streams/b/p`, { method: 'POST', body: '{}' })).status, 201);
    const records = Array.from({ length: 6 }, (_, i) => ({ body: `p${i}` }));
    assert.equal((await fetch(`${base}/v1/streams/b/p/records`, { method: 'POST', body: JSON.stringify({ records }) })).status, 200);
    const plan = async (seq: number) => call(c.data.ReadPlan.bind(c.data), { bucket: 'b', key: bytes('p'), seq_num: seq });
    await until('the records to settle', async () => (await plan(0)).entries.length > 0);
    assert.equal((await fetch(`${base}/v1/streams/b/p/trim`, { method: 'POST', body: JSON.stringify({ seq_num: 2 }) })).status, 204);
    for (const seq of [2, 4]) {
      const p = await plan(seq);
      assert.deepEqual(p.entries, [], `a plan from ${seq} vends no object holding records 0 and 1`);
      assert.equal(Number(p.vended_until), seq);
    }
    const read = await (await fetch(`${base}/v1/streams/b/p/records?seq_num=2`)).json() as { records: { body: string }[] };
    assert.deepEqual(read.records.map((r) => r.body), ['p2', 'p3', 'p4', 'p5']);
  });
});
