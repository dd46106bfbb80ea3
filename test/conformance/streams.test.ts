// Conformance: stream create / get / reconfigure / delete / list, creation tokens and bucket defaults.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, startServer, type RunningServer } from '../helpers/server.ts';
import {
  Client, uniq, bucketPath, streamPath, assertError, assertJsonContentType, qs, bodies, pool, stopServer,
} from './client.ts';

const STREAM_FIELDS: Record<string, 'string' | 'boolean' | 'number'> = {
  stream_id: 'string',
  bucket: 'string',
  key: 'string',
  class: 'string',
  producer_policy: 'string',
  retention_max_age_ms: 'number',
  retention_max_bytes: 'number',
  batch_max_bytes: 'number',
  batch_max_records: 'number',
  batch_max_delay_ms: 'number',
  throughput_max_bytes_per_second: 'number',
  timestamping_mode: 'string',
  timestamping_uncapped: 'boolean',
  created_at_unix_ms: 'number',
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function assertStreamShape(s: any): void {
  assert.ok(s && typeof s === 'object', `stream should be an object: ${JSON.stringify(s)}`);
  for (const [field, type] of Object.entries(STREAM_FIELDS)) {
    assert.ok(field in s, `stream field ${field} must always be present: ${JSON.stringify(s)}`);
    assert.equal(typeof s[field], type, `stream field ${field} should be a ${type}: ${JSON.stringify(s)}`);
  }
  assert.match(s.stream_id, UUID);
}

const STREAM_CONFIG = {
  class: 'standard',
  producer_policy: 'fenced',
  retention_max_age_ms: 3_600_000,
  retention_max_bytes: 10_000_000,
  batch_max_bytes: 65_536,
  batch_max_records: 50,
  batch_max_delay_ms: 3,
  throughput_max_bytes_per_second: 2_000_000,
  timestamping_mode: 'client-require',
  timestamping_uncapped: true,
};

const BUCKET_DEFAULTS = {
  default_producer_policy: 'fenced',
  default_retention_max_age_ms: 60_000,
  default_retention_max_bytes: 123_456,
  default_batch_max_bytes: 8192,
  default_batch_max_records: 7,
  default_batch_max_delay_ms: 2,
  default_throughput_max_bytes_per_second: 999_999,
  default_timestamping_mode: 'arrival',
  default_timestamping_uncapped: true,
};

function assertBucketDefaultsApplied(s: any): void {
  assert.equal(s.class, 'standard');
  assert.equal(s.producer_policy, 'fenced');
  assert.equal(s.retention_max_age_ms, 60_000);
  assert.equal(s.retention_max_bytes, 123_456);
  assert.equal(s.batch_max_bytes, 8192);
  assert.equal(s.batch_max_records, 7);
  assert.equal(s.batch_max_delay_ms, 2);
  assert.equal(s.throughput_max_bytes_per_second, 999_999);
  assert.equal(s.timestamping_mode, 'arrival');
  assert.equal(s.timestamping_uncapped, true);
}

async function listAll(c: Client, bucket: string, limit?: number): Promise<{ items: any[]; pages: number; nexts: string[] }> {
  const items: any[] = [];
  const nexts: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    const res = await c.get(`/v1/streams/${encodeURIComponent(bucket)}${qs({ limit, start_after: cursor })}`);
    assert.equal(res.status, 200, res.text);
    assertJsonContentType(res.headers);
    assert.ok(Array.isArray(res.body.streams), res.text);
    assert.equal(typeof res.body.next, 'string', res.text);
    if (limit !== undefined) assert.ok(res.body.streams.length <= limit, 'page larger than limit');
    items.push(...res.body.streams);
    pages += 1;
    nexts.push(res.body.next);
    assert.ok(pages < 10_000, 'listing does not terminate');
    if (res.body.next === '') break;
    cursor = res.body.next;
  }
  return { items, pages, nexts };
}

