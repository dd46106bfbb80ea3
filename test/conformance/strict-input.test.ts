// Inputs a strict server refuses or reads exactly (issue 14, and the input parts of issue 18), on both
// engines: JSON bodies with bytes that are not UTF-8, unknown fields inside records and headers,
// uint64 query values up to 2^64-1 (and past it), repeated query parameters, and the keys `.` and
// `..` addressed as `%2E` and `%2E%2E`.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { ENGINES, startServer, type RunningServer } from '../helpers/server.ts';
import { rawConn } from '../helpers/raw-conn.ts';
import { Client, assertError, assertPosition, bodies, rawRequest, stopServer, streamPath, type RawRes } from './client.ts';

const U64_MAX = '18446744073709551615';
const U64_OVER = '18446744073709551616';
const I64_MAX = '9223372036854775807';
const I64_OVER = '9223372036854775808';
const I64_MIN = '-9223372036854775808';

/** How long a step waits for an answer it expects (a bounded wait, never an assertion on time). */
const ANSWER_WAIT_MS = 10_000;

function json(res: RawRes): any {
  try { return JSON.parse(res.text); } catch { return undefined; }
}

function assertRawEnvelope(res: RawRes, status: number, what: string): any {
  assert.equal(res.status, status, `${what}: ${res.status} ${res.text}`);
  assert.match(String(res.headers['content-type']), /application\/json/, what);
  const body = json(res);
  assert.equal(typeof body?.error, 'string', `${what}: envelope ${res.text}`);
  return body;
}

