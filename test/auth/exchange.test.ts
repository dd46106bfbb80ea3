// The api-key exchange: narrowing, ttl, error verdicts, and the whole loop into authorize().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '../../src/core/errors.ts';
import { isAuthorized } from '../../src/auth/authorize.ts';
import { CredentialRegistry, MemoryCredentialStore } from '../../src/auth/credentials.ts';
import { createExchanger } from '../../src/auth/exchange.ts';
import { createJwtVerifier } from '../../src/auth/jwt.ts';
import { parseScope } from '../../src/auth/scope.ts';
import { httpStatusOf } from '../../src/api/http-status.ts';
import { MINTED_TOKEN_CHARS_MAX, REQUEST_HEAD_BYTES_MAX } from '../../src/config/limits.ts';

const NOW = 1_700_000_000_000;
const code = (c: string) => (err: unknown): boolean => err instanceof ServiceError && err.code === c;

async function setup(scope: string) {
  const verifier = await createJwtVerifier(
    { source: { kind: 'hmac-secret', key: { kid: '', secret: new TextEncoder().encode('k'.repeat(32)) } } },
    { now: () => NOW },
  );
  const registry = new CredentialRegistry(new MemoryCredentialStore(), { now: () => NOW });
  const cred = await registry.create(scope);
  const logged: string[] = [];
  const ex = createExchanger(registry, verifier.signer, { log: (m) => logged.push(m) });
  return { verifier, registry, cred, ex, logged };
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

test('a bucket narrowing that names no possible bucket is 400, whatever the credential holds', async () => {
  for (const scope of ['svc:admin', 'svc:read:*:*', 'svc:read:ta:*']) {
    const { cred, ex } = await setup(scope);
    // `api` (any case) is the Gateway's host name, never a bucket.
    for (const bucket of ['ta%', '-ta', 'ta/x', 'ta!', 'ta*', 't:a', 't a', 'é', '', 'x'.repeat(129), 'api', 'API']) {
      await assert.rejects(ex.exchange({ key_id: cred.key_id, secret: cred.secret, bucket }), code('invalid_argument'), `${scope} ${JSON.stringify(bucket)}`);
    }
    if (scope !== 'svc:read:ta:*') assert.ok((await ex.exchange({ key_id: cred.key_id, secret: cred.secret, bucket: 'ta.b_c-1' })).token);
  }
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

test('asked scope, rule 5: malformed or unknown svc: tokens are skipped and logged; 400 only when nothing valid remains', async () => {
  const { verifier, cred, ex, logged } = await setup('svc:read:b*:* svc:append:b1:k');
  const ask = (scope: string, secret = cred.secret) => ex.exchange({ key_id: cred.key_id, secret, scope });
  const p = await verifier.verify((await ask('svc:read:b1:* svc:bogus:b1:* svc:read:b1:a/b openid svc:read svc:append:b1:k')).token);
  assert.deepEqual(p.grants, parseScope('svc:read:b1:* svc:append:b1:k').grants, 'the valid grants are minted, nothing else');
  assert.equal(logged.length, 1, 'one log line per ask');
  assert.match(logged[0], new RegExp(`^auth: exchange for ${cred.key_id} skipped 3 scope token\\(s\\): 'svc:bogus:b1:\\*': unknown action 'bogus'; 'svc:read:b1:a/b': .*; 'svc:read': `));
  assert.ok(!logged[0].includes('openid'), 'entries without svc: are ignored, not logged');

  // A valid token that exceeds the credential is still 403, skipped ones beside it notwithstanding.
  await assert.rejects(ask('svc:trim:b1:* svc:bogus:x:y'), code('permission_denied'));
  // Nothing valid left: 400, and the answer says what was skipped.
  const none = await ask('svc:bogus:b1:* openid svc:read:b1').catch((e: unknown) => e);
  assert.ok(none instanceof ServiceError && none.code === 'invalid_argument');
  assert.match(none.message, /scope asks for no valid svc: grant \(skipped 'svc:bogus:b1:\*': unknown action 'bogus'; 'svc:read:b1': expected/);
  await assert.rejects(ask(''), code('invalid_argument'));
  await assert.rejects(ask('openid profile'), code('invalid_argument'));
  // Shape before credential: a scope with nothing valid is 400 even with a wrong secret, and a
  // wrong secret never reaches the log.
  logged.length = 0;
  await assert.rejects(ask('svc:bogus:b1:*', 'wrong'), code('invalid_argument'));
  await assert.rejects(ask('svc:read:b1:* svc:bogus:b1:*', 'wrong'), code('unauthenticated'));
  assert.ok(logged.length === 0, logged.join('\n'));
  // A hostile ask cannot write unbounded text to the log.
  await ask(`svc:read:b1:* ${Array.from({ length: 10 }, (_, i) => `svc:x${i}:${'y'.repeat(5000)}`).join(' ')}`);
  assert.equal(logged.length, 1);
  assert.ok(logged[0].length < 1000, `${logged[0].length} chars`);
  assert.match(logged[0], /skipped 10 scope token\(s\).*; and 6 more$/);
});

test('asked scope: more than 64 svc: tokens rejects the ask (400); 64 is fine; other entries do not count', async () => {
  const { cred, ex } = await setup('svc:read:b:*');
  const ask = (scope: string) => ex.exchange({ key_id: cred.key_id, secret: cred.secret, scope });
  const tokens = (n: number): string[] => Array.from({ length: n }, (_, i) => `svc:read:b:k${i}`);
  await ask(tokens(64).join(' '));
  await ask([...tokens(64), ...Array.from({ length: 100 }, (_, i) => `openid${i}`)].join(' '));
  const over = await ask(tokens(65).join(' ')).catch((e: unknown) => e);
  assert.ok(over instanceof ServiceError && over.code === 'invalid_argument', String(over));
  assert.match(over.message, /65 svc: scope tokens, at most 64/);
  // Malformed svc: tokens count toward the cap too.
  await assert.rejects(ask([...tokens(60), ...Array.from({ length: 5 }, (_, i) => `svc:bogus${i}`)].join(' ')), code('invalid_argument'));
});

test('ttl is clamped to an hour; 0 and null mean the default 15 minutes', async () => {
  const { cred, ex } = await setup('svc:admin');
  const expiry = async (ttl: unknown): Promise<number> =>
    (await ex.exchange({ key_id: cred.key_id, secret: cred.secret, bucket: 'b', ttl_seconds: ttl })).expires_at_unix_ms;
  const at = (s: number): number => (Math.floor(NOW / 1000) + s) * 1000;
  assert.equal(await expiry(86_400), at(3600));
  assert.equal(await expiry(Number.MAX_SAFE_INTEGER), at(3600));
  assert.equal(await expiry(0), at(900));
  assert.equal(await expiry(null), at(900));
  assert.equal(await expiry(undefined), at(900));
  assert.equal(await expiry(1), at(1));
  for (const bad of [-1, -0.5, 1.5, Number.NaN, '60', true, {}, []]) {
    await assert.rejects(expiry(bad), code('invalid_argument'), JSON.stringify(bad));
  }
});

test('unknown body fields are 400, before the credential is looked at', async () => {
  const { cred, ex } = await setup('svc:admin');
  for (const extra of [{ ttl: 60 }, { scopes: 'svc:admin' }, { keyId: 'x' }, { audience: 'x' }, { __proto__x: 1 }]) {
    const err = await ex.exchange({ key_id: cred.key_id, secret: cred.secret, bucket: 'b', ...extra }).catch((e: unknown) => e);
    assert.ok(err instanceof ServiceError && err.code === 'invalid_argument', JSON.stringify(extra));
    assert.match(err.message, new RegExp(`^unknown field ${Object.keys(extra)[0]}$`));
  }
  await assert.rejects(ex.exchange({ key_id: cred.key_id, secret: 'wrong', bucket: 'b', extra: 1 }), code('invalid_argument'));
  await assert.rejects(ex.exchange({ secret: cred.secret, bucket: 'b', keyid: cred.key_id }), code('invalid_argument'));
});

test('verdicts: 400 shape, 401 unknown/wrong alike, 403 revoked, 501 without a signer', async () => {
  const { registry, cred, ex } = await setup('svc:admin');
  const base = { key_id: cred.key_id, secret: cred.secret };
  for (const bad of [null, [], 'x', { ...base }, { ...base, bucket: 'b', scope: 'svc:admin' }, { ...base, bucket: 7 },
    { ...base, bucket: 'a:b' }, { ...base, bucket: '' }, { ...base, scope: 5 }, { ...base, bucket: 'b', ttl_seconds: -5 },
    { ...base, bucket: 'b', ttl_seconds: 1.5 }, { ...base, bucket: 'b', ttl_seconds: '60' }, { ...base, bucket: 'b', nope: 1 }]) {
    await assert.rejects(ex.exchange(bad), code('invalid_argument'), JSON.stringify(bad));
  }
  const unknown = await ex.exchange({ key_id: 'ck_0000000000000000', secret: cred.secret, bucket: 'b' }).catch((e: unknown) => e);
  const wrong = await ex.exchange({ key_id: cred.key_id, secret: 'wrong', bucket: 'b' }).catch((e: unknown) => e);
  assert.ok(unknown instanceof ServiceError && wrong instanceof ServiceError);
  assert.equal(httpStatusOf(unknown.code), 401);
  assert.deepEqual(unknown.toBody(), wrong.toBody());
  await assert.rejects(ex.exchange({ secret: 'x', bucket: 'b' }), code('unauthenticated'));
  await registry.revoke(cred.key_id);
  await assert.rejects(ex.exchange({ ...base, bucket: 'b' }), (e: unknown) => e instanceof ServiceError && httpStatusOf(e.code) === 403);
  const verifyOnly = createExchanger(registry, undefined);
  await assert.rejects(verifyOnly.exchange({ ...base, bucket: 'b' }), (e: unknown) => e instanceof ServiceError && httpStatusOf(e.code) === 501);
});

test('minted scope is canonical and parses back to the same grants', async () => {
  const { verifier, cred, ex } = await setup('svc:read:b:*');
  const p = await verifier.verify((await ex.exchange({ key_id: cred.key_id, secret: cred.secret, scope: 'svc:read:b:a%2F*' })).token);
  assert.deepEqual(p.grants, parseScope('svc:read:b:a%2F*').grants);
});

test('a scope whose token would be too long for any request is 400 at the exchange, not a token every request refuses', async () => {
  const long = (i: number): string => `svc:read:b:${String(i).padStart(3, '0')}${'k'.repeat(200)}`;
  const { verifier, cred, ex } = await setup(Array.from({ length: 64 }, (_, i) => long(i)).join(' '));
  const whole = ex.exchange({ key_id: cred.key_id, secret: cred.secret, bucket: 'b' });
  await assert.rejects(whole, (e: unknown) => code('invalid_argument')(e) && httpStatusOf((e as ServiceError).code) === 400
    && new RegExp(`over the ${MINTED_TOKEN_CHARS_MAX} a request head has room for`).test((e as Error).message));
  // Asking for part of it fits, and the token it gets leaves room in a request head for the rest.
  const part = await ex.exchange({ key_id: cred.key_id, secret: cred.secret, scope: [0, 1, 2].map(long).join(' ') });
  assert.ok(part.token.length <= MINTED_TOKEN_CHARS_MAX);
  assert.ok(MINTED_TOKEN_CHARS_MAX + 'Authorization: Bearer \r\n'.length + 1024 < REQUEST_HEAD_BYTES_MAX, 'room for the request line and other fields');
  assert.equal((await verifier.verify(part.token)).grants.length, 3);
});
