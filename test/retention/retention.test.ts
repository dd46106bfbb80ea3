// Retention by age and by bytes is enforced in the background: old records become unreadable (410
// without clamp) while the newest stay. Polls are bounded; nothing here asserts on timing.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, type RunningServer } from '../helpers/server.ts';

const WAIT_MS = 15_000;

async function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(base + path, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

/** Polls until the earliest readable record (clamped read) is at or past `seq`. */
async function waitEarliest(base: string, path: string, atLeast: number): Promise<number> {
  const deadline = Date.now() + WAIT_MS;
  let first = -1;
  while (Date.now() < deadline) {
    const r = await call(base, 'GET', `${path}/records?seq_num=0&clamp=true&limit=1`);
    assert.equal(r.status, 200);
    first = r.json.records[0]?.seq_num ?? r.json.tail.seq_num;
    if (first >= atLeast) return first;
    await new Promise((res) => setTimeout(res, 200));
  }
  return first;
}

describe('retention', () => {
  let srv: RunningServer;
  before(async () => {
    srv = await startServer({ engine: 'uws' });
    assert.equal((await call(srv.baseUrl, 'POST', '/v1/buckets/ret', {})).status, 201);
  });
  after(() => srv.stop());

  test('by age: records older than retention_max_age_ms are trimmed, newer ones stay', async () => {
    const p = '/v1/streams/ret/age';
    assert.equal((await call(srv.baseUrl, 'POST', p, { retention_max_age_ms: 60_000 })).status, 201);
    const old = Date.now() - 10 * 60_000;
    const a = await call(srv.baseUrl, 'POST', `${p}/records`, { records: [0, 1, 2].map((i) => ({ body: `old${i}`, timestamp_ms: old + i })) });
    assert.equal(a.status, 200);
    const b = await call(srv.baseUrl, 'POST', `${p}/records`, { records: [{ body: 'new0' }, { body: 'new1' }] });
    assert.equal(b.json.start.seq_num, 3);
    assert.equal(await waitEarliest(srv.baseUrl, p, 3), 3);
    assert.equal((await call(srv.baseUrl, 'GET', `${p}/records?seq_num=0`)).status, 410);
    const rest = await call(srv.baseUrl, 'GET', `${p}/records?seq_num=3`);
    assert.deepEqual(rest.json.records.map((r: any) => r.body), ['new0', 'new1']);
    assert.equal(rest.json.tail.seq_num, 5);
  });

  test('by bytes: the oldest batches go until what is retained fits retention_max_bytes', async () => {
    const p = '/v1/streams/ret/bytes';
    assert.equal((await call(srv.baseUrl, 'POST', p, { retention_max_bytes: 2500 })).status, 201);
    for (let i = 0; i < 10; i++) {
      const r = await call(srv.baseUrl, 'POST', `${p}/records`, { records: [{ body: String(i).repeat(1000) }] });
      assert.equal(r.status, 200);
    }
    const first = await waitEarliest(srv.baseUrl, p, 8);
    assert.equal(first, 8); // two 1000-byte records fit in 2500; a third would not
    const page = await call(srv.baseUrl, 'GET', `${p}/records?seq_num=8`);
    assert.deepEqual(page.json.records.map((r: any) => r.body[0]), ['8', '9']);
  });

  test('by bytes, a batch bigger than retention_max_bytes keeps its newest records that fit (not none)', async () => {
    const p = '/v1/streams/ret/onebatch';
    assert.equal((await call(srv.baseUrl, 'POST', p, { retention_max_bytes: 60 })).status, 201);
    const r = await call(srv.baseUrl, 'POST', `${p}/records`, { records: Array.from({ length: 10 }, (_, i) => ({ body: `${i}`.repeat(10) })) });
    assert.equal(r.status, 200);
    assert.equal(await waitEarliest(srv.baseUrl, p, 4), 4); // six 10-byte records fit in 60
    const page = await call(srv.baseUrl, 'GET', `${p}/records?seq_num=0&clamp=true`);
    assert.deepEqual(page.json.records.map((x: any) => x.seq_num), [4, 5, 6, 7, 8, 9]);
  });

  test('a stream without retention keeps everything', async () => {
    const p = '/v1/streams/ret/keep';
    assert.equal((await call(srv.baseUrl, 'POST', p, {})).status, 201);
    await call(srv.baseUrl, 'POST', `${p}/records`, { records: [{ body: 'a', timestamp_ms: 1 }] });
    await new Promise((r) => setTimeout(r, 1500)); // more than one sweep period
    const r = await call(srv.baseUrl, 'GET', `${p}/records?seq_num=0`);
    assert.equal(r.status, 200);
    assert.equal(r.json.records.length, 1);
  });
});

describe('retention by bytes over settled segments', () => {
  let srv: RunningServer;
  before(async () => {
    srv = await startServer({ engine: 'uws', args: ['--wal-settle-after-ms', '300'] });
    assert.equal((await call(srv.baseUrl, 'POST', '/v1/buckets/ret', {})).status, 201);
  });
  after(() => srv.stop());

  test('a bound set after the records settled cuts inside the segment, record by record', async () => {
    const p = '/v1/streams/ret/settled';
    assert.equal((await call(srv.baseUrl, 'POST', p, {})).status, 201);
    // Three batches in one WAL file: one segment of three frames (4 + 4 + 2 records of 10 bytes).
    for (const n of [4, 4, 2]) {
      const base = (await call(srv.baseUrl, 'GET', `${p}/records?tail_offset=0`)).json.tail.seq_num;
      const r = await call(srv.baseUrl, 'POST', `${p}/records`, { records: Array.from({ length: n }, (_, i) => ({ body: `${base + i}`.padStart(10, 'x') })) });
      assert.equal(r.status, 200);
    }
    const walDir = join(srv.dataDir, 'wal');
    const first = Math.min(...readdirSync(walDir).map((f) => parseInt(f, 10)).filter(Number.isFinite));
    const deadline = Date.now() + WAIT_MS;
    while (readdirSync(walDir).some((f) => parseInt(f, 10) === first)) {
      assert.ok(Date.now() < deadline, 'the WAL file settled');
      await new Promise((res) => setTimeout(res, 100));
    }
    assert.equal((await call(srv.baseUrl, 'PATCH', p, { retention_max_bytes: 50 })).status, 200);
    assert.equal(await waitEarliest(srv.baseUrl, p, 5), 5); // five 10-byte records fit in 50: 5..9
    const page = await call(srv.baseUrl, 'GET', `${p}/records?seq_num=0&clamp=true`);
    assert.deepEqual(page.json.records.map((x: any) => x.seq_num), [5, 6, 7, 8, 9]);
  });
});
