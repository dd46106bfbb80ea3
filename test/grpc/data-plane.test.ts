// DataService unary verbs over a real grpc-js client on loopback, against the real Star; every
// error status the data plane answers, with its typed detail where the spec gives one.
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { loadSvcProto } from '../../src/api/grpc/proto.ts';
import { bytes, call, detailsOf, failure } from './client.ts';
import { startHarness, type Harness } from './harness.ts';

describe('grpc data plane', () => {
  let h: Harness;
  before(async () => { h = await startHarness(); });
  after(async () => { await h.stop(); });

  it('creates, gets, lists and updates buckets', async () => {
    const created = await call(h.data.CreateBucket.bind(h.data), {
      bucket: 'orders',
      config: { create_stream_on_append: true, default_stream_config: { storage_class: 'STORAGE_CLASS_STANDARD', retention_max_age_ms: 60_000 } },
      creation_token: 'ct-1',
    });
    assert.equal(created.info?.name, 'orders');
    assert.equal(created.info?.creation_token, 'ct-1');
    assert.equal(created.info?.config?.create_stream_on_append, true);
    assert.equal(created.info?.config?.default_stream_config?.retention_max_age_ms, 60_000);
    assert.equal(created.info?.config?.default_stream_config?.timestamping_mode, 'TIMESTAMPING_MODE_CLIENT_PREFER');

    const got = await call(h.data.GetBucket.bind(h.data), { bucket: 'orders' });
    assert.equal(got.info?.name, 'orders');

    await call(h.data.CreateBucket.bind(h.data), { bucket: 'zeta' });
    const page1 = await call(h.data.ListBuckets.bind(h.data), { limit: 1 });
    assert.deepEqual(page1.buckets.map((b) => b.name), ['orders']);
    assert.equal(page1.next, 'orders');
    const page2 = await call(h.data.ListBuckets.bind(h.data), { start_after: page1.next, limit: 1 });
    assert.deepEqual(page2.buckets.map((b) => b.name), ['zeta']);
    assert.equal(page2.next, '');

    const updated = await call(h.data.UpdateBucket.bind(h.data), { bucket: 'zeta', config: { location: 'eu' } });
    assert.equal(updated.info?.config?.location, 'eu');
    await call(h.data.DeleteBucket.bind(h.data), { bucket: 'zeta' });
    assert.equal((await failure(h.data.GetBucket.bind(h.data), { bucket: 'zeta' })).code, grpc.status.NOT_FOUND);
  });

  it('refuses a taken bucket name, bad names and the reserved name', async () => {
    assert.equal((await failure(h.data.CreateBucket.bind(h.data), { bucket: 'orders' })).code, grpc.status.ALREADY_EXISTS);
    assert.equal((await failure(h.data.CreateBucket.bind(h.data), { bucket: '-bad' })).code, grpc.status.INVALID_ARGUMENT);
    assert.equal((await failure(h.data.CreateBucket.bind(h.data), { bucket: 'api' })).code, grpc.status.INVALID_ARGUMENT);
  });

  it('creates, gets, reconfigures, lists and deletes streams with byte keys', async () => {
    const key = bytes('eu/ü');
    const created = await call(h.data.CreateStream.bind(h.data), {
      bucket: 'orders', key, config: { producer_policy: 'PRODUCER_POLICY_ANY', batch_max_records: 10 },
    });
    assert.ok(created.info?.stream_id);
    assert.deepEqual(created.info?.key, key);
    assert.equal(created.info?.config?.batch_max_records, 10);
    assert.equal(created.info?.config?.storage_class, 'STORAGE_CLASS_STANDARD');

    const got = await call(h.data.GetStream.bind(h.data), { bucket: 'orders', key });
    assert.equal(got.fencing_token, '');
    assert.equal(got.info?.stream_id, created.info?.stream_id);

    const re = await call(h.data.ReconfigureStream.bind(h.data), { bucket: 'orders', key, config: { retention_max_bytes: 1024 } });
    assert.equal(re.info?.config?.retention_max_bytes, 1024);
    assert.equal(re.info?.config?.batch_max_records, 10, 'unset fields are left unchanged');

    await call(h.data.CreateStream.bind(h.data), { bucket: 'orders', key: bytes('a') });
    const list1 = await call(h.data.ListStreams.bind(h.data), { bucket: 'orders', limit: 1 });
    assert.equal(list1.streams.length, 1);
    assert.match(list1.next, /^[A-Za-z0-9_-]+$/, 'cursors are opaque base64url');
    const list2 = await call(h.data.ListStreams.bind(h.data), { bucket: 'orders', start_after: list1.next });
    assert.equal(list2.streams.length, 1);
    assert.notDeepEqual(list2.streams[0].key, list1.streams[0].key);
    assert.equal(list2.next, '');

    await call(h.data.DeleteStream.bind(h.data), { bucket: 'orders', key: bytes('a') });
    assert.equal((await failure(h.data.GetStream.bind(h.data), { bucket: 'orders', key: bytes('a') })).code, grpc.status.NOT_FOUND);
  });

  it('takes keys that are not UTF-8 (a key is any byte string); refuses unknown enum values', async () => {
    const key = Buffer.from([0xff, 0xfe, 0x00]);
    assert.equal((await failure(h.data.CheckTail.bind(h.data), { bucket: 'orders', key })).code, grpc.status.NOT_FOUND);
    const created = await call(h.data.CreateStream.bind(h.data), { bucket: 'orders', key });
    assert.deepEqual(Buffer.from(created.info!.key), key);
    const near = await failure(h.data.GetStream.bind(h.data), { bucket: 'orders', key: Buffer.from([0xff, 0xfe, 0x01]) });
    assert.equal(near.code, grpc.status.NOT_FOUND, 'one byte apart is another stream');
    await call(h.data.DeleteStream.bind(h.data), { bucket: 'orders', key });
    const err2 = await failure(h.data.CreateStream.bind(h.data), {
      bucket: 'orders', key: bytes('enum'), config: { storage_class: 7 as unknown as 'STORAGE_CLASS_STANDARD' },
    });
    assert.equal(err2.code, grpc.status.INVALID_ARGUMENT);
  });

  it('appends and reads records with binary headers and bodies', async () => {
    const key = bytes('rw');
    const body = Buffer.from([0, 1, 2, 0xff]);
    // Recent enough that the bucket's 60 s age retention cannot trim it between append and read
    // (a stamp of 42 — 1970 — was trimmed by the background sweep now and then).
    const stampMs = Date.now() - 1_000;
    const ack = await call(h.data.Append.bind(h.data), {
      bucket: 'orders', key, // created on append (create_stream_on_append)
      records: [
        { body, headers: [{ name: Buffer.from([0xc3]), value: Buffer.from([0x00]) }], timestamp_ms: stampMs },
        { body: bytes('two') },
        { body: bytes('three') },
      ],
    });
    assert.equal(ack.start?.seq_num, 0);
    assert.equal(ack.end?.seq_num, 3);
    assert.ok((ack.tail?.seq_num ?? 0) >= 3);

    const page = await call(h.data.Read.bind(h.data), { bucket: 'orders', key, seq_num: 0 });
    assert.equal(page.records.length, 3);
    assert.deepEqual(page.records[0].body, body);
    assert.deepEqual(page.records[0].headers[0].name, Buffer.from([0xc3]));
    assert.deepEqual(page.records[0].headers[0].value, Buffer.from([0x00]));
    assert.equal(Number(page.records[0].timestamp_ms), stampMs);
    assert.deepEqual(page.records.map((r) => r.seq_num), [0, 1, 2]);
    assert.equal(page.tail?.seq_num, 3);

    const last = await call(h.data.Read.bind(h.data), { bucket: 'orders', key, tail_offset: 1, limit: 10 });
    assert.deepEqual(last.records.map((r) => r.seq_num), [2]);

    const tail = await call(h.data.CheckTail.bind(h.data), { bucket: 'orders', key });
    assert.equal(tail.tail?.seq_num, 3);
  });

  it('requires a read start and non-empty records with named headers', async () => {
    const key = bytes('rw');
    assert.equal((await failure(h.data.Read.bind(h.data), { bucket: 'orders', key })).code, grpc.status.INVALID_ARGUMENT);
    assert.equal((await failure(h.data.Append.bind(h.data), { bucket: 'orders', key, records: [] })).code, grpc.status.INVALID_ARGUMENT);
    const noName = await failure(h.data.Append.bind(h.data), { bucket: 'orders', key, records: [{ body: bytes('x'), headers: [{ value: bytes('v') }] }] });
    assert.equal(noName.code, grpc.status.INVALID_ARGUMENT);
  });

  it('answers a match_seq_num miss with OUT_OF_RANGE and a SequenceDetail carrying the tail', async () => {
    const key = bytes('rw');
    const err = await failure(h.data.Append.bind(h.data), { bucket: 'orders', key, records: [{ body: bytes('x') }], match_seq_num: 0 });
    assert.equal(err.code, grpc.status.OUT_OF_RANGE);
    const d = detailsOf(err);
    assert.ok(d, 'grpc-status-details-bin is present');
    assert.equal(d.code, grpc.status.OUT_OF_RANGE);
    assert.deepEqual(d.typeUrls, ['type.googleapis.com/svc.v1.SequenceDetail']);
    assert.equal(d.sequence?.tail?.seq_num, 3);
    const ok = await call(h.data.Append.bind(h.data), { bucket: 'orders', key, records: [{ body: bytes('x') }], match_seq_num: d.sequence?.tail?.seq_num });
    assert.equal(ok.start?.seq_num, 3);
  });

  it('fences: a mismatch is FAILED_PRECONDITION with a FenceDetail carrying the installed token', async () => {
    const key = bytes('fenced');
    await call(h.data.CreateStream.bind(h.data), { bucket: 'orders', key });
    const fenced = await call(h.data.Fence.bind(h.data), { bucket: 'orders', key, fencing_token: 'epoch-2' });
    assert.equal(fenced.tail?.seq_num, 0);
    const err = await failure(h.data.Append.bind(h.data), { bucket: 'orders', key, records: [{ body: bytes('x') }], fencing_token: 'epoch-1' });
    assert.equal(err.code, grpc.status.FAILED_PRECONDITION);
    assert.equal(detailsOf(err)?.fence?.fencing_token, 'epoch-2');
    const ok = await call(h.data.Append.bind(h.data), { bucket: 'orders', key, records: [{ body: bytes('x') }], fencing_token: 'epoch-2' });
    assert.equal(ok.end?.seq_num, 1);
    assert.equal((await call(h.data.GetStream.bind(h.data), { bucket: 'orders', key })).fencing_token, 'epoch-2');
    await call(h.data.Fence.bind(h.data), { bucket: 'orders', key, fencing_token: '' });
    assert.equal((await call(h.data.GetStream.bind(h.data), { bucket: 'orders', key })).fencing_token, '');
  });

  it('trims: reads below the watermark are OUT_OF_RANGE without a detail, clamp pulls them up', async () => {
    const key = bytes('rw');
    await call(h.data.Trim.bind(h.data), { bucket: 'orders', key, seq_num: 2 });
    const err = await failure(h.data.Read.bind(h.data), { bucket: 'orders', key, seq_num: 0 });
    assert.equal(err.code, grpc.status.OUT_OF_RANGE);
    assert.equal(detailsOf(err), undefined);
    const page = await call(h.data.Read.bind(h.data), { bucket: 'orders', key, seq_num: 0, clamp: true });
    assert.equal(page.records[0].seq_num, 2);
    assert.equal((await failure(h.data.Trim.bind(h.data), { bucket: 'orders', key })).code, grpc.status.INVALID_ARGUMENT);
  });

  it('vends an empty read plan while nothing is settled, and refuses what a plan cannot cover', async () => {
    const plan = await call(h.data.ReadPlan.bind(h.data), { bucket: 'orders', key: bytes('rw'), seq_num: 2 });
    assert.deepEqual(plan.entries, []);
    assert.equal(plan.vended_until, 2);
    assert.equal(plan.more, false);
    assert.ok(plan.expires_at_unix_ms > Date.now() + 50_000, 'expires after the configured TTL');
    const byTime = await call(h.data.ReadPlan.bind(h.data), { bucket: 'orders', key: bytes('rw'), timestamp_ms: 5 });
    assert.equal(byTime.vended_until, undefined, 'a timestamp start above the settled ceiling');
    assert.equal((await failure(h.data.ReadPlan.bind(h.data), { bucket: 'orders', key: bytes('nope'), seq_num: 0 })).code, grpc.status.NOT_FOUND);
    const trimmed = await failure(h.data.ReadPlan.bind(h.data), { bucket: 'orders', key: bytes('rw'), seq_num: 0 });
    assert.equal(trimmed.code, grpc.status.OUT_OF_RANGE);
    assert.equal(detailsOf(trimmed), undefined);
    assert.equal((await failure(h.data.ReadPlan.bind(h.data), { bucket: 'orders', key: bytes('rw') })).code, grpc.status.INVALID_ARGUMENT);
  });

  it('answers a read past the tail OUT_OF_RANGE with a SequenceDetail, and clamps it on request', async () => {
    const err = await failure(h.data.Read.bind(h.data), { bucket: 'orders', key: bytes('rw'), seq_num: 99 });
    assert.equal(err.code, grpc.status.OUT_OF_RANGE);
    assert.equal(detailsOf(err)?.sequence?.tail?.seq_num, 4);
    const page = await call(h.data.Read.bind(h.data), { bucket: 'orders', key: bytes('rw'), seq_num: 99, clamp: true });
    assert.deepEqual(page.records, []);
  });

  it('a ReadPlan start past the tail is OUT_OF_RANGE with the tail, as a Read without clamp is', async () => {
    const err = await failure(h.data.ReadPlan.bind(h.data), { bucket: 'orders', key: bytes('rw'), seq_num: 99 });
    assert.equal(err.code, grpc.status.OUT_OF_RANGE);
    assert.equal(detailsOf(err)?.sequence?.tail?.seq_num, 4);
    const atTail = await call(h.data.ReadPlan.bind(h.data), { bucket: 'orders', key: bytes('rw'), seq_num: 4 });
    assert.deepEqual([atTail.entries.length, atTail.vended_until], [0, 4], 'at the tail: nothing vended yet');
  });

  it('reads from a negative timestamp start and with a negative until_ms, as over HTTP', async () => {
    const key = bytes('neg-times');
    await call(h.data.Append.bind(h.data), { bucket: 'orders', key, records: [{ body: bytes('a') }, { body: bytes('b') }] });
    const all = await call(h.data.Read.bind(h.data), { bucket: 'orders', key, timestamp_ms: -5 });
    assert.deepEqual(all.records.map((r) => r.body.toString()), ['a', 'b']);
    const none = await call(h.data.Read.bind(h.data), { bucket: 'orders', key, seq_num: 0, until_ms: -1 });
    assert.deepEqual(none.records, [], 'every record is stamped after -1');
  });

  it('create_stream_on_read applies to ReadPlan, a read verb', async () => {
    await call(h.data.CreateBucket.bind(h.data), { bucket: 'on-read', config: { create_stream_on_read: true } });
    const plan = await call(h.data.ReadPlan.bind(h.data), { bucket: 'on-read', key: bytes('fresh'), seq_num: 0 });
    assert.deepEqual([plan.entries.length, plan.vended_until], [0, 0]);
    assert.equal((await call(h.data.GetStream.bind(h.data), { bucket: 'on-read', key: bytes('fresh') })).info?.key?.toString(), 'fresh');
  });

  it('refuses deleting a bucket that still holds streams: ALREADY_EXISTS (409\'s code), not the retryable FAILED_PRECONDITION', async () => {
    const err = await failure(h.data.DeleteBucket.bind(h.data), { bucket: 'orders' });
    assert.equal(err.code, grpc.status.ALREADY_EXISTS, err.message);
    assert.match(err.details, /not empty/);
    assert.equal(detailsOf(err), undefined);
    assert.ok((await call(h.data.GetBucket.bind(h.data), { bucket: 'orders' })).info, 'the bucket is still there');
  });

  it('maps the core errors it cannot reach here to their statuses (subscription cap, 503s)', async () => {
    const { toGrpcFailure } = await import('../../src/api/grpc/status-mapping.ts');
    const { ServiceError } = await import('../../src/core/errors.ts');
    assert.equal(toGrpcFailure(new ServiceError('resource_exhausted', 'subscriptions per star at cap')).code, grpc.status.RESOURCE_EXHAUSTED);
    assert.equal(toGrpcFailure(new ServiceError('unavailable', 'draining')).code, grpc.status.UNAVAILABLE);
    assert.equal(toGrpcFailure(new ServiceError('stream_deleted', 'gone')).code, grpc.status.FAILED_PRECONDITION);
  });

  it('maps a storage dependency away to UNAVAILABLE without logging it as a bug; logs anything else unmapped', async (t) => {
    const { toGrpcFailure } = await import('../../src/api/grpc/status-mapping.ts');
    const { MetadataUnavailableError } = await import('../../src/storage/metadata/metadata-store.ts');
    const logged = t.mock.method(console, 'error', () => undefined);
    const away = toGrpcFailure(new MetadataUnavailableError('the metadata store (postgres) failed: connection terminated'));
    assert.equal(away.code, grpc.status.UNAVAILABLE);
    assert.equal(logged.mock.callCount(), 0, 'an outage is not a bug (its health logs it once)');
    assert.equal(toGrpcFailure(new TypeError('x is undefined')).code, grpc.status.INTERNAL);
    assert.equal(logged.mock.callCount(), 1, 'a real unmapped error is');
    assert.match(String(logged.mock.calls[0].arguments[0]), /unmapped error \(bug\)/);
  });

  it('answers ExchangeToken UNIMPLEMENTED without an auth hook, and SettleStar for itself', async () => {
    const err = await failure(h.data.ExchangeToken.bind(h.data), { key_id: 'ck_1', secret: 's', bucket: 'orders' });
    assert.equal(err.code, grpc.status.UNIMPLEMENTED);
    const settled = await call(h.data.SettleStar.bind(h.data), {});
    assert.equal(settled.star_id, 'star-0');
    assert.equal((await failure(h.data.SettleStar.bind(h.data), { star_id: 'other' })).code, grpc.status.NOT_FOUND);
  });

  it('a Read that leaves max_bytes at 0 fits a stock client\'s 4 MiB receive limit; one that raised it asks for 8 MiB', async () => {
    await call(h.data.CreateBucket.bind(h.data), { bucket: 'big' });
    await call(h.data.CreateStream.bind(h.data), { bucket: 'big', key: bytes('k') });
    const record = Buffer.alloc(1024 * 1024 - 1024, 0x61); // five of them: 5 MiB less 5 KiB
    await call(h.data.Append.bind(h.data), { bucket: 'big', key: bytes('k'), records: Array.from({ length: 5 }, () => ({ body: record })) });
    const { proto } = loadSvcProto();
    const stock = new proto.svc.v1.DataService(`127.0.0.1:${h.server.port}`, grpc.credentials.createInsecure()); // default options
    try {
      const first = await call(stock.Read.bind(stock), { bucket: 'big', key: bytes('k'), seq_num: 0 });
      assert.equal(first.records.length, 3, 'a page of at most 3 MiB of records');
      const rest = await call(stock.Read.bind(stock), { bucket: 'big', key: bytes('k'), seq_num: 3 });
      assert.deepEqual(rest.records.map((r) => Number(r.seq_num)), [3, 4]);
    } finally {
      stock.close();
    }
    const whole = await call(h.data.Read.bind(h.data), { bucket: 'big', key: bytes('k'), seq_num: 0, max_bytes: 8 * 1024 * 1024 });
    assert.equal(whole.records.length, 5, 'an explicit max_bytes is honoured up to 8 MiB');
  });
});
