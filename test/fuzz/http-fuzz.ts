// A property-based fuzzer (fast-check) over every HTTP route of a real star: requests are generated
// from the spec's grammar (routes, percent-encoded bucket and key segments, read queries, append
// envelopes, stream and bucket configs, trims, fences, exchanges) and then, some of them, mutated
// (odd segments, repeated and out-of-range query values, bytes flipped, inserted or cut in the body,
// bytes that are not UTF-8). The property, per request:
//   - the star answers, within REQUEST_WAIT_MS (never a hang), and never with a 5xx;
//   - a 4xx is the spec's envelope {error: string} as JSON (a 405 with Allow);
//   - a success reads back exactly: an appended batch is read back byte for byte at [start, end),
//     a created or changed stream or bucket is what a GET then shows, a fence installs its token.
// After a run the star must still serve and must not have logged a bug. Used by
// test/fuzz/http.test.ts (bounded, in `npm test`) and test/fuzz/run.ts (long runs, any seed).
import http from 'node:http';
import assert from 'node:assert/strict';
import fc from 'fast-check';

/** Every request gives up after this long: past it the star is taken to hang. */
export const REQUEST_WAIT_MS = 10_000;

export interface FuzzRequest {
  method: string;
  /** The raw request target: path (still percent-encoded) and query. */
  target: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** What the request means when it came from the grammar: the oracle's read-back uses it. */
  meaning?: Meaning;
}

type Meaning =
  | { kind: 'append'; stream: string }
  | { kind: 'stream-write'; stream: string }
  | { kind: 'bucket-write'; bucket: string }
  | { kind: 'fence'; stream: string };

export interface FuzzAnswer { status: number; headers: http.IncomingHttpHeaders; body: Buffer }

// ------------------------------------------------------------------ the grammar

/** Buckets the run sets up (create_stream_on_append/read on the first), and names outside the rules. */
export const FUZZ_BUCKETS = ['fz', 'fz2'];
const bucketSeg = fc.oneof(
  { weight: 10, arbitrary: fc.constantFrom(...FUZZ_BUCKETS) },
  { weight: 2, arbitrary: fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,12}$/) },
  { weight: 1, arbitrary: fc.constantFrom('api', '-x', '.', '..', '', 'B%41D', 'x'.repeat(129), '%ZZ', 'a%2Fb') },
);

const UNRESERVED = /[A-Za-z0-9\-._~]/;
/** Bytes as one path segment: unreserved characters as they are, every other byte escaped (upper or
 *  lower case hex, so both spellings are exercised). */
const encodeBytes = (bytes: Uint8Array, lower: boolean): string => Array.from(bytes, (b) => {
  const ch = String.fromCharCode(b);
  if (b < 0x80 && UNRESERVED.test(ch)) return ch;
  const hex = b.toString(16).padStart(2, '0');
  return `%${lower ? hex : hex.toUpperCase()}`;
}).join('');

const keySeg = fc.oneof(
  { weight: 10, arbitrary: fc.constantFrom('k', 'k2', '%2E', '%2E%2E', 'a%2Fb', '%FF%FE', '%F0%9F%98%80', 'sp%20ace') },
  { weight: 3, arbitrary: fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 12 }), fc.boolean()).map(([b, l]) => encodeBytes(b, l)) },
  { weight: 1, arbitrary: fc.constantFrom('.', '..', '', '%', '%G0', '%2', 'x'.repeat(1100), '%00', 'a+b', '%2e') },
);

const U64_EDGES = ['0', '1', '2', '3', '9007199254740991', '9007199254740992', '18446744073709551615', '18446744073709551616', '-1', '1e3', '', 'x', '00000001', ' 1'];
const I64_EDGES = ['0', '-1', '9223372036854775807', '9223372036854775808', '-9223372036854775808', '-9223372036854775809', '1700000000000', 'x', ''];
const u64Text = fc.oneof(fc.constantFrom(...U64_EDGES), fc.nat({ max: 50 }).map(String), fc.bigInt({ min: 0n, max: (1n << 65n) }).map(String));
const i64Text = fc.oneof(fc.constantFrom(...I64_EDGES), fc.integer({ min: -5, max: 2_000_000_000_000 }).map(String));

