// Every JWT source end to end over loopback, on both engines: the HMAC secret from the environment
// (jwt.test.ts covers it in depth), the flag and a file; the SVCD_JWT_HMAC_KEYS key set with kids;
// a JWKS and an OIDC issuer served by the test on loopback (verify-only: the exchange is 501).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPair } from 'jose';
import {
  ENGINES, assertStatus, bearer, claimsOf, headerOf, mint, nowS, removeDir, request, startIssuer, startStar, tempDir,
  unsignedToken, type Issuer, type Res, type Star,
} from './kit.ts';

const ROOT = { key_id: 'root', secret: 'root-secret-for-the-sources-suite' };
const ROOT_ENV = { SVCD_ROOT_SECRET: ROOT.secret };
const ROOT_ARGS = ['--root-key-id', ROOT.key_id];
const S1 = 'source-secret-one-0123456789abcdefghij';
const S2 = 'source-secret-two-0123456789abcdefghij';
const OTHER = 'not-the-configured-secret-0123456789abc';
const PEER_ENV = { SVCD_PEER_SERVICE_TOKEN: 'provisioned-peer-token' };

const listBuckets = (star: Star, token?: string): Promise<Res> =>
  request(star.baseUrl, 'GET', '/v1/buckets', { headers: token === undefined ? {} : bearer(token) });
const exchange = (star: Star, body: unknown): Promise<Res> => request(star.baseUrl, 'POST', '/v1/token/exchange', { body });

