// AdminService as a one-star cluster, and the auth hook's plumbing (authorize, exchange, credentials).
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import type { CredentialRow, GrpcAuthHooks, GrpcAuthRequest } from '../../src/api/grpc/hooks.ts';
import { ServiceError } from '../../src/core/errors.ts';
import type { CreateCredentialResponse__Output } from '../../src/gen/svc/v1/CreateCredentialResponse.ts';
import type { ListCredentialsResponse__Output } from '../../src/gen/svc/v1/ListCredentialsResponse.ts';
import type { RevokeCredentialResponse__Output } from '../../src/gen/svc/v1/RevokeCredentialResponse.ts';
import { bytes, call, failure } from './client.ts';
import { FakeService } from './fake-service.ts';
import { BACKENDS, startHarness, startHarnessOn, type Harness } from './harness.ts';

for (const backend of BACKENDS) describe(`grpc admin plane, one-star cluster, no auth hook (${backend.name})`, () => {
  let h: Harness;
  before(async () => {
    h = await startHarnessOn(backend, { star: { id: 'star-a' } });
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
    assert.equal(page.streams[0].leader_star_id, 'star-a');
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

describe('grpc auth hook', () => {
  let h: Harness;
  const seen: GrpcAuthRequest[] = [];
  const rows = new Map<string, CredentialRow>();
  const auth: GrpcAuthHooks = {
    authorize(req) {
      seen.push(req);
      if (req.metadata.get('authorization')[0] !== 'Bearer good') throw new ServiceError('unauthenticated', 'no credential');
    },
    async exchangeToken(req) {
      if (req.secret !== 'sesame') throw new ServiceError('unauthenticated', 'bad key id or secret');
      return { token: `jwt-for-${req.bucket ?? req.scope}`, expires_at_unix_ms: 1234 };
    },
    async createCredential(req) {
      const row: CredentialRow = { key_id: req.key_id || 'ck_0000000000000001', scope: req.scope, state: 'active', created_at_unix_ms: 1 };
      rows.set(row.key_id, row);
      return { credential: row, secret: 'shown-once' };
    },
    async listCredentials() { return { items: [...rows.values()], next: '' }; },
    async revokeCredential(keyId) {
      const row = rows.get(keyId);
      if (!row) throw new ServiceError('not_found', 'no such credential');
      row.state = 'revoked';
      return row;
    },
  };
  const good = (): grpc.Metadata => { const m = new grpc.Metadata(); m.set('authorization', 'Bearer good'); return m; };

  before(async () => { h = await startHarness(new FakeService(), { auth }); });
  after(async () => { await h.stop(); });

  it('checks every verb before it resolves the address', async () => {
    const err = await failure(h.data.GetStream.bind(h.data), { bucket: 'missing', key: bytes('k') });
    assert.equal(err.code, grpc.status.UNAUTHENTICATED, 'denied before NOT_FOUND could leak existence');
    assert.deepEqual({ verb: seen.at(-1)?.verb, plane: seen.at(-1)?.plane, bucket: seen.at(-1)?.bucket, key: seen.at(-1)?.key },
      { verb: 'GetStream', plane: 'data', bucket: 'missing', key: 'k' });
    await new Promise<void>((resolve, reject) => {
      h.data.CreateBucket({ bucket: 'ok' }, good(), (e) => (e ? reject(e) : resolve()));
    });
    assert.equal((await failure(h.admin.Health.bind(h.admin), {})).code, grpc.status.UNAUTHENTICATED);
    assert.equal(seen.at(-1)?.plane, 'admin');
  });

  it('exchanges tokens without a bearer, through the hook', async () => {
    const t = await call(h.data.ExchangeToken.bind(h.data), { key_id: 'ck_1', secret: 'sesame', bucket: 'orders', ttl_seconds: 60 });
    assert.deepEqual(t, { token: 'jwt-for-orders', expires_at_unix_ms: 1234 });
    const bad = await failure(h.data.ExchangeToken.bind(h.data), { key_id: 'ck_1', secret: 'nope', scope: 'svc:read:*:*' });
    assert.equal(bad.code, grpc.status.UNAUTHENTICATED);
    const neither = await failure(h.data.ExchangeToken.bind(h.data), { key_id: 'ck_1', secret: 'sesame' });
    assert.equal(neither.code, grpc.status.INVALID_ARGUMENT);
  });

  it('runs the credential registry through the hook', async () => {
    type Cb<Res> = (e: grpc.ServiceError | null, r?: Res) => void;
    const admin = <Res>(start: (md: grpc.Metadata, cb: Cb<Res>) => unknown): Promise<Res> =>
      new Promise((resolve, reject) => { start(good(), (e, r) => (e ? reject(e) : resolve(r as Res))); });
    const created = await admin<CreateCredentialResponse__Output>((md, cb) => h.admin.CreateCredential({ scope: 'svc:read:b:*' }, md, cb));
    assert.equal(created.secret, 'shown-once');
    assert.equal(created.credential?.state, 'CREDENTIAL_STATE_ACTIVE');
    const keyId = created.credential?.key_id ?? '';
    const revoked = await admin<RevokeCredentialResponse__Output>((md, cb) => h.admin.RevokeCredential({ key_id: keyId }, md, cb));
    assert.equal(revoked.credential?.state, 'CREDENTIAL_STATE_REVOKED');
    const list = await admin<ListCredentialsResponse__Output>((md, cb) => h.admin.ListCredentials({}, md, cb));
    assert.equal(list.credentials.length, 1);
  });
});
