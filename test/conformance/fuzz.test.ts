// Bad input never crashes the star or answers 500 (spec: Errors; "bad input gets the envelope"): a
// seeded stream of malformed and half-valid requests (methods, paths with odd segments and escapes,
// queries, JSON bodies of the wrong shape) against both engines. Every answer is a status below 500
// with the error envelope on 4xx, and the star keeps serving. SVCD_FUZZ_SEED replays a run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, startServer } from '../helpers/server.ts';
import { rawRequest, stopServer } from './client.ts';
import { rng } from '../helpers/rng.ts';

/** Requests per engine: enough to cover every route with several shapes, quick on this host. */
const REQUESTS_PER_ENGINE = 600;

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];
const SEGMENTS = ['b', 'k', 'records', 'tail', 'subscribe', 'trim', 'fence', '%2F', '%ZZ', '%', '%00', '.', '..', '', 'a%2Fb', 'x'.repeat(300), '%F0%9F%98%80', 'api', '-x', 'v1', 'streams', 'buckets'];
const QUERIES = ['', '?seq_num=0', '?seq_num=-1', '?seq_num=1e3', '?timestamp_ms=x', '?tail_offset=5&seq_num=1', '?limit=99999999', '?max_bytes=-1', '?clamp=maybe', '?format=hex', '?start_after=%%%', '?seq_num=0&until_ms=abc', '?seq_num=99999999999999999999'];
const VALUES: unknown[] = [null, true, 0, -1, 1.5, 2 ** 60, '', 'x', 'express', [], {}, [{}], { body: 1 }, [{ body: 'x', body_b64: 'eA==' }], [{ body_b64: '!!' }], [{ body: 'x', headers: [{}] }], [{ body: 'x', headers: [{ name: 'a', value_b64: '%' }] }], [{ body: 'x', timestamp_ms: -1 }]];
const FIELDS = ['records', 'match_seq_num', 'fencing_token', 'seq_num', 'timestamp_ms', 'class', 'producer_policy', 'retention_max_age_ms', 'timestamping_mode', 'default_class', 'name', 'creation_token', 'create_stream_on_append', 'unknown_field', 'key_id', 'secret', 'bucket', 'scope', 'ttl_seconds'];

function body(r: () => number): string | undefined {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  switch (Math.floor(r() * 6)) {
    case 0: return undefined;
    case 1: return pick(['{', '[]', 'null', '"x"', '{"records":', '\u0000', '{"a":1}garbage', ' ']);
    default: {
      const o: Record<string, unknown> = {};
      for (let i = Math.floor(r() * 4); i > 0; i--) o[pick(FIELDS)] = pick(VALUES);
      return JSON.stringify(o);
    }
  }
}

for (const engine of ENGINES) {
  test(`malformed requests never answer 5xx and the star survives (${engine})`, { timeout: 120_000 }, async (t) => {
    const seed = Number(process.env.SVCD_FUZZ_SEED ?? Date.now() % 1e9);
    t.diagnostic(`seed ${seed} (SVCD_FUZZ_SEED replays)`);
    const r = rng(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
    const srv = await startServer({ engine });
    try {
      // Something real to hit: a bucket b with a stream k holding a record.
      await rawRequest(srv.baseUrl, 'POST', '/v1/buckets/b', { body: '{}', headers: { 'content-type': 'application/json' } });
      await rawRequest(srv.baseUrl, 'POST', '/v1/streams/b/k', { body: '{}', headers: { 'content-type': 'application/json' } });
      await rawRequest(srv.baseUrl, 'POST', '/v1/streams/b/k/records', { body: '{"records":[{"body":"x"}]}', headers: { 'content-type': 'application/json' } });
      let prev = '';
      for (let i = 0; i < REQUESTS_PER_ENGINE; i++) {
        const method = pick(METHODS);
        const depth = 1 + Math.floor(r() * 5);
        const segs = Array.from({ length: depth }, (_, j) => (j === 0 ? 'v1' : j === 1 ? pick(['streams', 'buckets', 'token', ...SEGMENTS]) : pick(SEGMENTS)));
        const path = `/${segs.join('/')}${pick(QUERIES)}`;
        const b = method === 'GET' || method === 'HEAD' ? undefined : body(r);
        // An explicit length: Node's client frames no body for DELETE/OPTIONS on its own, and unframed
        // bytes would be the next request's start, a client error rather than the star's.
        const headers: Record<string, string> = b === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(b)) };
        if (r() < 0.1) headers['last-event-id'] = pick(['0', '-1', 'x', '99999999999']);
        if (r() < 0.1) { headers.origin = 'https://x.example'; headers['access-control-request-method'] = pick(METHODS); }
        const what = `${method} ${path} ${b ?? ''} (after ${prev})`;
        prev = `${method} ${path} ${b ?? ''}`;
        if (path.includes('/subscribe') && method === 'GET') continue; // a valid subscribe stays open by design
        let res: Awaited<ReturnType<typeof rawRequest>>;
        try {
          res = await rawRequest(srv.baseUrl, method, path, { headers, ...(b !== undefined ? { body: b } : {}) });
        } catch (err) {
          assert.fail(`${what}: ${(err as Error).message}`);
        }
        assert.ok(res.status < 500, `${what}: ${res.status} ${res.text}`);
        if (res.status >= 400 && method !== 'HEAD') {
          let envelope: { error?: unknown } = {};
          try { envelope = JSON.parse(res.text) as { error?: unknown }; } catch { /* reported below */ }
          assert.equal(typeof envelope.error, 'string', `${what}: ${res.status} without the error envelope: ${JSON.stringify(res.text)}`);
        }
      }
      const health = await rawRequest(srv.baseUrl, 'GET', '/healthz');
      assert.equal(health.status, 200, 'still serving');
      assert.doesNotMatch(srv.output(), /bug: unmapped error/, 'no request reached the 500 path');
    } finally {
      await stopServer(srv);
    }
  });
}