for (const engine of ENGINES) {
  describe(`strict input (${engine})`, () => {
    let srv: RunningServer;
    let c: Client;
    before(async () => { srv = await startServer({ engine }); c = new Client(srv.baseUrl); });
    after(() => stopServer(srv));

    test('a JSON body with bytes that are not UTF-8 is 400 and stores nothing (fast-path shape and general shape)', async () => {
      const { bucket, key, path } = await c.freshStream();
      await c.appendOk(bucket, key, bodies(1));
      const bad = [
        Buffer.concat([Buffer.from('{"records":[{"body":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}]}')]),
        Buffer.concat([Buffer.from('{"records":[{"body":"ok"},{"body":"a'), Buffer.from([0xc3]), Buffer.from('"}]}')]),
        Buffer.concat([Buffer.from('{ "records": [ {"body": "x", "headers":[{"name":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}]} ] }')]),
        Buffer.concat([Buffer.from('{"records":[{"body":"'), Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]), Buffer.from('"}],"match_seq_num":1}')]),
      ];
      for (const b of bad) {
        const res = await rawRequest(srv.baseUrl, 'POST', `${path}/records`, { headers: { 'content-type': 'application/json', 'content-length': String(b.length) }, body: b });
        const env = assertRawEnvelope(res, 400, `append ${b.toString('hex')}`);
        assert.match(env.error, /UTF-8/);
      }
      assert.equal((await c.tail(bucket, key)).seq_num, 1, 'nothing stored');
      const page = await c.readOk(bucket, key, { seq_num: 0 });
      assert.deepEqual(page.records.map((r: { body: string }) => r.body), ['r0']);
      // Valid multi-byte UTF-8 still goes through, byte for byte.
      const ok = await c.appendOk(bucket, key, [{ body: 'café ✓ 😀' }]);
      assert.equal(ok.start.seq_num, 1);
      assert.equal((await c.readOk(bucket, key, { seq_num: 1 })).records[0].body, 'café ✓ 😀');
      // Other JSON routes refuse such bodies the same way.
      const cfg = Buffer.concat([Buffer.from('{"creation_token":"'), Buffer.from([0xff]), Buffer.from('"}')]);
      const res = await rawRequest(srv.baseUrl, 'POST', streamPath(bucket, 'other'), { headers: { 'content-length': String(cfg.length) }, body: cfg });
      assertRawEnvelope(res, 400, 'create with a non-UTF-8 creation_token');
      assert.equal((await c.get(streamPath(bucket, 'other'))).status, 404, 'not created');
    });

    test('a body in a content coding (Content-Encoding: gzip) is 415 with Accept-Encoding: identity, and stores nothing', async () => {
      const { bucket, key, path } = await c.freshStream();
      const plain = Buffer.from(JSON.stringify({ records: [{ body: 'zipped' }] }));
      for (const [coding, body] of [['gzip', gzipSync(plain)], ['gzip', plain], ['identity, br', plain]] as const) {
        const res = await rawRequest(srv.baseUrl, 'POST', `${path}/records`, {
          headers: { 'content-type': 'application/json', 'content-encoding': coding, 'content-length': String(body.length) }, body,
        });
        const env = assertRawEnvelope(res, 415, `append in ${coding}`);
        assert.match(env.error, /Content-Encoding/);
        assert.equal(res.headers['accept-encoding'], 'identity');
      }
      // Repeated fields are one list: identity, then gzip, is gzip.
      const zipped = gzipSync(plain);
      const twice = await rawConn(srv.port);
      try {
        twice.sock.write(`POST ${path}/records HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: identity\r\n`
          + `Content-Encoding: gzip\r\nContent-Length: ${zipped.length}\r\nConnection: close\r\n\r\n`);
        twice.sock.write(zipped);
        const t0 = Date.now();
        while (!/\r\n\r\n/.test(twice.text()) && !twice.closed() && Date.now() - t0 < ANSWER_WAIT_MS) await new Promise((r) => setTimeout(r, 10));
        assert.match(twice.text(), /^HTTP\/1\.1 415 /, twice.text());
      } finally {
        twice.sock.destroy();
      }
      assert.equal((await c.tail(bucket, key)).seq_num, 0, 'nothing stored');
      const res = await rawRequest(srv.baseUrl, 'POST', `${path}/records`, {
        headers: { 'content-type': 'application/json', 'content-encoding': 'identity', 'content-length': String(plain.length) }, body: plain,
      });
      assert.equal(res.status, 200, res.text);
    });

    test('unknown fields inside a record or a header are 400, like unknown top-level fields', async () => {
      const { bucket, key } = await c.freshStream();
      for (const records of [
        [{ body: 'x', timestmp_ms: 5 }],
        [{ body: 'x', headers: [{ name: 'a', value: 'b', vlaue: 'c' }] }],
        [{ body: 'x' }, { body_b64: 'eA==', extra: null }],
      ]) {
        const res = await c.append(bucket, key, records as never);
        assertError(res, 400, JSON.stringify(records));
        assert.match(res.body.error, /unknown field (timestmp_ms|vlaue|extra)/);
      }
      assert.equal((await c.tail(bucket, key)).seq_num, 0, 'nothing stored');
    });

    test('seq_num up to 2^64-1 parses exactly: past the tail is 416, with clamp an empty page at the tail', async () => {
      const { bucket, key, path } = await c.freshStream();
      await c.appendOk(bucket, key, bodies(3));
      for (const seq of [U64_MAX, '9007199254740993', '9007199254740992', '100']) {
        const res = await c.get(`${path}/records?seq_num=${seq}`);
        assertError(res, 416, `seq_num=${seq}`);
        assert.ok(res.body.error.includes(seq), `the error names the start asked for: ${res.body.error}`);
        const clamped = await c.get(`${path}/records?seq_num=${seq}&clamp=true`);
        assert.equal(clamped.status, 200, clamped.text);
        assert.deepEqual(clamped.body.records, []);
        assert.equal(clamped.body.tail.seq_num, 3);
      }
      // Leading zeros are the same number.
      const z = await c.get(`${path}/records?seq_num=000000000000000000000000001`);
      assert.equal(z.status, 200, z.text);
      assert.equal(z.body.records[0].seq_num, 1);
    });

    test('uint64 and int64 query values past their range are 400 naming the parameter', async () => {
      const { path } = await c.freshStream();
      const cases: [string, string][] = [
        [`seq_num=${U64_OVER}`, 'seq_num'], [`seq_num=-1`, 'seq_num'], [`tail_offset=${U64_OVER}`, 'tail_offset'],
        [`seq_num=0&limit=${U64_OVER}`, 'limit'], [`seq_num=0&max_bytes=${U64_OVER}0`, 'max_bytes'],
        [`timestamp_ms=${I64_OVER}`, 'timestamp_ms'], [`seq_num=0&until_ms=-${I64_OVER}1`, 'until_ms'],
        [`seq_num=1e3`, 'seq_num'], [`seq_num=+1`, 'seq_num'], [`seq_num=`, 'seq_num'],
      ];
      for (const [q, name] of cases) {
        const res = await c.get(`${path}/records?${q}`);
        assertError(res, 400, q);
        assert.ok(res.body.error.includes(name), `${q}: the error names ${name}: ${res.body.error}`);
      }
      const list = await c.get(`/v1/buckets?limit=${U64_OVER}`);
      assertError(list, 400, 'list limit');
    });

    test('uint64 and int64 knobs at their extremes get the answer their meaning calls for', async () => {
      const { bucket, key, path } = await c.freshStream();
      await c.appendOk(bucket, key, bodies(3));
      const all = await c.get(`${path}/records?tail_offset=${U64_MAX}&limit=${U64_MAX}&max_bytes=${U64_MAX}&until_ms=${I64_MAX}`);
      assert.equal(all.status, 200, all.text);
      assert.deepEqual(all.body.records.map((r: { seq_num: number }) => r.seq_num), [0, 1, 2], 'an offset past the history starts at the earliest record');
      const late = await c.get(`${path}/records?timestamp_ms=${I64_MAX}`);
      assert.equal(late.status, 200, late.text);
      assert.deepEqual(late.body.records, [], 'no record is stamped that late');
      const early = await c.get(`${path}/records?timestamp_ms=${I64_MIN}`);
      assert.equal(early.body.records.length, 3, 'every record is stamped after the earliest int64');
      const none = await c.get(`${path}/records?seq_num=0&until_ms=${I64_MIN}`);
      assert.deepEqual(none.body.records, [], 'nothing is stamped before the earliest int64');
      assertPosition(none.body.tail);
      const buckets = await c.get(`/v1/buckets?limit=${U64_MAX}`);
      assert.equal(buckets.status, 200, 'a list limit is clamped');
    });

    test('times past 2^53-1: a record stamped 2^53-1 lies before every later bound; a later record time is capped, or 400 uncapped', async () => {
      const SAFE_MAX = String(Number.MAX_SAFE_INTEGER);
      const PAST_SAFE = '9007199254740992';
      const { bucket, key, path } = await c.freshStream({ timestamping_uncapped: true });
      await c.appendOk(bucket, key, [{ body: 'latest', timestamp_ms: Number.MAX_SAFE_INTEGER }]);
      for (const bound of [PAST_SAFE, I64_MAX]) {
        const after = await c.get(`${path}/records?timestamp_ms=${bound}`);
        assert.deepEqual(after.body.records, [], `no record is stamped at or after ${bound}`);
        const before = await c.get(`${path}/records?seq_num=0&until_ms=${bound}`);
        assert.deepEqual(before.body.records.map((r: { timestamp_ms: number }) => r.timestamp_ms), [Number.MAX_SAFE_INTEGER], `the record is before until_ms=${bound}`);
      }
      const at = await c.get(`${path}/records?timestamp_ms=${SAFE_MAX}`);
      assert.equal(at.body.records.length, 1, 'a start at the record\'s own time finds it');
      // An uncapped stream would have to keep a later time as given: refused, nothing stored.
      const raw = (ts: string): string => `{"records":[{"body":"x","timestamp_ms":${ts}}]}`;
      assertError(await c.post(`${path}/records`, undefined, { raw: raw(I64_MAX) }), 400, 'uncapped, past 2^53-1');
      assert.equal((await c.get(`${path}/records/tail`)).body.seq_num, 1, 'nothing appended');
      // Capped (the default), a time ahead of arrival is arrival, however far ahead.
      const capped = await c.freshStream();
      const before = Date.now();
      for (const ts of [PAST_SAFE, I64_MAX]) {
        const res = await c.post(`${capped.path}/records`, undefined, { raw: raw(ts) });
        assert.equal(res.status, 200, res.text);
        assert.ok(res.body.end.timestamp_ms >= before && res.body.end.timestamp_ms <= Date.now(), `${ts} is capped at arrival: ${res.text}`);
      }
      assertError(await c.post(`${capped.path}/records`, undefined, { raw: raw(I64_OVER + '0') }), 400, 'past int64');
    });

    test('Last-Event-ID up to 2^64-1 waits at the tail; past it is 400', async () => {
      const { path } = await c.freshStream();
      const over = await c.get(`${path}/records/subscribe`, { headers: { 'last-event-id': U64_OVER } });
      assertError(over, 400, 'Last-Event-ID past uint64');
      assert.match(over.body.error, /Last-Event-ID/);
      const conn = await rawConn(srv.port);
      try {
        conn.sock.write(`GET ${path}/records/subscribe HTTP/1.1\r\nHost: x\r\nLast-Event-ID: ${U64_MAX}\r\n\r\n`);
        const t0 = Date.now();
        while (!conn.text().includes(': open') && !conn.closed() && Date.now() - t0 < ANSWER_WAIT_MS) await new Promise((r) => setTimeout(r, 10));
        assert.match(conn.text(), /^HTTP\/1\.1 200 /, 'the stream opens at the tail');
      } finally {
        conn.sock.destroy();
      }
    });

    test('match_seq_num and a trim point up to 2^64-1 in a JSON body: a miss (412 with the tail), a trim to the tail; past it 400', async () => {
      const { bucket, key, path } = await c.freshStream();
      await c.appendOk(bucket, key, bodies(3));
      const miss = await c.post(`${path}/records`, undefined, { raw: `{"records":[{"body":"x"}],"match_seq_num":${U64_MAX}}` });
      assertError(miss, 412, 'match_seq_num 2^64-1');
      assert.equal(miss.body.tail.seq_num, 3);
      const over = await c.post(`${path}/records`, undefined, { raw: `{"records":[{"body":"x"}],"match_seq_num":${U64_OVER}}` });
      assertError(over, 400, 'match_seq_num 2^64');
      assert.match(over.body.error, /match_seq_num/);
      assertError(await c.post(`${path}/trim`, undefined, { raw: `{"seq_num":${U64_OVER}}` }), 400, 'trim 2^64');
      assertError(await c.post(`${path}/trim`, undefined, { raw: '{"seq_num":1e19}' }), 400, 'trim 1e19 (not plain digits)');
      assert.equal((await c.tail(bucket, key)).seq_num, 3, 'nothing appended');
      const trim = await c.post(`${path}/trim`, undefined, { raw: `{"seq_num":${U64_MAX}}` });
      assert.equal(trim.status, 204, trim.text);
      const page = await c.readOk(bucket, key, { seq_num: 0, clamp: true });
      assert.deepEqual(page.records, [], 'trimmed to the tail');
      assert.equal(page.tail.seq_num, 3, 'nothing renumbered');
    });

    test('a repeated query parameter is 400', async () => {
      const { bucket, key, path } = await c.freshStream();
      await c.appendOk(bucket, key, bodies(2));
      for (const q of ['seq_num=0&seq_num=1', 'seq_num=0&limit=1&limit=1', 'seq_num=0&clamp=true&clamp=false', 'seq_num=0&format=raw&format=raw']) {
        const res = await c.get(`${path}/records?${q}`);
        assertError(res, 400, q);
        assert.match(res.body.error, /more than once/);
      }
      assertError(await c.get('/v1/buckets?limit=1&limit=2'), 400, 'list');
      assert.equal((await c.get(`${path}/records?seq_num=0&limit=1`)).status, 200, 'distinct parameters are fine');
    });

    test('the keys "." and ".." are addressable as %2E and %2E%2E; raw "." and ".." segments stay 404', async () => {
      const bucket = await c.createBucket();
      for (const [enc, key] of [['%2E', '.'], ['%2e%2E', '..'], ['%2E%2E%2E', '...']]) {
        const base = `/v1/streams/${bucket}/${enc}`;
        const created = await rawRequest(srv.baseUrl, 'POST', base, { headers: { 'content-type': 'application/json' }, body: '{}' });
        assert.equal(created.status, 201, `${enc}: ${created.text}`);
        assert.equal(json(created).key, key);
        const appended = await rawRequest(srv.baseUrl, 'POST', `${base}/records`, { headers: { 'content-type': 'application/json' }, body: `{"records":[{"body":"in ${key}"}]}` });
        assert.equal(appended.status, 200, appended.text);
        const read = await rawRequest(srv.baseUrl, 'GET', `${base}/records?seq_num=0`);
        assert.equal(json(read).records[0].body, `in ${key}`);
        assert.equal(json(await rawRequest(srv.baseUrl, 'GET', `${base}/records/tail`)).seq_num, 1);
      }
      const list = await c.get(`/v1/streams/${bucket}`);
      assert.deepEqual(list.body.streams.map((s: { key: string }) => s.key), ['.', '..', '...']);
      assertRawEnvelope(await rawRequest(srv.baseUrl, 'GET', `/v1/streams/${bucket}/./records/tail`), 404, 'raw .');
      assertRawEnvelope(await rawRequest(srv.baseUrl, 'GET', `/v1/streams/${bucket}/../records/tail`), 404, 'raw ..');
      const del = await rawRequest(srv.baseUrl, 'DELETE', `/v1/streams/${bucket}/%2E`);
      assert.equal(del.status, 204, del.text);
      assert.equal((await rawRequest(srv.baseUrl, 'GET', `/v1/streams/${bucket}/%2E%2E`)).status, 200, 'deleting "." leaves ".."');
    });
  });
}
