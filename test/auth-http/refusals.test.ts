// Startup fails closed: every unsafe or ambiguous auth setting makes the process exit non-zero with
// one clear line on stderr, before anything listens.
import { test, before, after } from 'node:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertRefused, deadPort, makeCerts, removeDir, runRefusal, tempDir, type Certs, type Refusal } from './kit.ts';

const SECRET = 'refusal-suite-secret-0123456789abcdef';

let certs: Certs;
let dir: string;
before(() => {
  certs = makeCerts();
  dir = tempDir('svcd-refusals-');
  writeFileSync(join(dir, 'secret'), SECRET);
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
  { name: 'an HMAC secret shorter than 32 bytes', args: ['--auth', 'jwt', '--insecure-auth'], env: { SVCD_JWT_HMAC_SECRET: 'short' }, reason: /at least 32/ },
  { name: 'a plaintext JWKS URL off loopback', args: ['--auth', 'jwt', '--jwt-jwks-url', 'http://keys.example/jwks', '--tls-cert', certs.serverCert, '--tls-key', certs.serverKey], reason: /--jwt-jwks-url must be https/ },
  { name: 'a JWT setting while auth is off', args: ['--jwt-hmac-secret', SECRET], reason: /--jwt-hmac-secret is set but --auth is off/ },
  { name: 'basic without the admin password', args: ['--auth', 'basic', '--insecure-auth', '--admin-username', 'op'], reason: /SVCD_ADMIN_PASSWORD/ },
  { name: 'a root key id without its secret', args: ['--auth', 'jwt', '--insecure-auth', '--root-key-id', 'root'], env: { SVCD_JWT_HMAC_SECRET: SECRET }, reason: /--root-key-id and SVCD_ROOT_SECRET go together/ },
];

test('every refusal exits non-zero with one line naming the reason', async () => {
  const port = await deadPort();
  const all: Case[] = [
    ...cases(),
    { name: 'a dead JWKS endpoint', args: ['--auth', 'jwt', '--insecure-auth', '--jwt-jwks-url', `http://127.0.0.1:${port}/jwks.json`], reason: /JWKS .* unreachable at start/ },
    { name: 'a dead OIDC issuer', args: ['--auth', 'jwt', '--insecure-auth', '--jwt-oidc-issuer', `http://127.0.0.1:${port}`], reason: /OIDC discovery .* failed at start/ },
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
  if (failures.length > 0) throw new Error(`${failures.length} of ${all.length} refusals wrong:\n${failures.join('\n')}`);
});
