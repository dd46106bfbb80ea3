// gRPC under --auth jwt, against a real svcd child process: the Bearer in `authorization` metadata,
// grants per verb (denied before the address resolves), the admin marker for the admin plane, the
// svc_aux fencing pin, the token's exp as the deadline of unary calls, subscriptions and sessions,
// and the credential registry and api-key exchange through the real auth module.
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import type { AppendSessionResponse__Output } from '../../src/gen/svc/v1/AppendSessionResponse.ts';
import type { SubscribeResponse__Output } from '../../src/gen/svc/v1/SubscribeResponse.ts';
import { bearer, bytes, callMd, failure, failureMd } from './client.ts';
import { mint, startGrpcChild, type GrpcChild } from './child.ts';

const ended = (s: grpc.ClientReadableStream<unknown> | grpc.ClientDuplexStream<unknown, unknown>): Promise<{ at: number; error?: grpc.ServiceError }> =>
  new Promise((resolve) => {
    s.once('error', (error: grpc.ServiceError) => resolve({ at: Date.now(), error }));
    s.once('end', () => resolve({ at: Date.now() }));
  });

describe('grpc auth (jwt)', () => {
  let c: GrpcChild;
  let admin: grpc.Metadata;
  before(async () => {
    c = await startGrpcChild({ jwt: true });
    admin = bearer(await mint('svc:admin', 600));
    await callMd(c.data.CreateBucket.bind(c.data), { bucket: 'b1', config: { create_stream_on_append: true } }, admin);
    await callMd(c.data.CreateBucket.bind(c.data), { bucket: 'b2' }, admin);
  });
  after(async () => { await c.stop(); });

  it('refuses a missing or bad bearer UNAUTHENTICATED', async () => {
    const none = await failure(c.data.CheckTail.bind(c.data), { bucket: 'b1', key: bytes('k') });
    assert.equal(none.code, grpc.status.UNAUTHENTICATED);
    const forged = await failureMd(c.data.CheckTail.bind(c.data), { bucket: 'b1', key: bytes('k') }, bearer('not.a.jwt'));
    assert.equal(forged.code, grpc.status.UNAUTHENTICATED);
    const expired = await failureMd(c.data.CheckTail.bind(c.data), { bucket: 'b1', key: bytes('k') }, bearer(await mint('svc:admin', -10)));
    assert.equal(expired.code, grpc.status.UNAUTHENTICATED);
  });

  it('tells an anonymous caller UNAUTHENTICATED even for a malformed address, and an authenticated one INVALID_ARGUMENT', async () => {
    const bad = { bucket: 'bad/name', key: bytes('k') };
    assert.equal((await failure(c.data.CheckTail.bind(c.data), bad)).code, grpc.status.UNAUTHENTICATED);
    assert.equal((await failure(c.data.GetBucket.bind(c.data), { bucket: '-nope' })).code, grpc.status.UNAUTHENTICATED);
    assert.equal((await failureMd(c.data.CheckTail.bind(c.data), bad, admin)).code, grpc.status.INVALID_ARGUMENT);
    assert.equal((await failure(c.admin.GetStreamDetail.bind(c.admin), bad)).code, grpc.status.UNAUTHENTICATED, 'the admin plane too');
  });

  it('allows exactly what the grants cover, denying before the address resolves', async () => {
    const appender = bearer(await mint('svc:append:b1:* svc:read:b1:k%2A', 600));
    const ack = await callMd(c.data.Append.bind(c.data), { bucket: 'b1', key: bytes('k*'), records: [{ body: bytes('x') }] }, appender);
    assert.equal(ack.end?.seq_num, 1);
    const tail = await callMd(c.data.CheckTail.bind(c.data), { bucket: 'b1', key: bytes('k*') }, appender);
    assert.equal(tail.tail?.seq_num, 1);
    // No read grant on this key: denied, whether or not the stream exists.
    for (const key of ['other', 'missing']) {
      const err = await failureMd(c.data.CheckTail.bind(c.data), { bucket: 'b1', key: bytes(key) }, appender);
      assert.equal(err.code, grpc.status.PERMISSION_DENIED, key);
    }
    assert.equal((await failureMd(c.data.Append.bind(c.data), { bucket: 'b2', key: bytes('k'), records: [{ body: bytes('x') }] }, appender)).code, grpc.status.PERMISSION_DENIED);
    assert.equal((await failureMd(c.data.Trim.bind(c.data), { bucket: 'b1', key: bytes('k*'), seq_num: 1 }, appender)).code, grpc.status.PERMISSION_DENIED);
    assert.equal((await failureMd(c.data.ListBuckets.bind(c.data), {}, appender)).code, grpc.status.PERMISSION_DENIED);
    // The data plane's grants never reach the admin plane.
    assert.equal((await failureMd(c.admin.Health.bind(c.admin), {}, appender)).code, grpc.status.PERMISSION_DENIED);
    assert.equal((await callMd(c.admin.Health.bind(c.admin), {}, admin)).serving, true);
    // Denied before the request is read: a malformed one (no bucket) is 403 too, not 400.
    assert.equal((await failureMd(c.admin.ReadStreamRecords.bind(c.admin), {}, appender)).code, grpc.status.PERMISSION_DENIED);
    assert.equal((await failureMd(c.admin.ListStreamSummaries.bind(c.admin), {}, appender)).code, grpc.status.PERMISSION_DENIED);
    assert.equal((await failureMd(c.admin.GetStreamDetail.bind(c.admin), {}, appender)).code, grpc.status.PERMISSION_DENIED);
    // A session opens only under an append grant.
    const reader = bearer(await mint('svc:read:b1:*', 600));
    const s = c.data.AppendSession(reader);
    s.write({ open: { bucket: 'b1', key: bytes('k*') } });
    assert.equal((await ended(s)).error?.code, grpc.status.PERMISSION_DENIED);
  });

  it('holds Append, Fence and AppendSession to the credential\'s pinned fencing token', async () => {
    const pinned = bearer(await mint('svc:append:b1:* svc:read:b1:*', 600, { fencing_token: 'pin-1' }));
    assert.equal((await failureMd(c.data.Fence.bind(c.data), { bucket: 'b1', key: bytes('p'), fencing_token: 'other' }, pinned)).code, grpc.status.PERMISSION_DENIED);
    await callMd(c.data.Append.bind(c.data), { bucket: 'b1', key: bytes('p'), records: [{ body: bytes('x') }] }, admin);
    await callMd(c.data.Fence.bind(c.data), { bucket: 'b1', key: bytes('p'), fencing_token: 'pin-1' }, pinned);
    assert.equal((await failureMd(c.data.Append.bind(c.data), { bucket: 'b1', key: bytes('p'), records: [{ body: bytes('x') }] }, pinned)).code, grpc.status.PERMISSION_DENIED);
    const ok = await callMd(c.data.Append.bind(c.data), { bucket: 'b1', key: bytes('p'), records: [{ body: bytes('x') }], fencing_token: 'pin-1' }, pinned);
    assert.equal(ok.end?.seq_num, 2);
    const wrong = c.data.AppendSession(pinned);
    wrong.write({ open: { bucket: 'b1', key: bytes('p'), fencing_token: 'pin-2' } });
    assert.equal((await ended(wrong)).error?.code, grpc.status.PERMISSION_DENIED);
    const right = c.data.AppendSession(pinned);
    const acks: AppendSessionResponse__Output[] = [];
    right.on('data', (a: AppendSessionResponse__Output) => acks.push(a));
    const done = ended(right);
    right.write({ open: { bucket: 'b1', key: bytes('p'), fencing_token: 'pin-1' } });
    right.write({ batch: { records: [{ body: bytes('y') }] } });
    right.end();
    assert.equal((await done).error, undefined);
    assert.equal(acks[0].start?.seq_num, 2);
  });

  it('ends Subscribe and AppendSession at the token\'s exp with DEADLINE_EXCEEDED', async () => {
    await callMd(c.data.Append.bind(c.data), { bucket: 'b1', key: bytes('exp'), records: [{ body: bytes('x') }] }, admin);
    // 3-4 s of life (exp is whole seconds): the calls reach the star before exp on a loaded machine.
    const token = await mint('svc:append:b1:exp svc:read:b1:exp', 4);
    const expMs = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).exp * 1000;
    const md = bearer(token);
    const sub = c.data.Subscribe({ bucket: 'b1', key: bytes('exp'), seq_num: 0 }, md);
    const got: SubscribeResponse__Output[] = [];
    sub.on('data', (b: SubscribeResponse__Output) => got.push(b));
    const subEnd = ended(sub);
    const session = c.data.AppendSession(md);
    session.on('data', () => {});
    const sessionEnd = ended(session);
    session.write({ open: { bucket: 'b1', key: bytes('exp') } });
    session.write({ batch: { records: [{ body: bytes('y') }] } });
    const [s1, s2] = await Promise.all([subEnd, sessionEnd]);
    assert.equal(s1.error?.code, grpc.status.DEADLINE_EXCEEDED);
    assert.equal(s2.error?.code, grpc.status.DEADLINE_EXCEEDED);
    assert.ok(got.length >= 1, 'delivered until exp');
    for (const s of [s1, s2]) {
      assert.ok(s.at >= expMs - 50, `ended ${expMs - s.at} ms before exp`);
      assert.ok(s.at < expMs + 1500, `ended ${s.at - expMs} ms after exp`);
    }
  });

  it('runs the credential registry on the admin plane and exchanges api keys for tokens', async () => {
    const created = await callMd(c.admin.CreateCredential.bind(c.admin), { scope: 'svc:read:b1:* svc:append:b1:*' }, admin);
    assert.match(created.credential?.key_id ?? '', /^ck_[0-9a-f]{16}$/);
    assert.equal(created.credential?.state, 'CREDENTIAL_STATE_ACTIVE');
    assert.ok(created.secret.length > 0);
    const keyId = created.credential?.key_id ?? '';
    const listed = await callMd(c.admin.ListCredentials.bind(c.admin), {}, admin);
    assert.ok(listed.credentials.some((x) => x.key_id === keyId));

    const t = await callMd(c.data.ExchangeToken.bind(c.data), { key_id: keyId, secret: created.secret, scope: 'svc:read:b1:*', ttl_seconds: 60 }, new grpc.Metadata());
    assert.ok(t.expires_at_unix_ms > Date.now() && t.expires_at_unix_ms <= Date.now() + 61_000);
    const tail = await callMd(c.data.CheckTail.bind(c.data), { bucket: 'b1', key: bytes('exp') }, bearer(t.token));
    assert.ok((tail.tail?.seq_num ?? 0) >= 1);
    assert.equal((await failureMd(c.data.Append.bind(c.data), { bucket: 'b1', key: bytes('exp'), records: [{ body: bytes('x') }] }, bearer(t.token))).code, grpc.status.PERMISSION_DENIED);
    const wrong = await failureMd(c.data.ExchangeToken.bind(c.data), { key_id: keyId, secret: 'nope', bucket: 'b1' }, new grpc.Metadata());
    assert.equal(wrong.code, grpc.status.UNAUTHENTICATED);
    const exceeds = await failureMd(c.data.ExchangeToken.bind(c.data), { key_id: keyId, secret: created.secret, scope: 'svc:trim:b1:*' }, new grpc.Metadata());
    assert.equal(exceeds.code, grpc.status.PERMISSION_DENIED);
    const neither = await failureMd(c.data.ExchangeToken.bind(c.data), { key_id: keyId, secret: created.secret }, new grpc.Metadata());
    assert.equal(neither.code, grpc.status.INVALID_ARGUMENT);

    const revoked = await callMd(c.admin.RevokeCredential.bind(c.admin), { key_id: keyId }, admin);
    assert.equal(revoked.credential?.state, 'CREDENTIAL_STATE_REVOKED');
    const after = await failureMd(c.data.ExchangeToken.bind(c.data), { key_id: keyId, secret: created.secret, bucket: 'b1' }, new grpc.Metadata());
    assert.equal(after.code, grpc.status.PERMISSION_DENIED);
    // Credential verbs need the admin marker.
    const appender = bearer(await mint('svc:append:*:*', 600));
    assert.equal((await failureMd(c.admin.ListCredentials.bind(c.admin), {}, appender)).code, grpc.status.PERMISSION_DENIED);
  });

  it('CreateCredential registers a given key_id as given: validated, duplicates ALREADY_EXISTS', async () => {
    const create = c.admin.CreateCredential.bind(c.admin);
    const named = await callMd(create, { key_id: 'ci-deployer.eu_1', scope: 'svc:read:b1:*' }, admin);
    assert.equal(named.credential?.key_id, 'ci-deployer.eu_1');
    const listed = await callMd(c.admin.ListCredentials.bind(c.admin), {}, admin);
    assert.ok(listed.credentials.some((x) => x.key_id === 'ci-deployer.eu_1'));
    const dup = await failureMd(create, { key_id: 'ci-deployer.eu_1', scope: 'svc:admin' }, admin);
    assert.equal(dup.code, grpc.status.ALREADY_EXISTS);
    for (const bad of ['has space', 'a:b', 'k'.repeat(129), 'ü']) {
      assert.equal((await failureMd(create, { key_id: bad, scope: 'svc:admin' }, admin)).code, grpc.status.INVALID_ARGUMENT, bad);
    }
    // The duplicate left the first secret working; ttl_seconds 0 is the default 15 minutes.
    const t = await callMd(c.data.ExchangeToken.bind(c.data), { key_id: 'ci-deployer.eu_1', secret: named.secret, bucket: 'b1', ttl_seconds: 0 }, new grpc.Metadata());
    const ttl = t.expires_at_unix_ms - Date.now();
    assert.ok(ttl > 890_000 && ttl <= 900_000, `${ttl} ms`);
    // A malformed token in the asked scope is skipped; nothing valid left is INVALID_ARGUMENT.
    const skipped = await callMd(c.data.ExchangeToken.bind(c.data), { key_id: 'ci-deployer.eu_1', secret: named.secret, scope: 'svc:read:b1:* svc:bogus:b1:*' }, new grpc.Metadata());
    assert.equal(JSON.parse(Buffer.from(skipped.token.split('.')[1], 'base64url').toString()).scope, 'svc:read:b1:*');
    const none = await failureMd(c.data.ExchangeToken.bind(c.data), { key_id: 'ci-deployer.eu_1', secret: named.secret, scope: 'svc:bogus:b1:*' }, new grpc.Metadata());
    assert.equal(none.code, grpc.status.INVALID_ARGUMENT);
    // An empty key_id still generates one.
    assert.match((await callMd(create, { key_id: '', scope: 'svc:read:b1:*' }, admin)).credential?.key_id ?? '', /^ck_[0-9a-f]{16}$/);
  });
});
