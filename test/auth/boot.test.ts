// startAuth: the parts put together at boot, end to end from flags to an authorized request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { authorize, isAuthorized, MemoryCredentialStore, parseAuthConfig, startAuth } from '../../src/auth/index.ts';
import { ServiceError } from '../../src/core/errors.ts';
import { httpStatusOf } from '../../src/api/http-status.ts';

const ROOT_SECRET = 'root-secret-of-at-least-32-bytes!';

test('jwt boot: root seed converges, exchange mints, the token authenticates and authorizes', async (t) => {
  const flags: Record<string, string> = { auth: 'jwt', 'root-key-id': 'root', 'insecure-auth': 'true' };
  const env = { SVCD_JWT_HMAC_SECRET: 'z'.repeat(32), SVCD_ROOT_SECRET: ROOT_SECRET };
  const config = parseAuthConfig((f) => flags[f], env, false);
  const store = new MemoryCredentialStore();
  const auth = await startAuth(config, { store, starId: 's1' });
  t.after(() => auth.close());
  const row = await store.get('root');
  assert.equal(row?.secret_hash, createHash('sha256').update(ROOT_SECRET).digest('hex'));

  const { token } = await auth.exchanger.exchange({ key_id: 'root', secret: ROOT_SECRET, scope: 'svc:admin' });
  const admin = await auth.authenticator.authenticate(`Bearer ${token}`);
  authorize(admin, 'Admin');
  const created = await auth.registry.create('svc:append:logs:app%2F*');
  const narrow = await auth.exchanger.exchange({ key_id: created.key_id, secret: created.secret, bucket: 'logs' });
  const p = await auth.authenticator.authenticate(`Bearer ${narrow.token}`);
  assert.ok(isAuthorized(p, 'Append', { bucket: 'logs', key: 'app/web' }));
  assert.throws(() => authorize(p, 'Read', { bucket: 'logs', key: 'app/web' }), (e: unknown) => e instanceof ServiceError && httpStatusOf(e.code) === 403);
  await assert.rejects(auth.authenticator.authenticate(undefined), (e: unknown) => e instanceof ServiceError && httpStatusOf(e.code) === 401);
  const peer = await auth.authenticator.authenticate(await auth.peer.authorization());
  authorize(peer, 'SettleStar');
  assert.ok(!isAuthorized(peer, 'Read', { bucket: 'logs', key: 'x' }));
});

test('off boot: everyone trusted, exchange is 501', async () => {
  const auth = await startAuth(parseAuthConfig(() => undefined, {}, false), { store: new MemoryCredentialStore(), starId: 's1' });
  assert.equal((await auth.authenticator.authenticate(undefined)).kind, 'anonymous-trusted');
  await assert.rejects(auth.exchanger.exchange({ key_id: 'a', secret: 'b', bucket: 'c' }), (e: unknown) => e instanceof ServiceError && httpStatusOf(e.code) === 501);
  assert.equal(await auth.peer.authorization(), undefined);
});
