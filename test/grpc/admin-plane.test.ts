// AdminService as a one-star cluster over the real Star (auth off). The credential verbs with a real
// registry, and the admin marker, are covered in auth.test.ts under --auth jwt.
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { bytes, call, failure } from './client.ts';
import { startHarness, type Harness } from './harness.ts';

describe('grpc admin plane, one-star cluster, auth off', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ star: { id: 'star-a' } });
    await call(h.data.CreateBucket.bind(h.data), { bucket: 'b1', config: { create_stream_on_append: true } });
    await call(h.data.CreateBucket.bind(h.data), { bucket: 'b2' });
    for (const k of ['x', 'y', 'z']) {
      await call(h.data.Append.bind(h.data), { bucket: 'b1', key: bytes(k), records: [{ body: bytes(k) }, { body: bytes(k) }] });
    }
  });
  after(async () => { await h.stop(); });

  it('refuses to drain or decommission the only star, and knows no other', async () => {
    assert.equal((await failure(h.admin.Drain.bind(h.admin), {})).code, grpc.status.FAILED_PRECONDITION);
    assert.equal((await failure(h.admin.Drain.bind(h.admin), { star_id: 'star-a' })).code, grpc.status.FAILED_PRECONDITION);
    assert.equal((await failure(h.admin.Decommission.bind(h.admin), {})).code, grpc.status.FAILED_PRECONDITION);
    assert.equal((await failure(h.admin.Drain.bind(h.admin), { star_id: 'star-b' })).code, grpc.status.NOT_FOUND);
  });

  it('reports health, the one star, and bounded cluster counts', async () => {
    const health = await call(h.admin.Health.bind(h.admin), {});
    assert.equal(health.serving, true);
    assert.equal(health.star_id, 'star-a');
    const stars = await call(h.admin.ListStars.bind(h.admin), {});
    assert.equal(stars.stars.length, 1);
    assert.equal(stars.stars[0].state, 'STAR_STATE_ACTIVE');
    assert.match(stars.stars[0].address, /^127\.0\.0\.1:\d+$/);
    const o = await call(h.admin.GetClusterOverview.bind(h.admin), {});
    assert.deepEqual(
      { stars: o.star_count, buckets: o.bucket_count, streams: o.stream_count, capped: o.bucket_count_capped || o.stream_count_capped },
      { stars: 1, buckets: 2, streams: 3, capped: false },
    );
  });

  it('summarizes buckets and streams from the data plane', async () => {
    const buckets = await call(h.admin.ListBucketSummaries.bind(h.admin), {});
    assert.deepEqual(buckets.buckets.map((b) => [b.info?.name, b.stream_count]), [['b1', 3], ['b2', 0]]);
    const page = await call(h.admin.ListStreamSummaries.bind(h.admin), { bucket: 'b1', limit: 2 });
    assert.equal(page.streams.length, 2);
    assert.equal(page.streams[0].tail?.seq_num, 2);
    assert.equal(page.streams[0].leader_star_id, '', 'no producer is live on it: vacant (idle)');
    const rest = await call(h.admin.ListStreamSummaries.bind(h.admin), { bucket: 'b1', start_after: page.next });
    assert.deepEqual(rest.streams.map((s) => s.key.toString()), ['z']);
    const detail = await call(h.admin.GetStreamDetail.bind(h.admin), { bucket: 'b1', key: bytes('x') });
    assert.equal(detail.tail?.seq_num, 2);
    assert.equal(detail.fencing_token, '');
    const stats = await call(h.admin.GetStreamLiveStats.bind(h.admin), { bucket: 'b1', key: bytes('x') });
    assert.equal(stats.tail?.seq_num, 2);
  });

  it('reads records for the dashboard, clamped to the retained range', async () => {
    await call(h.data.Trim.bind(h.data), { bucket: 'b1', key: bytes('y'), seq_num: 1 });
    const page = await call(h.admin.ReadStreamRecords.bind(h.admin), { bucket: 'b1', key: bytes('y'), seq_num: 0 });
    assert.deepEqual(page.records.map((r) => r.seq_num), [1]);
  });

  it('has no audit queues', async () => {
    assert.deepEqual((await call(h.admin.ListAuditQueues.bind(h.admin), {})).queues, []);
    assert.equal((await failure(h.admin.PeekAuditQueue.bind(h.admin), { name: 'settle' })).code, grpc.status.NOT_FOUND);
  });

  it('answers the credential verbs UNIMPLEMENTED while no auth hook is installed', async () => {
    assert.equal((await failure(h.admin.CreateCredential.bind(h.admin), { scope: 'svc:admin' })).code, grpc.status.UNIMPLEMENTED);
    assert.equal((await failure(h.admin.ListCredentials.bind(h.admin), {})).code, grpc.status.UNIMPLEMENTED);
    assert.equal((await failure(h.admin.RevokeCredential.bind(h.admin), { key_id: 'ck_1' })).code, grpc.status.UNIMPLEMENTED);
  });
});
