// Startup fails closed: every unsafe or ambiguous auth setting makes the process exit non-zero with
// one clear line on stderr, before anything listens.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  assertRefused, assertStatus, bearer, makeCerts, mint, removeDir, request, runRefusal, startIssuer, startStar, tempDir,
  type Certs, type Refusal,
} from './kit.ts';
import { closedPort } from '../helpers/ports.ts';

const SECRET = 'refusal-suite-secret-0123456789abcdef';

let certs: Certs;
let dir: string;
before(() => {
  certs = makeCerts();
  dir = tempDir('svcd-refusals-');
  writeFileSync(join(dir, 'secret'), SECRET);
  writeFileSync(join(dir, 'empty'), '\n');
});
after(() => { removeDir(certs.dir); removeDir(dir); });

interface Case { name: string; args?: string[]; env?: Record<string, string>; reason: RegExp }

const cases = (): Case[] => [
  { name: 'jwt over plaintext without --insecure-auth', args: ['--auth', 'jwt'], env: { SVCD_JWT_HMAC_SECRET: SECRET }, reason: /--auth jwt .*needs TLS .*--insecure-auth/ },
  { name: 'jwt over plaintext, mode from SVCD_AUTH', env: { SVCD_AUTH: 'jwt', SVCD_JWT_HMAC_SECRET: SECRET }, reason: /--auth jwt .*needs TLS/ },
  { name: 'basic over plaintext without --insecure-auth', args: ['--auth', 'basic', '--admin-username', 'op'], env: { SVCD_ADMIN_PASSWORD: 'pw' }, reason: /--auth basic .*needs TLS/ },
  { name: 'mtls without a client CA', args: ['--auth', 'mtls', '--tls-cert', certs.serverCert, '--tls-key', certs.serverKey], reason: /--tls-client-ca/ },
  { name: 'mtls without a serving certificate', args: ['--auth', 'mtls', '--tls-client-ca', certs.ca], reason: /--auth mtls needs --tls-cert and --tls-key/ },
  { name: 'jwt with no source', args: ['--auth', 'jwt', '--insecure-auth'], reason: /exactly one JWT source, none given/ },
  { name: 'jwt with two HMAC sources', args: ['--auth', 'jwt', '--insecure-auth', '--jwt-hmac-secret-file', join(dir, 'secret')], env: { SVCD_JWT_HMAC_SECRET: SECRET }, reason: /exactly one JWT source, got --jwt-hmac-secret-file, SVCD_JWT_HMAC_SECRET/ },
  { name: 'jwt with a key set and a JWKS URL', args: ['--auth', 'jwt', '--insecure-auth', '--jwt-jwks-url', 'https://keys.example/jwks'], env: { SVCD_JWT_HMAC_KEYS: `a:${SECRET}` }, reason: /exactly one JWT source, got SVCD_JWT_HMAC_KEYS, --jwt-jwks-url/ },
  { name: 'an empty HMAC secret file', args: ['--auth', 'jwt', '--insecure-auth', '--jwt-hmac-secret-file', join(dir, 'empty')], reason: /--jwt-hmac-secret-file secret is empty/ },
  { name: 'an empty key in SVCD_JWT_HMAC_KEYS', args: ['--auth', 'jwt', '--insecure-auth'], env: { SVCD_JWT_HMAC_KEYS: `a:${SECRET},b:` }, reason: /SVCD_JWT_HMAC_KEYS key 'b' is empty/ },
  { name: 'a root seed with a malformed secret_hash', args: ['--auth', 'jwt', '--insecure-auth'], env: { SVCD_JWT_HMAC_SECRET: SECRET, SVCD_ROOT_CREDENTIAL: JSON.stringify({ key_id: 'r', secret_hash: 'sha256:abc' }) }, reason: /SVCD_ROOT_CREDENTIAL: secret_hash must be the secret's SHA-256 as 64 hex digits/ },
  { name: 'a plaintext JWKS URL off loopback', args: ['--auth', 'jwt', '--jwt-jwks-url', 'http://keys.example/jwks', '--tls-cert', certs.serverCert, '--tls-key', certs.serverKey], reason: /--jwt-jwks-url must be https/ },
  { name: 'a JWT setting while auth is off', args: ['--jwt-hmac-secret', SECRET], reason: /--jwt-hmac-secret is set but --auth is off/ },
  { name: 'basic without the admin password', args: ['--auth', 'basic', '--insecure-auth', '--admin-username', 'op'], reason: /SVCD_ADMIN_PASSWORD/ },
  { name: 'a root key id without its secret', args: ['--auth', 'jwt', '--insecure-auth', '--root-key-id', 'root'], env: { SVCD_JWT_HMAC_SECRET: SECRET }, reason: /--root-key-id and SVCD_ROOT_SECRET go together/ },
  { name: 'a root secret under the minimum (the old README example)', args: ['--auth', 'jwt', '--insecure-auth', '--root-key-id', 'root'], env: { SVCD_JWT_HMAC_SECRET: SECRET, SVCD_ROOT_SECRET: 'change-me' }, reason: /SVCD_ROOT_SECRET is 9 bytes; the root secret needs at least 32/ },
];

test('every refusal exits non-zero with one line naming the reason', async () => {
  const port = await closedPort();
  const issuer = await startIssuer();
  const peer = { SVCD_PEER_SERVICE_TOKEN: 'provisioned-peer-token' };
  const all: Case[] = [
    ...cases(),
    { name: 'a dead JWKS endpoint', args: ['--auth', 'jwt', '--insecure-auth', '--jwt-jwks-url', `http://127.0.0.1:${port}/jwks.json`], env: peer, reason: /JWKS .* unreachable at start/ },
    { name: 'a dead OIDC issuer', args: ['--auth', 'jwt', '--insecure-auth', '--jwt-oidc-issuer', `http://127.0.0.1:${port}`], env: peer, reason: /OIDC discovery .* failed at start/ },
    // A live key source does not excuse the missing peer token: a standalone star refuses too.
    { name: 'JWKS without a peer service token', args: ['--auth', 'jwt', '--insecure-auth', '--jwt-jwks-url', issuer.jwksUrl], reason: /jwt with JWKS\/OIDC cannot mint peer tokens; give --peer-service-token-file or SVCD_PEER_SERVICE_TOKEN/ },
    { name: 'OIDC without a peer service token', args: ['--auth', 'jwt', '--insecure-auth', '--jwt-oidc-issuer', issuer.url], reason: /jwt with JWKS\/OIDC cannot mint peer tokens/ },
    { name: 'JWKS with an empty peer token file', args: ['--auth', 'jwt', '--insecure-auth', '--jwt-jwks-url', issuer.jwksUrl, '--peer-service-token-file', join(dir, 'empty')], reason: /cannot mint peer tokens/ },
  ];
  // Two children at a time: each is a full Node start, and the runner may be running other files.
  const results: { c: Case; r: Refusal }[] = [];
  let next = 0;
  await Promise.all([0, 1].map(async () => {
    while (next < all.length) {
      const c = all[next++];
      results.push({ c, r: await runRefusal({ args: c.args, env: c.env }) });
    }
  }));
  const failures: string[] = [];
  for (const { c, r } of results) {
    try {
      assertRefused(r, c.reason);
    } catch (err) {
      failures.push(`${c.name}: ${(err as Error).message.split('\n')[0]}\n  stderr: ${r.stderr.trim()}`);
    }
  }
  issuer.close();
  if (failures.length > 0) throw new Error(`${failures.length} of ${all.length} refusals wrong:\n${failures.join('\n')}`);
});

const ROOT_SECRET = 'root-secret-of-at-least-32-bytes!';

test('a short HMAC secret boots with one warning line, and signs and verifies', async () => {
  const short = 'short-secret'; // 12 bytes: the spec sets no minimum
  const star = await startStar({
    engine: 'node', args: ['--auth', 'jwt', '--insecure-auth', '--root-key-id', 'root'],
    env: { SVCD_JWT_HMAC_SECRET: short, SVCD_ROOT_SECRET: ROOT_SECRET },
  });
  try {
    const warnings = star.output().split('\n').filter((l) => l.includes('auth: warning'));
    assert.equal(warnings.length, 1, star.output());
    assert.match(warnings[0], /^svcd: auth: warning: SVCD_JWT_HMAC_SECRET is 12 bytes; HS256 wants at least 32/);
    assertStatus(await request(star.baseUrl, 'GET', '/v1/buckets', { headers: bearer(await mint(short, 'svc:admin')) }), 200, 'a token signed with it');
    assertStatus(await request(star.baseUrl, 'GET', '/v1/buckets', { headers: bearer(await mint(`${short}x`, 'svc:admin')) }), 401, 'another secret');
    const ex = await request(star.baseUrl, 'POST', '/v1/token/exchange', { body: { key_id: 'root', secret: ROOT_SECRET, scope: 'svc:admin' } });
    assertStatus(ex, 200, 'the exchange mints with it');
    assertStatus(await request(star.baseUrl, 'GET', '/v1/buckets', { headers: bearer(ex.body.token) }), 200, 'the minted token');
  } finally {
    await star.stop();
  }
});

test('SVCD_JWT_HMAC_KEYS with short keys boots with one warning line naming them', async () => {
  const star = await startStar({ engine: 'node', args: ['--auth', 'jwt', '--insecure-auth'], env: { SVCD_JWT_HMAC_KEYS: `k2:tiny,k1:${SECRET}` } });
  try {
    const warnings = star.output().split('\n').filter((l) => l.includes('auth: warning'));
    assert.equal(warnings.length, 1, star.output());
    assert.match(warnings[0], /SVCD_JWT_HMAC_KEYS key 'k2' is 4 bytes; /);
    assertStatus(await request(star.baseUrl, 'GET', '/v1/buckets', { headers: bearer(await mint('tiny', 'svc:admin', { kid: 'k2' })) }), 200, 'kid k2');
  } finally {
    await star.stop();
  }
});