for (const engine of ENGINES) {
  describe(`streams (${engine})`, () => {
    let srv: RunningServer;
    let c: Client;
    before(async () => { srv = await startServer({ engine }); c = new Client(srv.baseUrl); });
    after(() => stopServer(srv));

    test('create with an empty body answers 201 Stream with every field, zero values included', async () => {
      const bucket = await c.createBucket();
      const before = Date.now();
      const res = await c.post(streamPath(bucket, 'k1'), {});
      const afterMs = Date.now();
      assert.equal(res.status, 201, res.text);
      assertJsonContentType(res.headers);
      assertStreamShape(res.body);
      const s = res.body;
      assert.equal(s.bucket, bucket);
      assert.equal(s.key, 'k1');
      assert.equal(s.class, 'standard');
      assert.equal(s.producer_policy, 'any');
      assert.equal(s.retention_max_age_ms, 0);
      assert.equal(s.retention_max_bytes, 0);
      assert.equal(s.batch_max_bytes, 0);
      assert.equal(s.batch_max_records, 0);
      assert.equal(s.throughput_max_bytes_per_second, 0);
      assert.equal(s.timestamping_mode, 'client-prefer');
      assert.equal(s.timestamping_uncapped, false);
      assert.ok(s.created_at_unix_ms >= before - 1000 && s.created_at_unix_ms <= afterMs + 1000,
        `created_at_unix_ms ${s.created_at_unix_ms} should be the creation time`);
    });

    test('create with no request body at all is every default', async () => {
      const bucket = await c.createBucket();
      const res = await c.post(streamPath(bucket, 'nobody'));
      assert.equal(res.status, 201, res.text);
      assertStreamShape(res.body);
      assert.equal(res.body.timestamping_mode, 'client-prefer');
    });

    test('create echoes an explicit config and GET returns it plus an empty fencing_token', async () => {
      const bucket = await c.createBucket();
      const res = await c.post(streamPath(bucket, 'cfg'), STREAM_CONFIG);
      assert.equal(res.status, 201, res.text);
      assertStreamShape(res.body);
      for (const [k, v] of Object.entries(STREAM_CONFIG)) assert.deepEqual(res.body[k], v, `field ${k}`);
      const got = await c.get(streamPath(bucket, 'cfg'));
      assert.equal(got.status, 200, got.text);
      assertJsonContentType(got.headers);
      assertStreamShape(got.body);
      assert.equal(got.body.fencing_token, '', 'get-one carries fencing_token, empty when unfenced');
      for (const f of Object.keys(STREAM_FIELDS)) assert.deepEqual(got.body[f], res.body[f], `field ${f}`);
    });

    test('config fields left unset copy the bucket defaults', async () => {
      const bucket = await c.createBucket(BUCKET_DEFAULTS);
      const s = await c.createStream(bucket, 'defaults');
      assertBucketDefaultsApplied(s);
      const got = await c.get(streamPath(bucket, 'defaults'));
      assertBucketDefaultsApplied(got.body);
    });

    test('empty-string enums defer to the bucket defaults; set fields win', async () => {
      const bucket = await c.createBucket(BUCKET_DEFAULTS);
      const s = await c.createStream(bucket, 'mixed', {
        class: '', producer_policy: '', timestamping_mode: '', retention_max_age_ms: 5,
      });
      assert.equal(s.class, 'standard');
      assert.equal(s.producer_policy, 'fenced');
      assert.equal(s.timestamping_mode, 'arrival');
      assert.equal(s.retention_max_age_ms, 5, 'an explicit field beats the bucket default');
      assert.equal(s.retention_max_bytes, 123_456, 'an unset field copies the bucket default');
      const explicit = await c.createStream(bucket, 'explicit', { producer_policy: 'any', timestamping_mode: 'client-prefer' });
      assert.equal(explicit.producer_policy, 'any');
      assert.equal(explicit.timestamping_mode, 'client-prefer');
    });

    test('create in a missing bucket is 404', async () => {
      assertError(await c.post(streamPath(uniq('missing'), 'k'), {}), 404);
    });

    test('GET of a missing stream or of a stream in a missing bucket is 404', async () => {
      const bucket = await c.createBucket();
      assertError(await c.get(streamPath(bucket, 'nope')), 404, 'missing stream');
      assertError(await c.get(streamPath(uniq('missing'), 'nope')), 404, 'missing bucket');
    });

    test('creation_token retried converges with 201 and the same stream_id', async () => {
      const bucket = await c.createBucket();
      const first = await c.post(streamPath(bucket, 'tok'), { creation_token: 'ct-1', retention_max_age_ms: 10 });
      assert.equal(first.status, 201, first.text);
      const again = await c.post(streamPath(bucket, 'tok'), { creation_token: 'ct-1', retention_max_age_ms: 10 });
      assert.equal(again.status, 201, again.text);
      assertStreamShape(again.body);
      assert.equal(again.body.stream_id, first.body.stream_id);
      assert.equal(again.body.created_at_unix_ms, first.body.created_at_unix_ms);
    });

    test('a different creation_token on a taken address is 409 and changes nothing', async () => {
      const bucket = await c.createBucket();
      const first = await c.post(streamPath(bucket, 'tok'), { creation_token: 'ct-a', retention_max_age_ms: 10 });
      assert.equal(first.status, 201, first.text);
      assertError(await c.post(streamPath(bucket, 'tok'), { creation_token: 'ct-b', retention_max_age_ms: 20 }), 409);
      const got = await c.get(streamPath(bucket, 'tok'));
      assert.equal(got.body.stream_id, first.body.stream_id);
      assert.equal(got.body.retention_max_age_ms, 10);
    });

    test('the same creation_token in another address creates another stream', async () => {
      const bucket = await c.createBucket();
      const a = await c.createStream(bucket, 'one', { creation_token: 'shared' });
      const b = await c.createStream(bucket, 'two', { creation_token: 'shared' });
      assert.notEqual(a.stream_id, b.stream_id);
    });

    test('PATCH changes only the given fields and answers 200 Stream as it now stands', async () => {
      const bucket = await c.createBucket();
      const created = await c.createStream(bucket, 'p', { retention_max_bytes: 777 });
      const res = await c.patch(streamPath(bucket, 'p'), { retention_max_age_ms: 1234, timestamping_mode: 'arrival' });
      assert.equal(res.status, 200, res.text);
      assertJsonContentType(res.headers);
      assertStreamShape(res.body);
      assert.equal(res.body.retention_max_age_ms, 1234);
      assert.equal(res.body.timestamping_mode, 'arrival');
      assert.equal(res.body.retention_max_bytes, 777, 'an unmentioned field is kept');
      assert.equal(res.body.stream_id, created.stream_id);
      assert.equal(res.body.created_at_unix_ms, created.created_at_unix_ms);
      const got = await c.get(streamPath(bucket, 'p'));
      assert.equal(got.body.retention_max_age_ms, 1234);
      assert.equal(got.body.timestamping_mode, 'arrival');
      assert.equal(got.body.retention_max_bytes, 777);
    });

    test('PATCH with an empty body changes nothing', async () => {
      const bucket = await c.createBucket();
      const created = await c.createStream(bucket, 'p0', { batch_max_records: 9 });
      const res = await c.patch(streamPath(bucket, 'p0'), {});
      assert.equal(res.status, 200, res.text);
      for (const f of Object.keys(STREAM_FIELDS)) assert.deepEqual(res.body[f], created[f], `field ${f}`);
    });

    test('PATCH of a missing stream is 404; an unknown enum or wrong type is 400', async () => {
      const bucket = await c.createBucket();
      assertError(await c.patch(streamPath(bucket, 'nope'), { retention_max_age_ms: 1 }), 404);
      await c.createStream(bucket, 'p');
      assertError(await c.patch(streamPath(bucket, 'p'), { class: 'gold' }), 400, 'unknown class');
      assertError(await c.patch(streamPath(bucket, 'p'), { timestamping_mode: 'sometimes' }), 400, 'unknown mode');
      assertError(await c.patch(streamPath(bucket, 'p'), { retention_max_age_ms: 'x' }), 400, 'integer as string');
      assertError(await c.patch(streamPath(bucket, 'p'), { timestamping_uncapped: 1 }), 400, 'boolean as number');
      const got = await c.get(streamPath(bucket, 'p'));
      assert.equal(got.body.class, 'standard');
      assert.equal(got.body.timestamping_mode, 'client-prefer');
    });

    test('stream config with a wrong type or an unknown enum is 400 and creates nothing', async () => {
      const bucket = await c.createBucket();
      assertError(await c.post(streamPath(bucket, 'bad1'), { class: 'gold' }), 400, 'unknown class');
      assertError(await c.post(streamPath(bucket, 'bad2'), { producer_policy: 'nobody' }), 400, 'unknown policy');
      assertError(await c.post(streamPath(bucket, 'bad3'), { retention_max_age_ms: '10' }), 400, 'integer as string');
      assertError(await c.post(streamPath(bucket, 'bad4'), { retention_max_age_ms: -1 }), 400, 'negative');
      assertError(await c.post(streamPath(bucket, 'bad5'), { retention_max_age_ms: 1.5 }), 400, 'fraction');
      assertError(await c.post(streamPath(bucket, 'bad6'), { timestamping_uncapped: 'true' }), 400, 'boolean as string');
      assertError(await c.post(streamPath(bucket, 'bad7'), { creation_token: 5 }), 400, 'token as number');
      for (const k of ['bad1', 'bad2', 'bad3', 'bad4', 'bad5', 'bad6', 'bad7']) {
        assertError(await c.get(streamPath(bucket, k)), 404, `${k} must not exist`);
      }
    });

    test('a body naming another bucket or key than the path is 400 on create and PATCH; the path\'s own are accepted', async () => {
      const bucket = await c.createBucket();
      assertError(await c.post(streamPath(bucket, 'k1'), { bucket: `${bucket}x` }), 400, 'other bucket');
      assertError(await c.post(streamPath(bucket, 'k1'), { key: 'other' }), 400, 'other key');
      assertError(await c.post(streamPath(bucket, 'k1'), { fencing_token: 'tok' }), 400, 'a fencing token on create');
      assertError(await c.get(streamPath(bucket, 'k1')), 404, 'nothing created');
      const made = await c.post(streamPath(bucket, 'k1'), { bucket, key: 'k1' });
      assert.equal(made.status, 201, made.text);
      assertError(await c.patch(streamPath(bucket, 'k1'), { bucket: `${bucket}x` }), 400, 'PATCH to another bucket');
      // A descriptor sent back as it was read is a valid PATCH.
      const got = await c.get(streamPath(bucket, 'k1'));
      assert.equal((await c.patch(streamPath(bucket, 'k1'), got.body)).status, 200);
      // PATCH never changes the fencing token: another one is 400 (it would be dropped unseen); the
      // installed one, as a fenced stream's GET answer carries it, is the echo and is accepted.
      assertError(await c.patch(streamPath(bucket, 'k1'), { fencing_token: 'tok' }), 400, 'a fencing token on PATCH');
      assert.equal((await c.post(`${streamPath(bucket, 'k1')}/fence`, { fencing_token: 'tok' })).status, 200);
      const fenced = await c.get(streamPath(bucket, 'k1'));
      assert.equal(fenced.body.fencing_token, 'tok');
      assert.equal((await c.patch(streamPath(bucket, 'k1'), fenced.body)).status, 200, 'a fenced stream\'s descriptor sent back');
      assertError(await c.patch(streamPath(bucket, 'k1'), { fencing_token: 'other' }), 400, 'another token on a fenced stream');
      assertError(await c.patch(streamPath(bucket, 'k1'), { fencing_token: '' }), 400, 'clearing the token is the fence verb\'s');
      assertError(await c.patch(streamPath(bucket, 'k1'), { fencing_token: 5 }), 400, 'a token that is not a string');
      assert.equal((await c.get(streamPath(bucket, 'k1'))).body.fencing_token, 'tok', 'the token is unchanged');
    });

    test('DELETE is 204, the stream is gone, and a second DELETE is 204 again', async () => {
      const bucket = await c.createBucket();
      await c.createStream(bucket, 'd');
      await c.appendOk(bucket, 'd', bodies(2));
      const res = await c.del(streamPath(bucket, 'd'));
      assert.equal(res.status, 204, res.text);
      assertError(await c.get(streamPath(bucket, 'd')), 404, 'GET after delete');
      assertError(await c.read(bucket, 'd', { seq_num: 0 }), 404, 'read after delete');
      assertError(await c.append(bucket, 'd', bodies(1)), 404, 'append after delete');
      assertError(await c.get(`${streamPath(bucket, 'd')}/records/tail`), 404, 'tail after delete');
      assert.equal((await c.del(streamPath(bucket, 'd'))).status, 204, 'DELETE is idempotent on a deleted stream');
    });

    test('DELETE of a stream that never existed is 404', async () => {
      const bucket = await c.createBucket();
      assertError(await c.del(streamPath(bucket, 'never')), 404);
      assertError(await c.del(streamPath(uniq('missing'), 'never')), 404, 'missing bucket');
    });

    test('a deleted address is reused by a new stream: fresh stream_id, tail 0, empty history', async () => {
      const bucket = await c.createBucket();
      const old = await c.createStream(bucket, 'reuse', { creation_token: 'same' });
      await c.appendOk(bucket, 'reuse', bodies(3));
      assert.equal((await c.del(streamPath(bucket, 'reuse'))).status, 204);
      const res = await c.post(streamPath(bucket, 'reuse'), { creation_token: 'same' });
      assert.equal(res.status, 201, res.text);
      assert.notEqual(res.body.stream_id, old.stream_id, 'a new stream gets a fresh stream_id');
      assert.deepEqual(await c.tail(bucket, 'reuse'), { seq_num: 0, timestamp_ms: 0 });
      const page = await c.readOk(bucket, 'reuse', { seq_num: 0 });
      assert.deepEqual(page.records, []);
      const ack = await c.appendOk(bucket, 'reuse', bodies(1, 'new'));
      assert.equal(ack.start.seq_num, 0, 'numbering restarts at 0');
      const again = await c.readOk(bucket, 'reuse', { seq_num: 0 });
      assert.deepEqual(again.records.map((r) => r.body), ['new0']);
    });

    test('list answers {streams, next} in key order with descriptors that omit fencing_token', async () => {
      const bucket = await c.createBucket();
      const keys = ['m', 'a', 'z', 'b/slash', 'c'];
      for (const k of keys) await c.createStream(bucket, k);
      await c.post(`${streamPath(bucket, 'm')}/fence`, { fencing_token: 'secret-ish' });
      const res = await c.get(`/v1/streams/${bucket}`);
      assert.equal(res.status, 200, res.text);
      assertJsonContentType(res.headers);
      assert.equal(res.body.next, '', 'a complete listing has an empty next');
      assert.deepEqual(res.body.streams.map((s: any) => s.key), [...keys].sort());
      for (const s of res.body.streams) {
        assertStreamShape(s);
        assert.equal(s.bucket, bucket);
        assert.ok(!('fencing_token' in s), `listings omit fencing_token: ${JSON.stringify(s)}`);
      }
    });

    test('list pages with limit and the opaque next cursor, every stream exactly once, in order', async () => {
      const bucket = await c.createBucket();
      const keys = Array.from({ length: 7 }, (_, i) => `key-${String.fromCharCode(97 + i)}`);
      for (const k of keys) await c.createStream(bucket, k);
      const { items, pages, nexts } = await listAll(c, bucket, 3);
      assert.deepEqual(items.map((s) => s.key), keys);
      assert.equal(pages, 3, '7 streams at 3 per page is 3 pages');
      for (const n of nexts.slice(0, -1)) assert.match(n, /^[A-Za-z0-9_-]+$/, 'cursors are base64url');
      assert.equal(nexts[nexts.length - 1], '');
    });

    test('list omits deleted streams; a missing bucket is 404; an empty bucket lists nothing', async () => {
      const bucket = await c.createBucket();
      for (const k of ['a', 'b', 'c']) await c.createStream(bucket, k);
      assert.equal((await c.del(streamPath(bucket, 'b'))).status, 204);
      const { items } = await listAll(c, bucket);
      assert.deepEqual(items.map((s) => s.key), ['a', 'c']);
      assertError(await c.get(`/v1/streams/${uniq('missing')}`), 404);
      const empty = await c.createBucket();
      const res = await c.get(`/v1/streams/${empty}`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, { streams: [], next: '' });
    });

    test('a stream listing page holds at most 1000 streams', async () => {
      const bucket = await c.createBucket({ create_stream_on_append: false });
      const keys = Array.from({ length: 1003 }, (_, i) => `k${String(i).padStart(5, '0')}`);
      await pool(keys, 32, async (k) => {
        const res = await c.post(streamPath(bucket, k), {});
        assert.equal(res.status, 201, res.text);
      });
      const first = await c.get(`/v1/streams/${bucket}${qs({ limit: 5000 })}`);
      assert.equal(first.status, 200, first.text);
      assert.equal(first.body.streams.length, 1000, 'a page is capped at 1000');
      assert.notEqual(first.body.next, '');
      const noLimit = await c.get(`/v1/streams/${bucket}`);
      assert.ok(noLimit.body.streams.length <= 1000);
      const { items } = await listAll(c, bucket);
      assert.deepEqual(items.map((s) => s.key), keys);
    });

    test('a stream in one bucket is independent of the same key in another bucket', async () => {
      const b1 = await c.createBucket();
      const b2 = await c.createBucket();
      await c.createStream(b1, 'same');
      assertError(await c.get(streamPath(b2, 'same')), 404);
      await c.createStream(b2, 'same');
      await c.appendOk(b1, 'same', bodies(2));
      assert.equal((await c.tail(b2, 'same')).seq_num, 0);
      assert.equal((await c.tail(b1, 'same')).seq_num, 2);
    });

    test('deleting the bucket needs its streams gone first; bucket GET still 200 meanwhile', async () => {
      const bucket = await c.createBucket();
      await c.createStream(bucket, 'x');
      assertError(await c.del(bucketPath(bucket)), 409);
      assert.equal((await c.del(streamPath(bucket, 'x'))).status, 204);
      assert.equal((await c.del(bucketPath(bucket))).status, 204);
    });
  });
}
