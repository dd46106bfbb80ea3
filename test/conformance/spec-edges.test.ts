// Conformance: CORS (spec: Errors, Limits), create_stream_on_read on every read verb, retention that
// takes effect at PATCH, and the express-class refusal (spec: States), on both engines.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENGINES, startServer, type RunningServer } from '../helpers/server.ts';
import { Client, uniq, streamPath, assertError, bodies, stopServer } from './client.ts';

const ALLOWED = 'https://app.example';
const DENIED = 'https://evil.example';

async function preflight(baseUrl: string, path: string, origin: string, method: string): Promise<Response> {
  return fetch(baseUrl + path, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type' },
  });
}

for (const engine of ENGINES) {
  describe(`CORS with no allowed origins (${engine})`, () => {
    let srv: RunningServer;
    let c: Client;
    before(async () => { srv = await startServer({ engine }); c = new Client(srv.baseUrl); });
    after(() => stopServer(srv));

    test('every preflight is 403 with the error envelope', async () => {
      const res = await preflight(srv.baseUrl, '/v1/buckets', DENIED, 'GET');
      assert.equal(res.status, 403);
      assert.match(res.headers.get('content-type') ?? '', /application\/json/);
      assert.equal(typeof ((await res.json()) as { error: unknown }).error, 'string');
      assert.equal(res.headers.get('access-control-allow-origin'), null);
    });

    test('plain requests from any origin are served without CORS headers', async () => {
      const res = await c.get('/v1/buckets', { headers: { origin: DENIED } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('access-control-allow-origin'), null);
    });

    test('an OPTIONS that is not a preflight is 405 with Allow', async () => {
      const res = await c.req('OPTIONS', '/v1/buckets');
      assertError(res, 405);
      assert.ok(res.headers.get('allow')?.includes('GET'));
    });
  });

  describe(`CORS with an allowed origin (${engine})`, () => {
    let srv: RunningServer;
    let c: Client;
    before(async () => {
      srv = await startServer({ engine, args: ['--cors-allowed-origins', `${ALLOWED}, https://other.example`] });
      c = new Client(srv.baseUrl);
    });
    after(() => stopServer(srv));

    test('an allowed origin\'s preflight is 204 with the path\'s methods, the headers and a 600 s max age', async () => {
      const bucket = await c.createBucket();
      const res = await preflight(srv.baseUrl, `${streamPath(bucket, 'k')}/records`, ALLOWED, 'POST');
      assert.equal(res.status, 204, await res.text());
      assert.equal(res.headers.get('access-control-allow-origin'), ALLOWED);
      assert.equal(res.headers.get('access-control-max-age'), '600');
      const methods = (res.headers.get('access-control-allow-methods') ?? '').split(',').map((m) => m.trim());
      assert.ok(methods.includes('POST') && methods.includes('GET'), `methods: ${methods.join(',')}`);
      assert.match(res.headers.get('access-control-allow-headers') ?? '', /authorization/i);
    });

    test('a denied origin\'s preflight is still 403, and so is a method the path does not serve', async () => {
      assert.equal((await preflight(srv.baseUrl, '/v1/buckets', DENIED, 'GET')).status, 403);
      assert.equal((await preflight(srv.baseUrl, '/v1/buckets', ALLOWED, 'DELETE')).status, 403);
    });

    test('plain requests from an allowed origin carry Access-Control-Allow-Origin; a denied origin\'s do not', async () => {
      const ok = await c.get('/v1/buckets', { headers: { origin: ALLOWED } });
      assert.equal(ok.status, 200);
      assert.equal(ok.headers.get('access-control-allow-origin'), ALLOWED);
      assert.match(ok.headers.get('vary') ?? '', /origin/i);
      const err = await c.get(`/v1/buckets/${uniq('missing')}`, { headers: { origin: ALLOWED } });
      assertError(err, 404);
      assert.equal(err.headers.get('access-control-allow-origin'), ALLOWED, 'errors carry it too, so the script can read them');
      const denied = await c.get('/v1/buckets', { headers: { origin: DENIED } });
      assert.equal(denied.status, 200);
      assert.equal(denied.headers.get('access-control-allow-origin'), null);
      assert.match(denied.headers.get('vary') ?? '', /origin/i, 'the answer varies by Origin even where it grants nothing');
    });
  });

  describe(`reads, retention and class changes (${engine})`, () => {
    let srv: RunningServer;
    let c: Client;
    before(async () => { srv = await startServer({ engine }); c = new Client(srv.baseUrl); });
    after(() => stopServer(srv));

    test('create_stream_on_read: the tail and a subscribe create the stream too, as a read does', async () => {
      const bucket = await c.createBucket({ create_stream_on_read: true });
      const tail = await c.get(`${streamPath(bucket, 'by-tail')}/records/tail`);
      assert.equal(tail.status, 200, tail.text);
      assert.deepEqual(tail.body, { seq_num: 0, timestamp_ms: 0 });
      assert.equal((await c.get(streamPath(bucket, 'by-tail'))).status, 200, 'the tail created it');

      const ac = new AbortController();
      const sub = await fetch(`${srv.baseUrl}${streamPath(bucket, 'by-sub')}/records/subscribe?seq_num=0`, { signal: ac.signal });
      assert.equal(sub.status, 200);
      ac.abort();
      await sub.body?.cancel().catch(() => undefined);
      assert.equal((await c.get(streamPath(bucket, 'by-sub'))).status, 200, 'the subscribe created it');

      const plain = await c.createBucket();
      assertError(await c.get(`${streamPath(plain, 'x')}/records/tail`), 404);
      assertError(await c.get(`${streamPath(plain, 'x')}/records/subscribe?seq_num=0`), 404);
    });

    test('a PATCH that tightens retention takes effect before it answers', async () => {
      const { bucket, key, path } = await c.freshStream();
      await c.appendOk(bucket, key, bodies(5));
      const res = await c.patch(path, { retention_max_bytes: 1 });
      assert.equal(res.status, 200, res.text);
      // Not one record fits in one byte of retention: the history is trimmed away at once.
      assertError(await c.read(bucket, key, { seq_num: 0 }), 410, 'the old records are gone at once');
      const page = await c.readOk(bucket, key, { seq_num: 0, clamp: true });
      assert.deepEqual(page.records, []);
      assert.equal(page.tail.seq_num, 5, 'trimming never renumbers');
    });

    test('switching to express without an express bucket is 400 and changes nothing; other changes still apply', async () => {
      const { path } = await c.freshStream();
      assertError(await c.patch(path, { class: 'express' }), 400);
      const after = await c.get(path);
      assert.equal(after.body.class, 'standard');
      const ok = await c.patch(path, { producer_policy: 'fenced' });
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.body.class, 'standard');
    });

    test('class express without an express bucket is 400 wherever it is asked for: a stream, a bucket\'s default (create and update); nothing is created or changed', async () => {
      const bucket = await c.createBucket();
      const key = uniq('k');
      const refused = await c.post(streamPath(bucket, key), { class: 'express' });
      assertError(refused, 400);
      // Through another star's hop the caller must learn which star lacks the bucket.
      const starId = readFileSync(join(srv.dataDir, 'star-id'), 'utf8').trim();
      assert.ok(refused.body.error.startsWith(`star ${starId} has no express bucket`), refused.body.error);
      assertError(await c.get(streamPath(bucket, key)), 404, 'nothing was created');
      const named = uniq('b');
      assertError(await c.post(`/v1/buckets/${named}`, { default_class: 'express', create_stream_on_append: true }), 400);
      assertError(await c.get(`/v1/buckets/${named}`), 404, 'the bucket was not created');
      assertError(await c.put(`/v1/buckets/${bucket}`, { default_class: 'express' }), 400);
      assert.equal((await c.get(`/v1/buckets/${bucket}`)).body.default_class, 'standard', 'the bucket was not changed');
    });
  });

  describe(`an express bucket set (${engine})`, () => {
    let srv: RunningServer;
    let c: Client;
    before(async () => { srv = await startServer({ engine, args: ['--express-bucket', 'express-tier'] }); c = new Client(srv.baseUrl); });
    after(() => stopServer(srv));

    test('a stream can switch to express and back', async () => {
      const { path } = await c.freshStream();
      const res = await c.patch(path, { class: 'express' });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.class, 'express');
      assert.equal((await c.patch(path, { class: 'standard' })).body.class, 'standard');
    });
  });
}
