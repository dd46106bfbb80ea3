// The api-key exchange: narrowing, ttl, error verdicts, and the whole loop into authorize().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '../../src/core/errors.ts';
import { isAuthorized } from '../../src/auth/authorize.ts';
import { CredentialRegistry, MemoryCredentialStore } from '../../src/auth/credentials.ts';
import { createExchanger } from '../../src/auth/exchange.ts';
import { createJwtVerifier } from '../../src/auth/jwt.ts';
import { parseScope } from '../../src/auth/scope.ts';

const NOW = 1_700_000_000_000;
const code = (c: string) => (err: unknown): boolean => err instanceof ServiceError && err.code === c;

async function setup(scope: string) {
  const verifier = await createJwtVerifier(
    { source: { kind: 'hmac-secret', key: { kid: '', secret: new TextEncoder().encode('k'.repeat(32)) } } },
    { now: () => NOW },
  );
  const registry = new CredentialRegistry(new MemoryCredentialStore(), { now: () => NOW });
  const cred = await registry.create(scope);
  const ex = createExchanger(registry, verifier.signer);
  return { verifier, registry, cred, ex };
}

test('bucket narrowing rewrites grants to that bucket; ttl defaults to 15 min', async () => {
  const { verifier, cred, ex } = await setup('svc:read:ord*:* svc:append:orders:eu* svc:trim:other:* svc:node');
  const res = await ex.exchange({ key_id: cred.key_id, secret: cred.secret, bucket: 'orders' });
  assert.equal(res.expires_at_unix_ms, (Math.floor(NOW / 1000) + 900) * 1000);
  const p = await verifier.verify(res.token);
  assert.equal(p.sub, cred.key_id);
  assert.equal(p.expMs, res.expires_at_unix_ms);
  assert.equal(p.node, false);
  assert.ok(isAuthorized(p, 'Read', { bucket: 'orders', key: 'x' }));
  assert.ok(!isAuthorized(p, 'Read', { bucket: 'orders2', key: 'x' }));
  assert.ok(isAuthorized(p, 'Append', { bucket: 'orders', key: 'eu1' }));
  assert.ok(!isAuthorized(p, 'Append', { bucket: 'orders', key: 'us1' }));
  assert.ok(!isAuthorized(p, 'Trim', { bucket: 'other', key: 'x' }));
  await assert.rejects(ex.exchange({ key_id: cred.key_id, secret: cred.secret, bucket: 'nothing' }), code('permission_denied'));
});

test('admin credentials narrow to every action on the bucket', async () => {
  const { verifier, cred, ex } = await setup('svc:admin');
  const p = await verifier.verify((await ex.exchange({ key_id: cred.key_id, secret: cred.secret, bucket: 'b' })).token);
  assert.equal(p.admin, false);
  for (const op of ['Append', 'Read', 'Trim', 'DeleteStream', 'CreateStream'] as const) assert.ok(isAuthorized(p, op, { bucket: 'b', key: 'k' }), op);
  assert.ok(isAuthorized(p, 'ListStreams', { bucket: 'b' }));
  assert.ok(!isAuthorized(p, 'ListBuckets', {}));
  assert.ok(!isAuthorized(p, 'Read', { bucket: 'c', key: 'k' }));
  const any = await verifier.verify((await ex.exchange({ key_id: cred.key_id, secret: cred.secret, scope: 'svc:admin svc:node' })).token);
  assert.equal(any.admin, true);
});

test('scope narrowing must sit whole inside the held grants', async () => {
  const { verifier, cred, ex } = await setup('svc:read:b*:eu%2F* svc:append:b1:k');
  const ask = (scope: string) => ex.exchange({ key_id: cred.key_id, secret: cred.secret, scope, ttl_seconds: 60 });
  const p = await verifier.verify((await ask('svc:read:b1:eu%2Fx openid svc:append:b1:k')).token);
  assert.equal(p.grants.length, 2);
  assert.equal(p.expMs, (Math.floor(NOW / 1000) + 60) * 1000);
  await ask('svc:read:b*:eu%2F*');
  await ask('svc:read:bx:eu%2Fa*');
  for (const over of ['svc:read:b1:*', 'svc:read:*:eu%2F*', 'svc:append:b1:k*', 'svc:trim:b1:k', 'svc:admin', 'svc:node', 'svc:read:b1:eu%2Fx svc:read:c:eu%2Fx']) {
    await assert.rejects(ask(over), code('permission_denied'), over);
  }
  await assert.rejects(ask('svc:read:b1:eu/x'), code('invalid_argument'));
  await assert.rejects(ask('openid'), code('invalid_argument'));
});

test('ttl is clamped to an hour', async () => {
  const { cred, ex } = await setup('svc:admin');
  const res = await ex.exchange({ key_id: cred.key_id, secret: cred.secret, bucket: 'b', ttl_seconds: 86_400 });
  assert.equal(res.expires_at_unix_ms, (Math.floor(NOW / 1000) + 3600) * 1000);
});

test('verdicts: 400 shape, 401 unknown/wrong alike, 403 revoked, 501 without a signer', async () => {
  const { registry, cred, ex } = await setup('svc:admin');
  const base = { key_id: cred.key_id, secret: cred.secret };
  for (const bad of [null, [], 'x', { ...base }, { ...base, bucket: 'b', scope: 'svc:admin' }, { ...base, bucket: 7 },
    { ...base, bucket: 'a:b' }, { ...base, bucket: '' }, { ...base, scope: 5 }, { ...base, bucket: 'b', ttl_seconds: 0 },
    { ...base, bucket: 'b', ttl_seconds: 1.5 }, { ...base, bucket: 'b', ttl_seconds: '60' }]) {
    await assert.rejects(ex.exchange(bad), code('invalid_argument'), JSON.stringify(bad));
  }
  const unknown = await ex.exchange({ key_id: 'ck_0000000000000000', secret: cred.secret, bucket: 'b' }).catch((e: unknown) => e);
  const wrong = await ex.exchange({ key_id: cred.key_id, secret: 'wrong', bucket: 'b' }).catch((e: unknown) => e);
  assert.ok(unknown instanceof ServiceError && wrong instanceof ServiceError);
  assert.equal(unknown.httpStatus, 401);
  assert.deepEqual(unknown.toBody(), wrong.toBody());
  await assert.rejects(ex.exchange({ secret: 'x', bucket: 'b' }), code('unauthenticated'));
  await registry.revoke(cred.key_id);
  await assert.rejects(ex.exchange({ ...base, bucket: 'b' }), (e: unknown) => e instanceof ServiceError && e.httpStatus === 403);
  const verifyOnly = createExchanger(registry, undefined);
  await assert.rejects(verifyOnly.exchange({ ...base, bucket: 'b' }), (e: unknown) => e instanceof ServiceError && e.httpStatus === 501);
});

test('minted scope is canonical and parses back to the same grants', async () => {
  const { verifier, cred, ex } = await setup('svc:read:b:*');
  const p = await verifier.verify((await ex.exchange({ key_id: cred.key_id, secret: cred.secret, scope: 'svc:read:b:a%2f*' })).token);
  assert.deepEqual(p.grants, parseScope('svc:read:b:a%2F*').grants);
});
