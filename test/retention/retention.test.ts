// Retention by age and by bytes is enforced in the background: old records become unreadable (410
// without clamp) while the newest stay. Polls are bounded; nothing here asserts on timing.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
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