/** A query string: named parameters with valid or broken values, sometimes repeated or unknown. */
const query = fc.array(fc.oneof(
  fc.tuple(fc.constant('seq_num'), u64Text),
  fc.tuple(fc.constant('tail_offset'), u64Text),
  fc.tuple(fc.constant('timestamp_ms'), i64Text),
  fc.tuple(fc.constant('until_ms'), i64Text),
  fc.tuple(fc.constant('limit'), u64Text),
  fc.tuple(fc.constant('max_bytes'), u64Text),
  fc.tuple(fc.constant('clamp'), fc.constantFrom('true', 'false', '', 'maybe')),
  fc.tuple(fc.constant('format'), fc.constantFrom('raw', 'base64', 'hex')),
  fc.tuple(fc.constant('start_after'), fc.constantFrom('', 'fz', 'aw', '!!', '%%%')),
  fc.tuple(fc.constantFrom('zzz', '', 'seq%5Fnum'), fc.constantFrom('1', '')),
), { maxLength: 4 }).map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}`));

/** Text fields: ASCII, any graphemes, any code points, and the edges (a lone surrogate is valid JSON
 *  as an escape but no Unicode text; NUL, quotes, backslashes and separators need escapes). */
const text = fc.oneof(
  fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 20 }), fc.string({ unit: 'binary', maxLength: 8 }),
  fc.constantFrom('', '\u0000', '\ud800', 'a\udfff', '\udc00\ud800', 'é', '😀', '"', '\\', '\u2028', '\ufeff'),
);
const b64 = fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b).toString('base64'));
const timestamp = fc.oneof(fc.integer({ min: 0, max: 2_000_000_000_000 }), fc.constantFrom(-1, 2 ** 53, 1.5));

/** Mostly absent (a record field JSON.stringify leaves out), sometimes `arb`. */
const rarely = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });

const header = fc.oneof(
  { weight: 4, arbitrary: fc.record({ name: text, value: text }) },
  { weight: 2, arbitrary: fc.record({ name_b64: b64, value_b64: b64 }) },
  {
    weight: 1,
    arbitrary: fc.record({
      name: fc.option(text, { nil: undefined }), name_b64: fc.option(fc.oneof(b64, fc.constant('!!')), { nil: undefined }),
      value: fc.option(text, { nil: undefined }), value_b64: fc.option(b64, { nil: undefined }),
    }, { requiredKeys: [] }),
  },
);

const recordIn = fc.oneof(
  { weight: 6, arbitrary: fc.record({ body: text }) },
  { weight: 3, arbitrary: fc.record({ body_b64: b64 }) },
  { weight: 3, arbitrary: fc.record({ body: text, headers: fc.array(header, { maxLength: 3 }), timestamp_ms: fc.nat({ max: 2_000_000_000_000 }) }, { requiredKeys: ['body'] }) },
  {
    weight: 1,
    arbitrary: fc.record({
      body: fc.option(text, { nil: undefined }), body_b64: fc.option(b64, { nil: undefined }),
      headers: fc.option(fc.array(header, { maxLength: 3 }), { nil: undefined }),
      timestamp_ms: fc.option(timestamp, { nil: undefined }),
      timestmp_ms: rarely(fc.constant(1)),
    }, { requiredKeys: [] }),
  },
);

const appendBody = fc.record({
  records: fc.oneof({ weight: 12, arbitrary: fc.array(recordIn, { minLength: 1, maxLength: 5 }) }, { weight: 1, arbitrary: fc.constant([]) }),
  match_seq_num: rarely(fc.oneof(fc.nat({ max: 20 }), fc.constant(2 ** 64))),
  fencing_token: rarely(fc.constantFrom('', 'tok', 'other')),
}, { requiredKeys: ['records'] });

const ENUMS = { class: ['standard', 'express', '', 'bogus'], producer_policy: ['any', 'fenced', ''], timestamping_mode: ['client-prefer', 'client-require', 'arrival', 'x'] };
const configValue = (k: string): fc.Arbitrary<unknown> => {
  if (k.endsWith('class')) return fc.constantFrom(...ENUMS.class);
  if (k.endsWith('producer_policy')) return fc.constantFrom(...ENUMS.producer_policy);
  if (k.endsWith('timestamping_mode')) return fc.constantFrom(...ENUMS.timestamping_mode);
  if (k.endsWith('uncapped') || k.startsWith('create_stream')) return fc.oneof(fc.boolean(), fc.constant('yes'));
  if (k === 'location' || k === 'creation_token') return text;
  return fc.oneof(fc.nat({ max: 100_000 }), fc.constantFrom(-1, 2 ** 60, 'x', null));
};
const configBody = (keys: string[]): fc.Arbitrary<Record<string, unknown>> => fc.subarray([...keys, 'unknown_field'], { maxLength: 4 })
  .chain((ks) => fc.record(Object.fromEntries(ks.map((k) => [k, configValue(k)]))));
const STREAM_KEYS = ['class', 'producer_policy', 'retention_max_age_ms', 'retention_max_bytes', 'batch_max_bytes', 'timestamping_mode', 'timestamping_uncapped', 'creation_token'];
const BUCKET_KEYS = ['location', 'create_stream_on_append', 'create_stream_on_read', 'default_class', 'default_producer_policy', 'default_retention_max_bytes', 'default_timestamping_mode', 'creation_token'];

/** JSON text, then (sometimes) its bytes mutated: flipped, inserted (0xFF and friends), cut. */
const mutated = (value: fc.Arbitrary<unknown>): fc.Arbitrary<Buffer> => fc.tuple(
  value.map((v) => Buffer.from(JSON.stringify(v) ?? '')),
  fc.array(fc.tuple(fc.nat(), fc.constantFrom('flip', 'insert', 'cut', 'drop'), fc.constantFrom(0xff, 0xc3, 0x80, 0x22, 0x5c, 0x00, 0x7b, 0x20, 0xed)), { maxLength: 2 }),
  fc.nat({ max: 3 }),
).map(([b, edits, keep]) => {
  if (keep !== 0 || edits.length === 0) return b; // three in four are sent as generated
  let out = Buffer.from(b);
  for (const [at, op, byte] of edits) {
    const i = out.length === 0 ? 0 : at % out.length;
    if (op === 'flip' && out.length) out[i] = byte;
    else if (op === 'insert') out = Buffer.concat([out.subarray(0, i), Buffer.of(byte), out.subarray(i)]);
    else if (op === 'cut') out = out.subarray(0, i);
    else out = Buffer.concat([out.subarray(0, i), out.subarray(i + 1)]);
  }
  return out;
});

const extraHeaders = fc.record({
  'content-type': fc.constantFrom('application/json', 'text/plain', 'application/json; charset=utf-8', ''),
  'last-event-id': fc.constantFrom('0', '2', '18446744073709551615', '18446744073709551616', '-1', 'x'),
  origin: fc.constantFrom('https://x.example', 'null'),
  authorization: fc.constantFrom('Bearer x', 'Basic Og==', ''),
  'x-junk': fc.string({ maxLength: 20 }).map((s) => s.replace(/[^\x20-\x7e]/g, '')),
}, { requiredKeys: [] }).map((h) => Object.fromEntries(Object.entries(h).filter(([, v]) => v !== '')));

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];
const method = (usual: string): fc.Arbitrary<string> => fc.oneof({ weight: 8, arbitrary: fc.constant(usual) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) });

const stream = (b: string, k: string): string => `/v1/streams/${b}/${k}`;

/** One request of every route's shape, a random path, or a route's shape with another method. */
const weighted = <T>(weight: number, arbitrary: fc.Arbitrary<T>): fc.WeightedArbitrary<T> => ({ weight, arbitrary });

export const fuzzRequest: fc.Arbitrary<FuzzRequest> = fc.tuple(bucketSeg, keySeg, query, extraHeaders).chain(([b, k, q, headers]) => fc.oneof(
  weighted(12, fc.tuple(method('POST'), mutated(appendBody)).map(([m, body]) => ({ method: m, target: `${stream(b, k)}/records`, headers, body, meaning: { kind: 'append', stream: stream(b, k) } as Meaning }))),
  weighted(6, fc.constant({ method: 'GET', target: `${stream(b, k)}/records${q}`, headers })),
  fc.constant({ method: 'GET', target: `${stream(b, k)}/records/tail${q}`, headers }),
  fc.constant({ method: 'GET', target: `${stream(b, k)}/records/subscribe${q}`, headers }),
  fc.tuple(method('POST'), mutated(fc.oneof(fc.record({ seq_num: fc.oneof(fc.nat({ max: 10 }), fc.constant(2 ** 64)) }), fc.record({ timestamp_ms: timestamp }), fc.constant({})))).map(([m, body]) => ({ method: m, target: `${stream(b, k)}/trim`, headers, body })),
  fc.tuple(method('POST'), fc.constantFrom('', 'tok', 'other')).map(([m, t]) => ({
    method: m, target: `${stream(b, k)}/fence`, headers, body: Buffer.from(JSON.stringify({ fencing_token: t })), meaning: { kind: 'fence', stream: stream(b, k) } as Meaning,
  })),
  fc.tuple(fc.constantFrom('POST', 'PATCH'), mutated(configBody(STREAM_KEYS))).map(([m, body]) => ({ method: m, target: stream(b, k), headers, body, meaning: { kind: 'stream-write', stream: stream(b, k) } as Meaning })),
  fc.constantFrom('GET', 'DELETE', 'HEAD').map((m) => ({ method: m, target: `${stream(b, k)}${q}`, headers })),
  fc.constant({ method: 'GET', target: `/v1/streams/${b}${q}`, headers }),
  fc.tuple(fc.constantFrom('POST', 'PUT'), mutated(configBody(BUCKET_KEYS))).map(([m, body]) => ({ method: m, target: `/v1/buckets/${b}`, headers, body, meaning: { kind: 'bucket-write', bucket: `/v1/buckets/${b}` } as Meaning })),
  fc.constantFrom('GET', 'DELETE').map((m) => ({ method: m, target: `/v1/buckets/${b}`, headers })),
  fc.constant({ method: 'GET', target: `/v1/buckets${q}`, headers }),
  mutated(fc.record({ key_id: text, secret: text, scope: fc.constant('svc:admin'), ttl_seconds: fc.integer() }, { requiredKeys: [] })).map((body) => ({ method: 'POST', target: '/v1/token/exchange', headers, body })),
  fc.constant({ method: 'GET', target: `/v1/objects/${k}${q}`, headers }),
  fc.tuple(fc.constantFrom(...METHODS), fc.array(fc.oneof(bucketSeg, keySeg, fc.constantFrom('v1', 'streams', 'buckets', 'records', 'tail', 'healthz')), { maxLength: 6 }))
    .map(([m, segs]) => ({ method: m, target: `/${segs.join('/')}${q}`, headers })),
));

// ------------------------------------------------------------------ sending

/** One request over a keep-alive agent; a subscribe that opens (200, an event stream) is closed at once. */
export function send(baseUrl: string, agent: http.Agent, r: FuzzRequest): Promise<FuzzAnswer> {
  const u = new URL(baseUrl);
  const headers: Record<string, string> = { ...r.headers };
  // An explicit length: node's client frames no body for some methods on its own.
  if (r.body !== undefined) headers['content-length'] = String(r.body.length);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: Number(u.port), method: r.method, path: r.target, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      if (String(res.headers['content-type']).startsWith('text/event-stream')) {
        res.destroy();
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.alloc(0) });
        return;
      }
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => { clearTimeout(timer); resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }); });
      res.on('error', (err) => { clearTimeout(timer); reject(err); });
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${REQUEST_WAIT_MS} ms (a hang)`)), REQUEST_WAIT_MS);
    req.on('error', (err) => { clearTimeout(timer); reject(err); });
    req.end(r.body);
  });
}

