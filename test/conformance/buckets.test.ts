// Conformance: bucket create / get / replace / delete / list.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, startServer, type RunningServer } from '../helpers/server.ts';
import { Client, uniq, bucketPath, streamPath, assertError, assertJsonContentType, qs, stopServer } from './client.ts';

const BUCKET_FIELDS: Record<string, 'string' | 'boolean' | 'number'> = {
  name: 'string',
  location: 'string',
  create_stream_on_append: 'boolean',
  create_stream_on_read: 'boolean',
  default_class: 'string',
  default_producer_policy: 'string',
  default_retention_max_age_ms: 'number',
  default_retention_max_bytes: 'number',
  default_batch_max_bytes: 'number',
  default_batch_max_records: 'number',
  default_batch_max_delay_ms: 'number',
  default_throughput_max_bytes_per_second: 'number',
  default_timestamping_mode: 'string',
  default_timestamping_uncapped: 'boolean',
  created_at_unix_ms: 'number',
  creation_token: 'string',
};

function assertBucketShape(b: any): void {
  assert.ok(b && typeof b === 'object', `bucket should be an object: ${JSON.stringify(b)}`);
  for (const [field, type] of Object.entries(BUCKET_FIELDS)) {
    assert.ok(field in b, `bucket field ${field} must always be present: ${JSON.stringify(b)}`);
    assert.equal(typeof b[field], type, `bucket field ${field} should be a ${type}: ${JSON.stringify(b)}`);
  }
}

/** A config with every caller-writable field set away from its default. */
const FULL_CONFIG = {
  create_stream_on_append: true,
  create_stream_on_read: true,
  default_class: 'standard',
  default_producer_policy: 'fenced',
  default_retention_max_age_ms: 86_400_000,
  default_retention_max_bytes: 1_000_000,
  default_batch_max_bytes: 4096,
  default_batch_max_records: 100,
  default_batch_max_delay_ms: 5,
  default_throughput_max_bytes_per_second: 1_048_576,
  default_timestamping_mode: 'arrival',
  default_timestamping_uncapped: true,
};

