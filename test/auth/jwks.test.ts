// Asymmetric sources: a JWKS URL and OIDC discovery, served from a loopback node:http server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, exportSPKI, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { ServiceError } from '../../src/core/errors.ts';
import { createJwtVerifier, type JwtVerifier } from '../../src/auth/jwt.ts';

interface Fixture {
  url: string;
  jwks: { keys: JWK[] };
  discovery: Record<string, unknown>;
  hits: Map<string, number>;
  server: Server;
}

async function serve(): Promise<Fixture> {
  const fx = { jwks: { keys: [] as JWK[] }, discovery: {} as Record<string, unknown>, hits: new Map<string, number>() } as Fixture;
  fx.server = createServer((req, res) => {
    const path = req.url ?? '';
    fx.hits.set(path, (fx.hits.get(path) ?? 0) + 1);
    const body = path === '/jwks' ? fx.jwks : path === '/.well-known/openid-configuration' ? fx.discovery : undefined;
    if (body === undefined) { res.writeHead(404).end(); return; }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => fx.server.listen(0, '127.0.0.1', resolve));
  fx.url = `http://127.0.0.1:${(fx.server.address() as AddressInfo).port}`;
  return fx;
}

async function pair(alg: string, kid: string): Promise<{ priv: CryptoKey; jwk: JWK; pub: CryptoKey }> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { priv: privateKey, pub: publicKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

const exp = () => Math.floor(Date.now() / 1000) + 600;

async function sign(priv: CryptoKey | Uint8Array, alg: string, payload: Record<string, unknown>, kid?: string): Promise<string> {
  return new SignJWT(payload).setProtectedHeader({ alg, ...(kid ? { kid } : {}) }).setExpirationTime(exp()).sign(priv);
}

/** Poll a condition (timers run on their own schedule); fail after a generous bound. */
async function until(cond: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    assert.ok(Date.now() < deadline, 'condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function rejects401(v: JwtVerifier, token: string): Promise<void> {
  await assert.rejects(v.verify(token), (err: unknown) => err instanceof ServiceError && err.code === 'unauthenticated');
}

test('JWKS: RS*, ES*, EdDSA verify; symmetric never; no kid tries each; refresh drops removed keys', async (t) => {
  const fx = await serve();
  t.after(() => { fx.server.closeAllConnections(); fx.server.close(); });
  const algs = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
  const keys = await Promise.all(algs.map((alg, i) => pair(alg, `k${i}`)));
  const spare = await pair('RS256', 'spare');
  fx.jwks.keys = [...keys.map((k) => k.jwk), spare.jwk];
  const v = await createJwtVerifier({ source: { kind: 'jwks-url', url: `${fx.url}/jwks` } }, { log: () => {} });
  t.after(() => v.close());
  assert.equal(v.signer, undefined, 'verify-only');
  for (const [i, alg] of algs.entries()) {
    const p = await v.verify(await sign(keys[i].priv, alg, { scope: 'svc:read:b:*', sub: alg }, `k${i}`));
    assert.equal(p.sub, alg);
  }
  // No kid, two RS256 keys in the set: each candidate is tried.
  assert.equal((await v.verify(await sign(spare.priv, 'RS256', { sub: 'nokid' }))).sub, 'nokid');
  // HS256 with the public key's bytes as the "secret": the classic confusion, refused.
  const pem = new TextEncoder().encode(await exportSPKI(keys[0].pub));
  await rejects401(v, await sign(pem, 'HS256', { scope: 'svc:admin' }, 'k0'));
  await rejects401(v, await sign(keys[0].priv, 'RS256', { scope: 'svc:admin' }, 'unknown'));
  // Refresh: a key gone from the set no longer verifies, even for a token verified (cached) before.
  const tok = await sign(spare.priv, 'RS256', { sub: 'spare' }, 'spare');
  await v.verify(tok);
  fx.jwks.keys = keys.map((k) => k.jwk);
  await v.refresh();
  await rejects401(v, tok);
});

test('JWKS: a dead endpoint fails boot; the hourly refresh runs on its timer and survives outages', async (t) => {
  await assert.rejects(createJwtVerifier({ source: { kind: 'jwks-url', url: 'http://127.0.0.1:1/jwks' } }), /unreachable at start/);
  const fx = await serve();
  t.after(() => { fx.server.closeAllConnections(); fx.server.close(); });
  const k = await pair('ES256', 'a');
  fx.jwks.keys = [k.jwk];
  const logged: string[] = [];
  const v = await createJwtVerifier({ source: { kind: 'jwks-url', url: `${fx.url}/jwks` } }, { refreshMs: 30, log: (m) => logged.push(m) });
  t.after(() => v.close());
  await until(() => (fx.hits.get('/jwks') ?? 0) >= 3);
  // The endpoint goes bad: refresh fails, the last good set stays.
  fx.server.removeAllListeners('request');
  fx.server.on('request', (_req, res) => res.writeHead(500).end());
  await until(() => logged.some((m) => /refresh .* failed/.test(m)));
  assert.equal((await v.verify(await sign(k.priv, 'ES256', { sub: 'still' }, 'a'))).sub, 'still');
});

test('OIDC: discovery finds the JWKS, iss is pinned, aud enforced', async (t) => {
  const fx = await serve();
  t.after(() => { fx.server.closeAllConnections(); fx.server.close(); });
  const k = await pair('RS256', 'r1');
  fx.jwks.keys = [k.jwk];
  fx.discovery = { issuer: fx.url, jwks_uri: `${fx.url}/jwks` };
  const v = await createJwtVerifier({ source: { kind: 'oidc-issuer', issuer: fx.url }, audience: 'svcd' }, { log: () => {} });
  t.after(() => v.close());
  assert.equal(v.signer, undefined);
  const ok = await v.verify(await sign(k.priv, 'RS256', { iss: fx.url, aud: 'svcd', scope: 'svc:admin' }, 'r1'));
  assert.equal(ok.admin, true);
  await rejects401(v, await sign(k.priv, 'RS256', { iss: 'https://evil.example', aud: 'svcd' }, 'r1'));
  await rejects401(v, await sign(k.priv, 'RS256', { aud: 'svcd' }, 'r1'));
  await rejects401(v, await sign(k.priv, 'RS256', { iss: fx.url, aud: 'other' }, 'r1'));

  // A discovery document vouching for another issuer fails boot, as does a missing one.
  fx.discovery = { issuer: 'https://elsewhere.example', jwks_uri: `${fx.url}/jwks` };
  await assert.rejects(createJwtVerifier({ source: { kind: 'oidc-issuer', issuer: fx.url } }), /names issuer/);
  await assert.rejects(createJwtVerifier({ source: { kind: 'oidc-issuer', issuer: `${fx.url}/nope` } }), /discovery .* failed at start/);
});