for (const engine of ENGINES) {
  describe(`JWT sources (${engine})`, () => {
    let dir: string;
    let issuer: Issuer;
    const stars: Record<string, Star> = {};

    before(async () => {
      dir = tempDir('svcd-sources-');
      const secretFile = join(dir, 'hmac.secret');
      writeFileSync(secretFile, `${S1}\n`); // the trailing newline is not part of the secret
      issuer = await startIssuer();
      const base = ['--auth', 'jwt', '--insecure-auth', ...ROOT_ARGS];
      const specs: Record<string, { args: string[]; env: Record<string, string> }> = {
        flag: { args: [...base, '--jwt-hmac-secret', S1], env: ROOT_ENV },
        file: { args: [...base, '--jwt-hmac-secret-file', secretFile], env: ROOT_ENV },
        keys: { args: base, env: { ...ROOT_ENV, SVCD_JWT_HMAC_KEYS: `k2:${S2},k1:${S1}` } },
        // No --insecure-auth needed for the key URL itself: plain http is accepted on loopback.
        // Verify-only sources need the provisioned peer token (boot refuses without it).
        jwks: { args: ['--auth', 'jwt', '--insecure-auth', '--jwt-jwks-url', issuer.jwksUrl], env: PEER_ENV },
        oidc: { args: ['--auth', 'jwt', '--insecure-auth', '--jwt-oidc-issuer', issuer.url], env: PEER_ENV },
      };
      // Record each star as it comes up, so a sibling that fails to start leaves none behind.
      const starts = await Promise.allSettled(Object.entries(specs).map(async ([name, s]) => {
        stars[name] = await startStar({ engine, args: s.args, env: s.env });
      }));
      const failed = starts.find((r) => r.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
    });
    after(async () => {
      await Promise.all(Object.values(stars).map((s) => s.stop()));
      issuer?.close();
      removeDir(dir);
    });

    for (const name of ['flag', 'file'] as const) {
      test(`HMAC secret from the ${name}: signs and verifies, the exchange mints`, async () => {
        const star = stars[name];
        assertStatus(await listBuckets(star, await mint(S1, 'svc:admin')), 200, 'right secret');
        assertStatus(await listBuckets(star, await mint(`${S1}\n`, 'svc:admin')), 401, 'the newline is not part of the secret');
        assertStatus(await listBuckets(star, await mint(OTHER, 'svc:admin')), 401, 'wrong secret');
        assertStatus(await listBuckets(star), 401, 'no token');
        const ex = await exchange(star, { ...ROOT, scope: 'svc:list:*:*' });
        assertStatus(ex, 200, 'exchange');
        assert.equal(headerOf(ex.body.token).kid, undefined, 'a single secret stamps no kid');
        assertStatus(await listBuckets(star, ex.body.token), 200, 'the minted token');
      });
    }

    test('SVCD_JWT_HMAC_KEYS: every key verifies by kid, the first signs, unknown kids are 401', async () => {
      const star = stars.keys;
      assertStatus(await listBuckets(star, await mint(S1, 'svc:admin', { kid: 'k1' })), 200, 'kid k1');
      assertStatus(await listBuckets(star, await mint(S2, 'svc:admin', { kid: 'k2' })), 200, 'kid k2');
      assertStatus(await listBuckets(star, await mint(S1, 'svc:admin')), 200, 'no kid, a key of the set');
      assertStatus(await listBuckets(star, await mint(OTHER, 'svc:admin')), 401, 'no kid, no key of the set');
      assertStatus(await listBuckets(star, await mint(S1, 'svc:admin', { kid: 'k3' })), 401, 'unknown kid');
      assertStatus(await listBuckets(star, await mint(S1, 'svc:admin', { kid: 'k2' })), 401, 'kid k2 signed with k1');
      assertStatus(await listBuckets(star, await mint(S1, 'svc:admin', { kid: '' })), 401, 'empty kid');
      const ex = await exchange(star, { ...ROOT, scope: 'svc:list:*:*' });
      assertStatus(ex, 200, 'exchange');
      assert.equal(headerOf(ex.body.token).kid, 'k2', 'minted tokens stamp the first key');
      assertStatus(await listBuckets(star, ex.body.token), 200, 'the minted token');
    });

    test('JWKS: RS256, ES256 and EdDSA keys verify; unknown kid, foreign key, HS256 and alg none are 401; exchange is 501', async () => {
      const star = stars.jwks;
      for (const k of Object.values(issuer.keys)) {
        assertStatus(await listBuckets(star, await mint(k.priv, 'svc:admin', { alg: k.alg, kid: k.kid })), 200, `${k.alg} kid ${k.kid}`);
      }
      const es = issuer.keys.ES256;
      assertStatus(await listBuckets(star, await mint(es.priv, 'svc:admin', { alg: 'ES256' })), 200, 'no kid, one fitting key');
      assertStatus(await listBuckets(star, await mint(es.priv, 'svc:admin', { alg: 'ES256', kid: 'no-such-kid' })), 401, 'unknown kid');
      const foreign = await generateKeyPair('ES256');
      assertStatus(await listBuckets(star, await mint(foreign.privateKey, 'svc:admin', { alg: 'ES256', kid: es.kid })), 401, 'right kid, foreign key');
      assertStatus(await listBuckets(star, await mint(S1, 'svc:admin', { kid: es.kid })), 401, 'HS256 on a JWKS star');
      assertStatus(await listBuckets(star, unsignedToken({ scope: 'svc:admin', exp: nowS() + 60 })), 401, 'alg none');
      assertStatus(await listBuckets(star, await mint(es.priv, 'svc:admin', { alg: 'ES256', kid: es.kid, exp: nowS() - 5 })), 401, 'expired');
      assertStatus(await listBuckets(star, await mint(es.priv, 'svc:read:x:*', { alg: 'ES256', kid: es.kid })), 403, 'scope still decides');
      assertStatus(await exchange(star, { ...ROOT, bucket: 'x' }), 501, 'verify-only: exchange');
    });

    test('OIDC: the discovered JWKS verifies and iss is pinned; exchange is 501', async () => {
      const star = stars.oidc;
      const rs = issuer.keys.RS256;
      const sign = (o: { iss?: string; exp?: number }): Promise<string> => mint(rs.priv, 'svc:admin', { alg: 'RS256', kid: rs.kid, ...o });
      assertStatus(await listBuckets(star, await sign({ iss: issuer.url })), 200, 'iss = issuer');
      assertStatus(await listBuckets(star, await sign({ iss: 'https://other.example' })), 401, 'wrong iss');
      assertStatus(await listBuckets(star, await sign({})), 401, 'no iss');
      assertStatus(await listBuckets(star, await sign({ iss: issuer.url, exp: nowS() - 5 })), 401, 'expired');
      const ex = await exchange(star, { key_id: 'k', secret: 's', bucket: 'x' });
      assertStatus(ex, 501, 'verify-only: exchange');
      assert.ok(claimsOf(await sign({ iss: issuer.url })).iss === issuer.url);
    });
  });
}
