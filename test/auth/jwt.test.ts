// JWT verification and minting over the symmetric sources: claims, bad tokens, keysets, the cache.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT, UnsecuredJWT, base64url } from 'jose';
import { ServiceError } from '../../src/core/errors.ts';
import type { HmacKey, JwtConfig } from '../../src/auth/config.ts';
import { createJwtVerifier, type JwtVerifier } from '../../src/auth/jwt.ts';
import { httpStatusOf } from '../../src/api/http-status.ts';

const enc = new TextEncoder();
const SECRET = 'a'.repeat(32);
const key = (kid: string, secret: string): HmacKey => ({ kid, secret: enc.encode(secret) });
const single: JwtConfig = { source: { kind: 'hmac-secret', key: key('', SECRET) } };
const NOW = 1_700_000_000_000;

async function hs256(payload: Record<string, unknown>, opts: { secret?: string; kid?: string; exp?: number | null; alg?: string } = {}): Promise<string> {
  const jwt = new SignJWT(payload).setProtectedHeader({ alg: opts.alg ?? 'HS256', ...(opts.kid ? { kid: opts.kid } : {}) });
  if (opts.exp !== null) jwt.setExpirationTime(opts.exp ?? Math.floor(NOW / 1000) + 600);
  return jwt.sign(enc.encode(opts.secret ?? SECRET));
}

async function rejects401(v: JwtVerifier, token: string, pattern?: RegExp): Promise<void> {
  await assert.rejects(v.verify(token), (err: unknown) => {
    assert.ok(err instanceof ServiceError, String(err));
    assert.equal(err.code, 'unauthenticated');
    assert.equal(httpStatusOf(err.code), 401);
    if (pattern) assert.match(err.message, pattern);
    return true;
  });
}

test('HS256: signer and verifier round-trip into a Principal', async () => {
  const v = await createJwtVerifier(single, { now: () => NOW });
  assert.ok(v.signer);
  const minted = await v.signer.sign({ scope: 'svc:read:b:* openid', sub: 'ck_1', svc_aux: { fencing_token: 'f' } }, 900);
  assert.equal(minted.expires_at_unix_ms, (Math.floor(NOW / 1000) + 900) * 1000);
  const p = await v.verify(minted.token);
  assert.equal(p.kind, 'token');
  assert.equal(p.sub, 'ck_1');
  assert.equal(p.expMs, minted.expires_at_unix_ms);
  assert.equal(p.grants.length, 1);
  assert.equal(p.admin, false);
  assert.deepEqual(p.aux, { fencing_token: 'f' });
  await assert.rejects(v.signer.sign({ scope: '' }, 0), (e: unknown) => e instanceof ServiceError && e.code === 'invalid_argument');
});

test('exp is mandatory; expired tokens are refused', async () => {
  const v = await createJwtVerifier(single, { now: () => NOW });
  await rejects401(v, await hs256({ scope: 'svc:admin' }, { exp: null }), /no exp/);
  await rejects401(v, await hs256({ scope: 'svc:admin' }, { exp: Math.floor(NOW / 1000) - 1 }), /expired/);
});

test('bad input: garbage, alg none, other algorithms, wrong secret, tampered payload', async () => {
  const v = await createJwtVerifier(single, { now: () => NOW });
  for (const garbage of ['', 'abc', 'a.b', 'a.b.c', '...', 'eyJ.eyJ.sig', 'x'.repeat(20_000), 'a.b.c.d.e', 'ä.b.c']) {
    await rejects401(v, garbage);
  }
  const none = new UnsecuredJWT({ scope: 'svc:admin' }).setExpirationTime(Math.floor(NOW / 1000) + 60).encode();
  await rejects401(v, none);
  // A "none" header spliced onto a genuine signature.
  const good = await hs256({ scope: 'svc:read:b:*' });
  const [, payload, sig] = good.split('.');
  await rejects401(v, `${base64url.encode('{"alg":"none"}')}.${payload}.${sig}`);
  await rejects401(v, await hs256({ scope: 'svc:admin' }, { alg: 'HS384' }), /algorithm/);
  await rejects401(v, await hs256({ scope: 'svc:admin' }, { secret: 'b'.repeat(32) }), /signature/);
  // Warm the cache with the genuine token, then present its signature under a forged payload.
  await v.verify(good);
  const forged = `${good.split('.')[0]}.${base64url.encode(JSON.stringify({ scope: 'svc:admin', exp: 9_999_999_999 }))}.${sig}`;
  await rejects401(v, forged, /signature/);
});