for (const engine of ENGINES) {
  describe(`buckets (${engine})`, () => {
    let srv: RunningServer;
    let c: Client;
    before(async () => { srv = await startServer({ engine }); c = new Client(srv.baseUrl); });
    after(() => stopServer(srv));

    test('create with an empty body answers 201 with every field, zero values included', async () => {
      const name = uniq('b');
      const before = Date.now();
      const res = await c.post(bucketPath(name), {});
      const afterMs = Date.now();
      assert.equal(res.status, 201, res.text);
      assertJsonContentType(res.headers);
      assertBucketShape(res.body);
      const b = res.body;
      assert.equal(b.name, name);
      assert.equal(b.create_stream_on_append, false);
      assert.equal(b.create_stream_on_read, false);
      assert.equal(b.default_class, 'standard');
      assert.equal(b.default_producer_policy, 'any');
      assert.equal(b.default_retention_max_age_ms, 0);
      assert.equal(b.default_retention_max_bytes, 0);
      assert.equal(b.default_batch_max_bytes, 0);
      assert.equal(b.default_batch_max_records, 0);
      assert.equal(b.default_throughput_max_bytes_per_second, 0);
      assert.equal(b.default_timestamping_mode, 'client-prefer');
      assert.equal(b.default_timestamping_uncapped, false);
      assert.equal(b.creation_token, '');
      assert.ok(b.created_at_unix_ms >= before - 1000 && b.created_at_unix_ms <= afterMs + 1000,
        `created_at_unix_ms ${b.created_at_unix_ms} should be the creation time`);
    });

    test('create with no request body at all means every default', async () => {
      const name = uniq('b');
      const res = await c.post(bucketPath(name));
      assert.equal(res.status, 201, res.text);
      assertBucketShape(res.body);
      assert.equal(res.body.name, name);
      assert.equal(res.body.default_timestamping_mode, 'client-prefer');
    });

    test('an empty-string enum in a bucket config means the default, on create and on PUT', async () => {
      const name = uniq('b');
      const res = await c.post(bucketPath(name), { default_class: '', default_producer_policy: '', default_timestamping_mode: '' });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.default_class, 'standard');
      assert.equal(res.body.default_producer_policy, 'any');
      assert.equal(res.body.default_timestamping_mode, 'client-prefer');
      assert.equal((await c.put(bucketPath(name), { default_timestamping_mode: 'arrival' })).status, 200);
      const put = await c.put(bucketPath(name), { default_timestamping_mode: '' });
      assert.equal(put.status, 200, put.text);
      assert.equal(put.body.default_timestamping_mode, 'client-prefer');
    });

    test('create echoes the given config and GET returns the same bucket', async () => {
      const name = uniq('b');
      const res = await c.post(bucketPath(name), FULL_CONFIG);
      assert.equal(res.status, 201, res.text);
      assertBucketShape(res.body);
      for (const [k, v] of Object.entries(FULL_CONFIG)) assert.deepEqual(res.body[k], v, `field ${k}`);
      const got = await c.get(bucketPath(name));
      assert.equal(got.status, 200, got.text);
      assertJsonContentType(got.headers);
      assertBucketShape(got.body);
      assert.deepEqual(got.body, res.body);
    });

    test('create with a body naming the same bucket is accepted', async () => {
      const name = uniq('b');
      const res = await c.post(bucketPath(name), { name });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.name, name);
    });

    test('create with a body naming another bucket is 400 and creates nothing', async () => {
      const name = uniq('b');
      const res = await c.post(bucketPath(name), { name: uniq('other') });
      assertError(res, 400);
      assertError(await c.get(bucketPath(name)), 404, 'bucket must not exist');
    });

    test('create on a taken name without creation_token is 409', async () => {
      const name = await c.createBucket();
      assertError(await c.post(bucketPath(name), {}), 409);
    });

    test('create retried with the same creation_token converges with 201', async () => {
      const name = uniq('b');
      const first = await c.post(bucketPath(name), { creation_token: 'tok-1', default_retention_max_age_ms: 5000 });
      assert.equal(first.status, 201, first.text);
      assert.equal(first.body.creation_token, 'tok-1');
      const again = await c.post(bucketPath(name), { creation_token: 'tok-1', default_retention_max_age_ms: 5000 });
      assert.equal(again.status, 201, again.text);
      assertBucketShape(again.body);
      assert.equal(again.body.name, name);
      assert.equal(again.body.created_at_unix_ms, first.body.created_at_unix_ms, 'same bucket, same creation time');
      assert.equal(again.body.creation_token, 'tok-1');
    });

    test('create with a different creation_token on a taken name is 409', async () => {
      const name = uniq('b');
      assert.equal((await c.post(bucketPath(name), { creation_token: 'tok-a' })).status, 201);
      assertError(await c.post(bucketPath(name), { creation_token: 'tok-b' }), 409);
      // a bucket created without a token is not claimed by a later token either
      const plain = await c.createBucket();
      assertError(await c.post(bucketPath(plain), { creation_token: 'tok-a' }), 409);
    });

    test('GET, PUT and DELETE of a missing bucket are 404', async () => {
      const name = uniq('missing');
      assertError(await c.get(bucketPath(name)), 404, 'GET');
      assertError(await c.put(bucketPath(name), {}), 404, 'PUT');
      assertError(await c.del(bucketPath(name)), 404, 'DELETE');
      // PUT must not have created it
      assertError(await c.get(bucketPath(name)), 404, 'GET after PUT');
    });

    test('PUT replaces the config whole and answers 200 Bucket', async () => {
      const name = await c.createBucket({ default_retention_max_age_ms: 5000, create_stream_on_append: true });
      const created = (await c.get(bucketPath(name))).body;
      const res = await c.put(bucketPath(name), { default_batch_max_records: 10 });
      assert.equal(res.status, 200, res.text);
      assertJsonContentType(res.headers);
      assertBucketShape(res.body);
      assert.equal(res.body.name, name);
      assert.equal(res.body.default_batch_max_records, 10);
      assert.equal(res.body.default_retention_max_age_ms, 0, 'unset fields go back to their defaults');
      assert.equal(res.body.create_stream_on_append, false, 'unset fields go back to their defaults');
      assert.equal(res.body.created_at_unix_ms, created.created_at_unix_ms, 'PUT keeps the creation time');
      const got = await c.get(bucketPath(name));
      assert.deepEqual(got.body, res.body);
    });

    test('PUT with every field set is reflected by GET', async () => {
      const name = await c.createBucket();
      const res = await c.put(bucketPath(name), FULL_CONFIG);
      assert.equal(res.status, 200, res.text);
      const got = await c.get(bucketPath(name));
      for (const [k, v] of Object.entries(FULL_CONFIG)) assert.deepEqual(got.body[k], v, `field ${k}`);
    });

    test('PUT with a body naming another bucket is 400 and changes nothing', async () => {
      const name = await c.createBucket({ default_retention_max_age_ms: 7000 });
      assertError(await c.put(bucketPath(name), { name: uniq('other'), default_retention_max_age_ms: 1 }), 400);
      const got = await c.get(bucketPath(name));
      assert.equal(got.body.default_retention_max_age_ms, 7000);
    });

    test('PUT reaches only streams created afterwards', async () => {
      const name = await c.createBucket({ default_retention_max_age_ms: 1000 });
      const s1 = await c.createStream(name, 'before');
      assert.equal(s1.retention_max_age_ms, 1000);
      assert.equal((await c.put(bucketPath(name), { default_retention_max_age_ms: 2000 })).status, 200);
      const s2 = await c.createStream(name, 'after');
      assert.equal(s2.retention_max_age_ms, 2000);
      const s1again = await c.get(streamPath(name, 'before'));
      assert.equal(s1again.status, 200, s1again.text);
      assert.equal(s1again.body.retention_max_age_ms, 1000, 'an existing stream keeps its config');
    });

    test('DELETE an empty bucket is 204, then it is gone and the name is free again', async () => {
      const name = await c.createBucket();
      const res = await c.del(bucketPath(name));
      assert.equal(res.status, 204, res.text);
      assertError(await c.get(bucketPath(name)), 404);
      const again = await c.post(bucketPath(name), {});
      assert.equal(again.status, 201, again.text);
    });

    test('DELETE a bucket with a live stream is 409 and deletes nothing', async () => {
      const name = await c.createBucket();
      await c.createStream(name, 'live');
      assertError(await c.del(bucketPath(name)), 409);
      assert.equal((await c.get(bucketPath(name))).status, 200, 'bucket still exists');
      assert.equal((await c.get(streamPath(name, 'live'))).status, 200, 'stream still exists');
      // once the stream is deleted the bucket is empty and may go
      assert.equal((await c.del(streamPath(name, 'live'))).status, 204);
      assert.equal((await c.del(bucketPath(name))).status, 204);
      assertError(await c.get(bucketPath(name)), 404);
    });

    test('list answers {buckets, next} in name order and includes created buckets', async () => {
      const prefix = uniq('lst');
      const names = [`${prefix}-c`, `${prefix}-a`, `${prefix}-b`];
      for (const n of names) await c.createBucket({}, n);
      const res = await c.get(`/v1/buckets${qs({ start_after: prefix, limit: 3 })}`);
      assert.equal(res.status, 200, res.text);
      assertJsonContentType(res.headers);
      assert.ok(Array.isArray(res.body.buckets), res.text);
      assert.equal(typeof res.body.next, 'string', res.text);
      assert.deepEqual(res.body.buckets.map((b: any) => b.name), [...names].sort());
      for (const b of res.body.buckets) assertBucketShape(b);
    });

    test('list pages with limit and start_after; cursors are bucket names; next is empty at the end', async () => {
      const prefix = uniq('pg');
      const names = Array.from({ length: 5 }, (_, i) => `${prefix}-${i}`);
      for (const n of names) await c.createBucket({}, n);
      const seen: string[] = [];
      let cursor = prefix;
      let pages = 0;
      for (;;) {
        const res = await c.get(`/v1/buckets${qs({ start_after: cursor, limit: 2 })}`);
        assert.equal(res.status, 200, res.text);
        const page: string[] = res.body.buckets.map((b: any) => b.name);
        assert.ok(page.length <= 2, `page larger than limit: ${page}`);
        seen.push(...page);
        pages += 1;
        assert.ok(pages < 1000, 'listing does not terminate');
        if (res.body.next === '') break;
        assert.equal(res.body.next, page[page.length - 1], 'bucket cursor is the last bucket name of the page');
        cursor = res.body.next;
      }
      const mine = seen.filter((n) => n.startsWith(`${prefix}-`));
      assert.deepEqual(mine, names, 'every bucket exactly once, in order');
      const sorted = [...seen].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      assert.deepEqual(seen, sorted, 'stable name order across pages');
      assert.equal(new Set(seen).size, seen.length, 'no bucket repeated across pages');
    });

    test('a full listing without a cursor reaches every bucket and omits deleted ones', async () => {
      const keep = await c.createBucket();
      const gone = await c.createBucket();
      assert.equal((await c.del(bucketPath(gone))).status, 204);
      const all: string[] = [];
      let cursor = '';
      for (let i = 0; i < 1000; i++) {
        const res = await c.get(`/v1/buckets${qs({ start_after: cursor || undefined })}`);
        assert.equal(res.status, 200, res.text);
        all.push(...res.body.buckets.map((b: any) => b.name));
        if (res.body.next === '') break;
        cursor = res.body.next;
      }
      assert.ok(all.includes(keep), 'a live bucket is listed');
      assert.ok(!all.includes(gone), 'a deleted bucket is not listed');
    });

    test('bucket config with a wrong type or an unknown enum is 400', async () => {
      assertError(await c.post(bucketPath(uniq('b')), { create_stream_on_append: 'yes' }), 400, 'boolean as string');
      assertError(await c.post(bucketPath(uniq('b')), { default_retention_max_age_ms: 'ten' }), 400, 'integer as string');
      assertError(await c.post(bucketPath(uniq('b')), { default_retention_max_age_ms: -1 }), 400, 'negative integer');
      assertError(await c.post(bucketPath(uniq('b')), { default_class: 'gold' }), 400, 'unknown class');
      assertError(await c.post(bucketPath(uniq('b')), { default_timestamping_mode: 'whenever' }), 400, 'unknown mode');
      assertError(await c.post(bucketPath(uniq('b')), { default_producer_policy: 'nobody' }), 400, 'unknown policy');
      const name = await c.createBucket();
      assertError(await c.put(bucketPath(name), { default_class: 'gold' }), 400, 'PUT unknown class');
    });
  });
}
