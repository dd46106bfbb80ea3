// Conformance: the route table's edges: 405 + Allow, 404 on bad segments and unknown paths, escaped keys,
// content types, malformed bodies and queries, bad percent-encoding, and oversized bodies.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import { ENGINES, startServer, type RunningServer } from '../helpers/server.ts';
import { rawConn } from '../helpers/raw-conn.ts';
import {
  Client, uniq, bucketPath, streamPath, assertError, assertJsonContentType, bodies, rawRequest, healthz,
  REQUEST_TIMEOUT_MS, type RawRes, stopServer,
} from './client.ts';

const MiB = 1024 * 1024;

function allowOf(res: { headers: Headers }): string[] {
  const allow = res.headers.get('allow');
  assert.ok(allow, 'a 405 carries an Allow header');
  return allow.split(',').map((m) => m.trim().toUpperCase()).filter(Boolean);
}

function assertRawError(res: RawRes, status: number, what: string): void {
  assert.equal(res.status, status, `${what}: expected ${status}, got ${res.status}: ${res.text}`);
  assertJsonContentType(res.headers, what);
  let body: any;
  try { body = JSON.parse(res.text); } catch { assert.fail(`${what}: error body is not JSON: ${res.text}`); }
  assert.equal(typeof body.error, 'string', `${what}: {error: string}`);
}

type Outcome = { status: number } | { error: Error };

/**
 * Streams up to `total` bytes of an append body in 1 MiB chunks, stopping early once the server answers or
 * cuts the connection. `declare` sets a Content-Length instead of chunked encoding.
 */
async function streamHugeBody(baseUrl: string, path: string, total: number, declare: boolean): Promise<Outcome> {
  const u = new URL(baseUrl);
  const headers: Record<string, string | number> = { 'content-type': 'application/json' };
  if (declare) headers['content-length'] = total;
  const req = http.request({ host: u.hostname, port: Number(u.port), method: 'POST', path, headers });
  let settled = false;
  const done = new Promise<Outcome>((resolve) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => { settled = true; resolve({ status: res.statusCode ?? 0 }); });
      res.on('error', (error) => { settled = true; resolve({ error }); });
    });
    req.on('error', (error) => { settled = true; resolve({ error }); });
  });
  const head = Buffer.from('{"records":[');
  const rec = Buffer.from(`{"body":"${'x'.repeat(1000)}"},`);
  const chunk = Buffer.alloc(MiB, ' ');
  for (let off = 0; off + rec.length <= chunk.length; off += rec.length) rec.copy(chunk, off);
  let sent = 0;
  req.write(head);
  sent += head.length;
  while (!settled && sent + chunk.length <= total) {
    const ok = req.write(chunk);
    sent += chunk.length;
    if (!ok) {
      await Promise.race([once(req, 'drain').catch(() => {}), done]);
    }
  }
  if (!settled) req.end();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => resolve({ error: new Error('timed out waiting for an answer to the oversized body') }), REQUEST_TIMEOUT_MS);
  });
  const outcome = await Promise.race([done, timeout]);
  clearTimeout(timer);
  req.destroy();
  return outcome;
}

