// The auditor on a real star: a settled segment whose bytes were altered in the object store is
// found by the scrub (logged, counted in /metrics, kept in the `findings` queue); a segment released
// by a trim waits out the read grace in the `deletions` queue, still readable, and is deleted after.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { removeDir, waitForOutput } from '../helpers/server.ts';
import { ok, startOpsStar, type OpsStar } from './kit.ts';

/** How long the test waits for something the star does in the background before it gives up. */
const WAIT_MS_MAX = 30_000;

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

async function until<T>(what: string, probe: () => Promise<T> | T, done: (v: T) => boolean): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await probe();
    if (done(v)) return v;
    assert.ok(Date.now() - t0 < WAIT_MS_MAX, `timed out waiting for ${what} (last: ${JSON.stringify(v)})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function post(base: string, path: string, body: unknown): Promise<number> {
  return (await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).status;
}

describe('the auditor', () => {
  let s: OpsStar;
  before(async () => {
    s = await startOpsStar({ engine: 'node', args: ['--wal-settle-after-ms', '200', '--readplan-ttl', '1s', '--read-grace', '10s', '--audit-scrub-interval', '500ms'] });
  });
  after(async () => { await s.stop(); removeDir(s.srv.dataDir); });

  const depth = async (name: string): Promise<number> =>
    Number(((await ok(s.ops, 'ListAuditQueues')) as { queues: { name: string; depth: number | string }[] }).queues.find((q) => q.name === name)?.depth);

  test('an altered segment is a finding; a trimmed one waits out the read grace, then goes', async () => {
    const base = s.srv.baseUrl;
    assert.equal(await post(base, '/v1/buckets/au', {}), 201);
    assert.equal(await post(base, '/v1/streams/au/s', {}), 201);
    assert.equal(await post(base, '/v1/streams/au/s/records', { records: [{ body: 'first' }, { body: 'second' }] }), 200);
    const [segment] = await until('the segment', () => filesUnder(join(s.srv.dataDir, 'objects')).filter((f) => f.endsWith('.seg')), (f) => f.length === 1);
    await until('its first verification', () => ok(s.ops, 'ListAuditQueues'), (q: { queues: { name: string; depth: number }[] }) =>
      q.queues.find((x) => x.name === 'verifications')?.depth === 0);
    assert.equal(await depth('findings'), 0, 'an intact segment is no finding');

    // A byte of the first record's body flipped in the object store.
    const bytes = readFileSync(segment);
    const at = bytes.indexOf(Buffer.from('first'));
    assert.ok(at > 0);
    bytes[at] ^= 0xff;
    writeFileSync(segment, bytes);
    await until('the scrub to find it', () => depth('findings'), (n) => n >= 1);
    const found = await ok(s.ops, 'PeekAuditQueue', { name: 'findings', limit: 10 }) as { items: { bucket: string; reason: string }[] };
    assert.equal(found.items[0].bucket, 'au');
    assert.match(found.items[0].reason, /\.seg .*fails its checksum/);
    await waitForOutput(s.srv, /audit: stream au\/s: segment \S+\.seg/);
    const metrics = await (await fetch(`${s.ops}/metrics`)).text();
    assert.match(metrics, /^svcd_audit_findings [1-9]/m);

    // Trimmed past the segment: released, not deleted until the read grace has passed.
    assert.equal(await post(base, '/v1/streams/au/s/records', { records: [{ body: 'third' }] }), 200);
    assert.equal(await post(base, '/v1/streams/au/s/trim', { seq_num: 2 }), 204);
    await until('the release', () => depth('deletions'), (n) => n === 1);
    const waiting = await ok(s.ops, 'PeekAuditQueue', { name: 'deletions' }) as { items: { bucket: string; reason: string }[] };
    assert.equal(waiting.items[0].bucket, 'au');
    assert.ok(waiting.items[0].reason.includes(segment.slice(join(s.srv.dataDir, 'objects').length + 1)), waiting.items[0].reason);
    assert.ok(existsSync(segment), 'still in the store during the read grace');
    await until('the deletion after the grace', () => existsSync(segment), (there) => !there);
    assert.equal(await depth('deletions'), 0);
  });
});