// ------------------------------------------------------------------ the oracle

const asJson = (b: Buffer): any => { try { return JSON.parse(b.toString('utf8')); } catch { return undefined; } };

/** The bytes of a byte field as sent (`name` as UTF-8 text, or `name_b64`). */
function sentBytes(o: Record<string, unknown>, name: string): Buffer {
  if (typeof o[name] === 'string') {
    // Text that is no Unicode (a lone surrogate) has no UTF-8 bytes: accepting it changes it.
    assert.ok((o[name] as string).isWellFormed(), `${name} ${JSON.stringify(o[name])} is no Unicode text, yet it was accepted`);
    return Buffer.from(o[name] as string, 'utf8');
  }
  if (typeof o[`${name}_b64`] === 'string') return Buffer.from(o[`${name}_b64`] as string, 'base64');
  return Buffer.alloc(0);
}

/** The bytes of a byte field as read (the read encoding: plain when UTF-8, else `_b64`). */
function readBytes(o: Record<string, unknown>, name: string): Buffer {
  if (typeof o[name] === 'string') return Buffer.from(o[name] as string, 'utf8');
  if (typeof o[`${name}_b64`] === 'string') return Buffer.from(o[`${name}_b64`] as string, 'base64');
  return Buffer.alloc(0);
}

/** Checks one answer; reads back through `get` what a success claims. */
export async function checkAnswer(r: FuzzRequest, a: FuzzAnswer, get: (target: string) => Promise<FuzzAnswer>): Promise<void> {
  const what = `${r.method} ${r.target} ${r.body ? JSON.stringify(r.body.toString('latin1').slice(0, 300)) : ''}`;
  // 501 is the spec's answer to the exchange on a star that cannot sign (auth off here).
  const unimplemented = a.status === 501 && r.target.split('?')[0] === '/v1/token/exchange';
  assert.ok(a.status >= 200 && (a.status < 500 || unimplemented), `${what}: status ${a.status} ${a.body.toString().slice(0, 300)}`);
  if (a.status >= 400) {
    if (r.method === 'HEAD') return;
    assert.match(String(a.headers['content-type']), /^application\/json/, `${what}: a ${a.status} is JSON`);
    const env = asJson(a.body);
    assert.equal(typeof env?.error, 'string', `${what}: a ${a.status} carries the envelope: ${a.body.toString().slice(0, 300)}`);
    if (a.status === 405) assert.ok(String(a.headers.allow ?? '').length > 0, `${what}: a 405 carries Allow`);
    return;
  }
  if (r.method === 'HEAD' || !r.meaning) return;
  const m = r.meaning;
  const got = asJson(a.body);
  if (m.kind === 'append' && a.status === 200) {
    const sent = asJson(r.body ?? Buffer.alloc(0)) as { records: Record<string, unknown>[] };
    assert.ok(sent && Array.isArray(sent.records), `${what}: a 200 for a body that is not an append envelope`);
    const n = got.end.seq_num - got.start.seq_num;
    assert.equal(n, sent.records.length, `${what}: start/end cover the batch`);
    const page = await get(`${m.stream}/records?seq_num=${got.start.seq_num}&limit=${n}&clamp=true`);
    const back = asJson(page.body);
    // A concurrent trim or delete in the same run can take records away; what is read must match.
    if (page.status !== 200) return;
    for (const rec of back.records as Record<string, unknown>[]) {
      const i = (rec.seq_num as number) - got.start.seq_num;
      if (i < 0 || i >= n) continue;
      const want = sent.records[i];
      assert.deepEqual(readBytes(rec, 'body'), sentBytes(want, 'body'), `${what}: record ${i}'s body reads back exactly`);
      const wh = (want.headers as Record<string, unknown>[] | undefined) ?? [];
      const rh = (rec.headers as Record<string, unknown>[] | undefined) ?? [];
      assert.equal(rh.length, wh.length, `${what}: record ${i}'s headers`);
      rh.forEach((h, j) => {
        assert.deepEqual(readBytes(h, 'name'), sentBytes(wh[j], 'name'), `${what}: header ${j} name`);
        assert.deepEqual(readBytes(h, 'value'), sentBytes(wh[j], 'value'), `${what}: header ${j} value`);
      });
    }
  } else if (m.kind === 'stream-write' && (a.status === 200 || a.status === 201)) {
    const now = asJson((await get(m.stream)).body);
    for (const [k, v] of Object.entries(got)) if (k !== 'fencing_token') assert.deepEqual(now?.[k], v, `${what}: GET shows ${k} as answered`);
  } else if (m.kind === 'bucket-write' && (a.status === 200 || a.status === 201)) {
    const now = asJson((await get(m.bucket)).body);
    assert.deepEqual(now, got, `${what}: GET shows the bucket as answered`);
  } else if (m.kind === 'fence' && a.status === 200) {
    const token = (asJson(r.body ?? Buffer.alloc(0)) as { fencing_token: string }).fencing_token;
    const now = asJson((await get(m.stream)).body);
    if (now) assert.equal(now.fencing_token, token, `${what}: the fence installed its token`);
  }
}

