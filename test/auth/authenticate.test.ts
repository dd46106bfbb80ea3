// Authentication per mode, from the raw Authorization value a transport hands over.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '../../src/core/errors.ts';
import { constantTimeEqual, createAuthenticator } from '../../src/auth/authenticate.ts';
import type { AuthConfig } from '../../src/auth/config.ts';
import { createJwtVerifier } from '../../src/auth/jwt.ts';
import { createPeerCredentials } from '../../src/auth/peer.ts';
import { httpStatusOf } from '../../src/api/http-status.ts';

const is401 = (err: unknown): boolean => err instanceof ServiceError && err.code === 'unauthenticated' && httpStatusOf(err.code) === 401;
const SECRET = new TextEncoder().encode('s'.repeat(32));

test('off: every caller is trusted, headers are not even read', async () => {
  const a = createAuthenticator({ mode: 'off', insecureAuth: false });
  const p = await a.authenticate('Bearer garbage');
  assert.equal(p.kind, 'anonymous-trusted');
});

test('mtls: only a transport-verified client certificate passes', async () => {
  const a = createAuthenticator({ mode: 'mtls', insecureAuth: false, mtls: { certFile: 'c', keyFile: 'k', clientCaFile: 'ca' } });
  assert.equal((await a.authenticate(undefined, { clientCertVerified: true })).kind, 'anonymous-trusted');
  await assert.rejects(a.authenticate(undefined, { clientCertVerified: false }), is401);
  await assert.rejects(a.authenticate('Bearer x'), is401);
});

test('basic: the operator with the admin marker; malformed or wrong credentials are 401', async () => {
  const config: AuthConfig = { mode: 'basic', insecureAuth: true, basic: { username: 'ops', password: 'p:w d' } };
  const a = createAuthenticator(config);
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const p = await a.authenticate(`Basic ${b64('ops:p:w d')}`);
  assert.equal(p.admin, true);
  assert.equal(p.sub, 'ops');
  assert.equal((await a.authenticate(`basic ${b64('ops:p:w d')}`)).sub, 'ops'); // scheme is case-insensitive
  for (const bad of [
    undefined, '', 'Basic', 'Basic ', `Basic ${b64('ops:wrong')}`, `Basic ${b64('OPS:p:w d')}`, `Basic ${b64('ops')}`,
    `Bearer ${b64('ops:p:w d')}`, 'Basic !!!!', `Basic ${b64('ops:p:w d')} extra`, [`Basic ${b64('ops:p:w d')}`, 'Basic x'],
  ]) {
    await assert.rejects(a.authenticate(bad), is401, String(bad));
  }
  // Peers present the operator login.
  const peer = createPeerCredentials(config, undefined, 'star-1');
  assert.equal((await a.authenticate(await peer.authorization())).sub, 'ops');
});

test('jwt: Bearer only; malformed headers are clean 401s', async () => {
  const config: AuthConfig = { mode: 'jwt', insecureAuth: true, jwt: { source: { kind: 'hmac-secret', key: { kid: '', secret: SECRET } } } };
  const verifier = await createJwtVerifier(config.jwt!);
  const a = createAuthenticator(config, verifier);
  const { token } = await verifier.signer!.sign({ scope: 'svc:read:b:*', sub: 'me' }, 60);
  assert.equal((await a.authenticate(`Bearer ${token}`)).sub, 'me');
  assert.equal((await a.authenticate(`bearer  ${token}`)).sub, 'me');
  assert.equal((await a.authenticate([`Bearer ${token}`])).sub, 'me');
  for (const bad of [
    undefined, [], '', 'Bearer', 'Bearer ', token, `Token ${token}`, `Basic ${token}`, `Bearer ${token} x`,
    `Bearer ${token}x`, 'Bearer a.b.c', `Bearer\t${token}`, [`Bearer ${token}`, `Bearer ${token}`],
    `Bearer ${'a'.repeat(40_000)}`,
  ]) {
    await assert.rejects(a.authenticate(bad), is401, String(bad).slice(0, 60));
  }
  // Peers self-mint svc:node, cached until close to expiry.
  const peer = createPeerCredentials(config, verifier.signer, 'star-1');
  const h1 = await peer.authorization();
  const pp = await a.authenticate(h1);
  assert.equal(pp.node, true);
  assert.equal(pp.sub, 'star:star-1');
  assert.equal(pp.grants.length, 0);
  assert.equal(await peer.authorization(), h1);
});

test('jwt under JWKS/OIDC: peers use the provisioned token', async () => {
  const config: AuthConfig = { mode: 'jwt', insecureAuth: false, jwt: { source: { kind: 'jwks-url', url: 'https://x' } }, peerServiceToken: 'tok' };
  assert.equal(await createPeerCredentials(config, undefined, 's').authorization(), 'Bearer tok');
  assert.equal(await createPeerCredentials({ mode: 'mtls', insecureAuth: false }, undefined, 's').authorization(), undefined);
  // Without one (a hand-built config; parseAuthConfig refuses it) it fails at once, not at the first peer call.
  const { peerServiceToken: _tok, ...without } = config;
  assert.throws(() => createPeerCredentials(without, undefined, 's'), /^Error: auth: jwt with JWKS\/OIDC needs a provisioned peer service token$/);
});

test('constantTimeEqual', () => {
  assert.ok(constantTimeEqual('abc', 'abc'));
  assert.ok(!constantTimeEqual('abc', 'abd'));
  assert.ok(!constantTimeEqual('abc', 'abcd'));
  assert.ok(constantTimeEqual('', ''));
});