test('aud is enforced when configured, and minted tokens carry it', async () => {
  const v = await createJwtVerifier({ ...single, audience: 'svcd' }, { now: () => NOW });
  await rejects401(v, await hs256({ scope: 'svc:admin' }), /audience/);
  await rejects401(v, await hs256({ scope: 'svc:admin', aud: 'other' }), /audience/);
  assert.equal((await v.verify(await hs256({ scope: 'svc:admin', aud: ['x', 'svcd'] }))).admin, true);
  const minted = await v.signer!.sign({ scope: 'svc:admin' }, 60);
  assert.equal((await v.verify(minted.token)).admin, true);
});

test('claims: >64 svc tokens, bad scope type and bad svc_aux reject; unknown aux fields are ignored', async () => {
  const v = await createJwtVerifier(single, { now: () => NOW });
  const many = Array.from({ length: 65 }, (_, i) => `svc:read:b${i}:*`).join(' ');
  await rejects401(v, await hs256({ scope: many }), /65 svc: scope tokens/);
  await rejects401(v, await hs256({ scope: ['svc:admin'] }), /scope/);
  await rejects401(v, await hs256({ svc_aux: { fencing_token: 7 } }), /fencing_token/);
  await rejects401(v, await hs256({ svc_aux: { limits: { rps: -1 } } }), /rps/);
  await rejects401(v, await hs256({ svc_aux: 'x' }), /svc_aux/);
  const p = await v.verify(await hs256({ svc_aux: { limits: { rps: 5, write_Bps: 1000, future: 1 }, other: true, fencing_token: '' } }));
  assert.deepEqual(p.aux, { limits: { rps: 5, write_Bps: 1000 } });
  assert.equal(p.grants.length, 0);
  const logged: string[] = [];
  const v2 = await createJwtVerifier(single, { now: () => NOW, log: (m) => logged.push(m) });
  const p2 = await v2.verify(await hs256({ scope: 'svc:read:b:* svc:bogus:x:y' }));
  assert.equal(p2.grants.length, 1);
  assert.equal(logged.length, 1);
  assert.match(logged[0], /svc:bogus:x:y/);
});

test('keyset: first key signs and stamps kid, all verify, unknown kid and removed keys fail', async () => {
  const keys = [key('k2', 'c'.repeat(32)), key('k1', SECRET)];
  const v = await createJwtVerifier({ source: { kind: 'hmac-keys', keys } }, { now: () => NOW });
  const minted = await v.signer!.sign({ scope: 'svc:admin' }, 60);
  assert.equal(JSON.parse(new TextDecoder().decode(base64url.decode(minted.token.split('.')[0]))).kid, 'k2');
  assert.equal((await v.verify(minted.token)).admin, true);
  assert.equal((await v.verify(await hs256({ scope: 'svc:admin' }, { kid: 'k1' }))).admin, true);
  assert.equal((await v.verify(await hs256({ scope: 'svc:admin' }))).admin, true); // no kid: any key
  await rejects401(v, await hs256({ scope: 'svc:admin' }, { kid: 'k9' }), /key id/);
  await rejects401(v, await hs256({ scope: 'svc:admin' }, { kid: 'k2' }), /signature/); // k2's name, k1's secret
  const revoked = await createJwtVerifier({ source: { kind: 'hmac-keys', keys: [keys[0]] } }, { now: () => NOW });
  await rejects401(revoked, await hs256({ scope: 'svc:admin' }, { kid: 'k1' }), /key id/);
  await rejects401(revoked, await hs256({ scope: 'svc:admin' }), /signature/);
});

test('cache: a verified token is served from cache until exp, bounded in size', async () => {
  let now = NOW;
  const v = await createJwtVerifier(single, { now: () => now, cacheMax: 2 });
  const t1 = await hs256({ scope: 'svc:admin', n: 1 }, { exp: Math.floor(NOW / 1000) + 10 });
  const p1 = await v.verify(t1);
  assert.equal(await v.verify(t1), p1, 'second verify is a cache hit (same object)');
  await v.verify(await hs256({ n: 2 }));
  await v.verify(await hs256({ n: 3 })); // evicts t1
  assert.notEqual(await v.verify(t1), p1);
  now = NOW + 10_000; // exactly exp
  await rejects401(v, t1, /expired/);
  await rejects401(v, t1, /expired/);
});