export interface FuzzRun { runs: number; seed: number; path?: string }

/** Runs the property against a star at `baseUrl`; throws fast-check's report (seed and path) on failure. */
export async function fuzzStar(baseUrl: string, run: FuzzRun): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const get = (target: string): Promise<FuzzAnswer> => send(baseUrl, agent, { method: 'GET', target, headers: {} });
  try {
    await send(baseUrl, agent, { method: 'POST', target: '/v1/buckets/fz', headers: {}, body: Buffer.from('{"create_stream_on_append":true,"create_stream_on_read":true}') });
    await send(baseUrl, agent, { method: 'POST', target: '/v1/buckets/fz2', headers: {}, body: Buffer.from('{}') });
    await fc.assert(fc.asyncProperty(fuzzRequest, async (r) => {
      let a: FuzzAnswer;
      try {
        a = await send(baseUrl, agent, r);
      } catch (err) {
        throw new Error(`${r.method} ${r.target}: ${(err as Error).message}`);
      }
      await checkAnswer(r, a, get);
    }), { numRuns: run.runs, seed: run.seed, ...(run.path ? { path: run.path } : {}), includeErrorInReport: true });
    const health = await get('/healthz');
    assert.equal(health.status, 200, 'the star keeps serving');
  } finally {
    agent.destroy();
  }
}