for (const engine of ENGINES) {
  describe(`routing (${engine})`, () => {
    let srv: RunningServer;
    let c: Client;
    let bucket: string;
    let key: string;
    before(async () => {
      srv = await startServer({ engine });
      c = new Client(srv.baseUrl);
      bucket = await c.createBucket();
      key = uniq('k');
      await c.createStream(bucket, key);
      await c.appendOk(bucket, key, bodies(2));
    });
    after(() => stopServer(srv));

    test('GET /healthz is 200', async () => {
      assert.equal(await healthz(srv.baseUrl), 200);
    });

    const METHOD_CASES: Array<{ path: () => string; wrong: string[]; allowed: string[] }> = [
      { path: () => '/v1/buckets', wrong: ['DELETE', 'POST', 'PUT'], allowed: ['GET'] },
      { path: () => bucketPath(bucket), wrong: ['PATCH'], allowed: ['GET', 'POST', 'PUT', 'DELETE'] },
      { path: () => `/v1/streams/${bucket}`, wrong: ['POST', 'DELETE', 'PUT'], allowed: ['GET'] },
      { path: () => streamPath(bucket, key), wrong: ['PUT'], allowed: ['GET', 'POST', 'PATCH', 'DELETE'] },
      { path: () => `${streamPath(bucket, key)}/records`, wrong: ['DELETE', 'PUT', 'PATCH'], allowed: ['GET', 'POST'] },
      { path: () => `${streamPath(bucket, key)}/records/tail`, wrong: ['POST', 'DELETE'], allowed: ['GET'] },
      { path: () => `${streamPath(bucket, key)}/records/subscribe`, wrong: ['POST'], allowed: ['GET'] },
      { path: () => `${streamPath(bucket, key)}/trim`, wrong: ['GET', 'DELETE'], allowed: ['POST'] },
      { path: () => `${streamPath(bucket, key)}/fence`, wrong: ['GET', 'PUT'], allowed: ['POST'] },
      { path: () => '/v1/token/exchange', wrong: ['GET', 'DELETE'], allowed: ['POST'] },
    ];
    for (const mc of METHOD_CASES) {
      test(`a wrong method is 405 with Allow: ${mc.allowed.join(', ')} (${mc.allowed.length}-method route, ${mc.wrong.join('/')})`, async () => {
        for (const method of mc.wrong) {
          const res = await c.req(method, mc.path(), method === 'GET' || method === 'DELETE' ? undefined : {});
          assertError(res, 405, `${method} ${mc.path()}`);
          const allow = allowOf(res);
          for (const m of mc.allowed) assert.ok(allow.includes(m), `Allow ${allow} should include ${m}`);
          assert.ok(!allow.includes(method), `Allow ${allow} must not include ${method}`);
        }
      });
    }

    test('a 405 changes nothing', async () => {
      const res = await c.req('PUT', streamPath(bucket, key), { retention_max_age_ms: 5 });
      assert.equal(res.status, 405);
      assert.equal((await c.tail(bucket, key)).seq_num, 2);
      const got = await c.get(streamPath(bucket, key));
      assert.equal(got.body.retention_max_age_ms, 0);
    });

    test('empty, "." and ".." path segments are 404', async () => {
      const paths = [
        `/v1/streams/${bucket}//records`,
        `/v1/streams/${bucket}/./records`,
        `/v1/streams/${bucket}/../records`,
        `/v1/streams/${bucket}/${key}/../${key}/records`,
        `/v1/streams/./${key}/records`,
        `/v1/streams/../${bucket}/${key}`,
        `/v1/streams//${key}`,
        `/v1/streams/${bucket}/.`,
        `/v1/streams/${bucket}/..`,
        `/v1/buckets/.`,
        `/v1/buckets/..`,
        `/v1/buckets//`,
        `/v1//buckets`,
        `/v1/streams/${bucket}/${key}/records/`,
      ];
      for (const p of paths) {
        const res = await rawRequest(srv.baseUrl, 'GET', p);
        assertRawError(res, 404, `GET ${p}`);
      }
      const post = await rawRequest(srv.baseUrl, 'POST', `/v1/buckets/..`, { headers: { 'content-type': 'application/json' }, body: '{}' });
      assertRawError(post, 404, 'POST /v1/buckets/..');
    });

    test('unknown paths are 404 with the error envelope', async () => {
      for (const p of ['/v1/nope', '/v2/buckets', '/', '/v1', `/v1/streams/${bucket}/${key}/other`,
        `/v1/streams/${bucket}/${key}/records/other`, `/v1/buckets/${bucket}/extra`]) {
        assertError(await c.get(p), 404, `GET ${p}`);
      }
    });

    test('an encoded slash keeps a key in one segment (orders%2Feu is the key orders/eu)', async () => {
      const b = await c.createBucket();
      const res = await c.post(`/v1/streams/${b}/orders%2Feu`, {});
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.key, 'orders/eu');
      const got = await c.get(`/v1/streams/${b}/orders%2Feu`);
      assert.equal(got.status, 200, got.text);
      assert.equal(got.body.key, 'orders/eu');
      const lower = await c.get(`/v1/streams/${b}/orders%2feu`);
      assert.equal(lower.status, 200, 'lowercase hex escapes decode to the same key');
      assertError(await c.get(`/v1/streams/${b}/orders`), 404, 'the prefix is another key');
      assertError(await c.get(`/v1/streams/${b}/orders/eu`), 404, 'an unescaped slash is another path');
      const ack = await c.post(`/v1/streams/${b}/orders%2Feu/records`, { records: [{ body: 'x' }] });
      assert.equal(ack.status, 200, ack.text);
      const page = await c.get(`/v1/streams/${b}/orders%2Feu/records?seq_num=0`);
      assert.equal(page.status, 200, page.text);
      assert.deepEqual(page.body.records.map((r: any) => r.body), ['x']);
      const list = await c.get(`/v1/streams/${b}`);
      assert.deepEqual(list.body.streams.map((s: any) => s.key), ['orders/eu']);
    });

    test('keys with spaces, percent signs and non-ASCII characters round-trip', async () => {
      const b = await c.createBucket();
      const keys = ['a b', '100%', 'ünïcödé/✓', 'q?x=1&y#z', '..a', 'a.', '+plus'];
      for (const k of keys) {
        const created = await c.post(streamPath(b, k), {});
        assert.equal(created.status, 201, `${k}: ${created.text}`);
        assert.equal(created.body.key, k);
        const got = await c.get(streamPath(b, k));
        assert.equal(got.status, 200, `${k}: ${got.text}`);
        assert.equal(got.body.key, k);
        await c.appendOk(b, k, [{ body: k }]);
        const page = await c.readOk(b, k, { seq_num: 0 });
        assert.deepEqual(page.records.map((r) => r.body), [k], `records of ${k} stay in ${k}`);
      }
      const list = await c.get(`/v1/streams/${b}`);
      assert.deepEqual(new Set(list.body.streams.map((s: any) => s.key)), new Set(keys));
    });

    test('a key is any byte string: bytes that are not UTF-8 name a stream, shown as key_b64', async () => {
      const b = await c.createBucket();
      const bytes = Buffer.from([0xff, 0x00, 0x61, 0xc3]); // invalid lead, NUL, 'a', a truncated sequence
      const seg = [...bytes].map((x) => `%${x.toString(16).padStart(2, '0').toUpperCase()}`).join('');
      const created = await c.post(`/v1/streams/${b}/${seg}`, {});
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.key, undefined, 'no lossy key field');
      assert.equal(created.body.key_b64, bytes.toString('base64'));
      const got = await c.get(`/v1/streams/${b}/${seg.toLowerCase()}`);
      assert.equal(got.status, 200, got.text);
      assert.equal(got.body.key_b64, bytes.toString('base64'));
      assert.equal(got.body.stream_id, created.body.stream_id, 'lowercase escapes name the same bytes');
      const ack = await c.post(`/v1/streams/${b}/${seg}/records`, { records: [{ body: 'binary-keyed' }] });
      assert.equal(ack.status, 200, ack.text);
      const page = await c.get(`/v1/streams/${b}/${seg}/records?seq_num=0`);
      assert.deepEqual(page.body.records.map((r: any) => r.body), ['binary-keyed']);
      // A neighbour that differs in one byte is another stream; the text key "\uFFFD\u0000a" too.
      assertError(await c.get(`/v1/streams/${b}/%FE%00%61%C3`), 404, 'one byte apart');
      assertError(await c.get(`/v1/streams/${b}/%EF%BF%BD%00a%EF%BF%BD`), 404, 'the replacement-character spelling');
      // Listed with key_b64, and a cursor after it resumes past it.
      const other = await c.post(`/v1/streams/${b}/zz`, {});
      assert.equal(other.status, 201, other.text);
      const list = await c.get(`/v1/streams/${b}?limit=1`);
      assert.equal(list.status, 200, list.text);
      const first = list.body.streams[0];
      const rest = await c.get(`/v1/streams/${b}?start_after=${list.body.next}`);
      const all = [first, ...rest.body.streams].map((s: any) => s.key ?? `b64:${s.key_b64}`);
      assert.deepEqual(all, ['zz', `b64:${bytes.toString('base64')}`], 'listed in byte order: 0x7A before 0xFF');
      // A GET's answer sent back as a PATCH body is accepted, key_b64 included.
      const echo = await c.req('PATCH', `/v1/streams/${b}/${seg}`, got.body);
      assert.equal(echo.status, 200, echo.text);
    });

    test('streams are listed in the byte order of their keys', async () => {
      const b = await c.createBucket();
      // UTF-16 order would put U+1F600 (a surrogate pair) before U+E000 and the byte 0x80 last but one.
      const segs = ['%EE%80%80', '%F0%9F%98%80', '%80', '%FF', 'a'];
      for (const seg of segs) assert.equal((await c.post(`/v1/streams/${b}/${seg}`, {})).status, 201, seg);
      const seen: string[] = [];
      let next = '';
      do {
        const page = await c.get(`/v1/streams/${b}?limit=2${next ? `&start_after=${next}` : ''}`);
        assert.equal(page.status, 200, page.text);
        for (const st of page.body.streams) seen.push(st.key_b64 ? Buffer.from(st.key_b64, 'base64').toString('hex') : Buffer.from(st.key).toString('hex'));
        next = page.body.next;
      } while (next);
      assert.deepEqual(seen, ['61', '80', 'ee8080', 'f09f9880', 'ff']);
    });

    test('a bad path segment (bad percent-encoding, a name or key outside the rules) is 404', async () => {
      for (const p of [
        `/v1/streams/${bucket}/%ZZ`, `/v1/streams/${bucket}/%ZZ/records?seq_num=0`, `/v1/streams/${bucket}/a%2`,
        `/v1/streams/${bucket}/%`, `/v1/buckets/%ZZ`, `/v1/streams/%ZZ/${key}`,
        `/v1/buckets/bad%20name`, `/v1/streams/${bucket}/${'k'.repeat(1025)}`,
      ]) {
        const res = await rawRequest(srv.baseUrl, 'GET', p);
        assertRawError(res, 404, `GET ${p}`);
      }
      const create = await rawRequest(srv.baseUrl, 'POST', '/v1/buckets/-bad');
      assertRawError(create, 404, 'POST /v1/buckets/-bad');
    });

    test('a raw byte past ASCII in a key (not percent-encoded) is a bad path segment, 404, on both engines', async () => {
      const c = await rawConn(srv.port);
      try {
        c.sock.write(Buffer.concat([Buffer.from(`GET /v1/streams/${bucket}/caf`), Buffer.from([0xe9]), Buffer.from(' HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')]));
        await new Promise<void>((resolve) => { const t = setInterval(() => { if (c.closed()) { clearInterval(t); resolve(); } }, 10); });
        assert.match(c.text(), /^HTTP\/1\.1 404 /, c.text());
        assert.match(c.text(), /\r\ncontent-type: application\/json\r\n/i, c.text());
        assert.match(c.text(), /\{"error":"bad path segment: [^"]+"\}$/, c.text());
      } finally {
        c.sock.destroy();
      }
    });

    test('a 405 lists HEAD wherever GET is allowed', async () => {
      const res = await rawRequest(srv.baseUrl, 'PUT', `/v1/streams/${bucket}/${key}/records/tail`);
      assert.equal(res.status, 405);
      const allow = String(res.headers.allow).split(',').map((m) => m.trim());
      assert.deepEqual(allow.sort(), ['GET', 'HEAD']);
    });

    test('bad percent-encoding in the query is 400', async () => {
      const res = await rawRequest(srv.baseUrl, 'GET', `${streamPath(bucket, key)}/records?seq_num=%ZZ`);
      assertRawError(res, 400, 'query %ZZ');
    });

    test('every JSON answer, errors included, is application/json', async () => {
      const checks: Array<[string, Promise<any>]> = [
        ['bucket get', c.get(bucketPath(bucket))],
        ['bucket list', c.get('/v1/buckets')],
        ['stream get', c.get(streamPath(bucket, key))],
        ['stream list', c.get(`/v1/streams/${bucket}`)],
        ['read', c.get(`${streamPath(bucket, key)}/records?seq_num=0`)],
        ['tail', c.get(`${streamPath(bucket, key)}/records/tail`)],
        ['404 bucket', c.get(bucketPath(uniq('missing')))],
        ['404 stream', c.get(streamPath(bucket, 'missing'))],
        ['400 read', c.get(`${streamPath(bucket, key)}/records`)],
        ['409 bucket', c.post(bucketPath(bucket), {})],
        ['416 read', c.get(`${streamPath(bucket, key)}/records?seq_num=99`)],
      ];
      for (const [what, p] of checks) {
        const res = await p;
        assertJsonContentType(res.headers, what);
        assert.ok(res.body !== undefined, `${what}: body should parse as JSON: ${res.text}`);
      }
    });

    test('malformed JSON bodies are 400 on every JSON route and change nothing', async () => {
      const routes: Array<[string, string]> = [
        ['POST', bucketPath(uniq('b'))],
        ['PUT', bucketPath(bucket)],
        ['POST', streamPath(bucket, uniq('k'))],
        ['PATCH', streamPath(bucket, key)],
        ['POST', `${streamPath(bucket, key)}/records`],
        ['POST', `${streamPath(bucket, key)}/trim`],
        ['POST', `${streamPath(bucket, key)}/fence`],
      ];
      for (const [method, path] of routes) {
        for (const raw of ['{', '{"records": [', 'not json', '{"a":1}}', '\u0000']) {
          assertError(await c.req(method, path, undefined, { raw }), 400, `${method} ${path} ${JSON.stringify(raw)}`);
        }
      }
      assert.equal((await c.tail(bucket, key)).seq_num, 2);
      assert.equal((await c.get(streamPath(bucket, key))).body.fencing_token, '');
    });

    test('a JSON body that is not an object is 400', async () => {
      for (const raw of ['[]', '"text"', '42', 'true']) {
        assertError(await c.req('POST', bucketPath(uniq('b')), undefined, { raw }), 400, `bucket ${raw}`);
        assertError(await c.req('POST', streamPath(bucket, uniq('k')), undefined, { raw }), 400, `stream ${raw}`);
        assertError(await c.req('POST', `${streamPath(bucket, key)}/records`, undefined, { raw }), 400, `append ${raw}`);
        assertError(await c.req('POST', `${streamPath(bucket, key)}/trim`, undefined, { raw }), 400, `trim ${raw}`);
      }
    });

    test('wrong field types are 400', async () => {
      assertError(await c.post(bucketPath(uniq('b')), { create_stream_on_read: 'true' }), 400, 'bucket boolean');
      assertError(await c.post(bucketPath(uniq('b')), { location: 7 }), 400, 'bucket location');
      assertError(await c.post(streamPath(bucket, uniq('k')), { batch_max_records: '5' }), 400, 'stream integer');
      assertError(await c.post(`${streamPath(bucket, key)}/records`, { records: [{ body: ['a'] }] }), 400, 'record body');
      assertError(await c.post(`${streamPath(bucket, key)}/trim`, { seq_num: true }), 400, 'trim seq_num');
      assertError(await c.post(`${streamPath(bucket, key)}/fence`, { fencing_token: {} }), 400, 'fence token');
    });

    test('unknown enum values are 400', async () => {
      assertError(await c.post(streamPath(bucket, uniq('k')), { class: 'premium' }), 400, 'class');
      assertError(await c.post(streamPath(bucket, uniq('k')), { timestamping_mode: 'CLIENT-PREFER' }), 400, 'mode is case-sensitive');
      assertError(await c.post(bucketPath(uniq('b')), { default_producer_policy: 'all' }), 400, 'policy');
      assertError(await c.get(`${streamPath(bucket, key)}/records?seq_num=0&format=utf8`), 400, 'read format');
    });

    test('an oversized control-plane body is refused and the server keeps serving', async () => {
      const name = uniq('big');
      const body = `{"location":"${'a'.repeat(2 * MiB)}"}`;
      let outcome: RawRes | Error;
      try {
        outcome = await rawRequest(srv.baseUrl, 'POST', bucketPath(name), { headers: { 'content-type': 'application/json' }, body });
      } catch (err) {
        outcome = err as Error;
      }
      if (!(outcome instanceof Error)) assert.equal(outcome.status, 400, `oversized bucket body: ${outcome.text}`);
      assert.equal(srv.proc.exitCode, null, 'the server is still running');
      assert.equal(await healthz(srv.baseUrl), 200);
      assertError(await c.get(bucketPath(name)), 404, 'nothing was created');
    });

    for (const declare of [false, true]) {
      test(`an append body streamed past the cap (${declare ? 'Content-Length' : 'chunked'}) is 400 or cut, and the server survives`, async () => {
        const total = 170 * MiB;
        const s = await c.freshStream();
        await c.appendOk(s.bucket, s.key, bodies(2));
        const outcome = await streamHugeBody(srv.baseUrl, `${s.path}/records`, total, declare);
        if ('status' in outcome) assert.equal(outcome.status, 400, 'an oversized append is 400');
        else assert.ok(!/timed out/.test(outcome.error.message), outcome.error.message);
        assert.equal(srv.proc.exitCode, null, 'the server is still running');
        assert.equal(srv.proc.signalCode, null, 'the server is still running');
        assert.equal(await healthz(srv.baseUrl), 200, 'healthz still answers');
        assert.equal((await c.tail(s.bucket, s.key)).seq_num, 2, 'nothing was appended');
        const ack = await c.appendOk(s.bucket, s.key, bodies(1, 'after'));
        assert.equal(ack.start.seq_num, 2, 'ordinary appends still work');
      });
    }
  });
}
