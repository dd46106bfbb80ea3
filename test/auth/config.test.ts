// Startup settings: every refusal is a one-line reason; the accepted shapes parse into AuthConfig.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AUTH_SETTINGS, canSign, parseAuthConfig, type AuthConfig } from '../../src/auth/config.ts';

const S32 = 'x'.repeat(32);

function parse(flags: Record<string, string>, env: Record<string, string> = {}, tls = false, clustered?: boolean): AuthConfig {
  return parseAuthConfig((f) => flags[f], env, tls, clustered === undefined ? {} : { clustered });
}

function refuses(pattern: RegExp, flags: Record<string, string>, env: Record<string, string> = {}, tls = false): void {
  assert.throws(() => parse(flags, env, tls), (err: unknown) => {
    assert.ok(err instanceof Error);
    assert.ok(!err.message.includes('\n'), 'one line');
    assert.match(err.message, pattern);
    return true;
  });
}

test('default is off; modes come from --auth or SVCD_AUTH', () => {
  assert.equal(parse({}).mode, 'off');
  assert.equal(parse({}, { SVCD_AUTH: 'basic', SVCD_ADMIN_USERNAME: 'ops', SVCD_ADMIN_PASSWORD: 'p' }, true).mode, 'basic');
  assert.equal(parse({ auth: 'off' }, { SVCD_AUTH: 'basic' }).mode, 'off'); // the flag wins over the environment
  refuses(/--auth must be one of/, { auth: 'kerberos' });
});

test('credential-bearing modes over plaintext refuse without --insecure-auth', () => {
  refuses(/needs TLS .* or --insecure-auth/, { auth: 'jwt', 'jwt-hmac-secret': S32 });
  refuses(/needs TLS/, { auth: 'basic', 'admin-username': 'ops' }, { SVCD_ADMIN_PASSWORD: 'p' });
  assert.equal(parse({ auth: 'jwt', 'jwt-hmac-secret': S32, 'insecure-auth': '' }).insecureAuth, true);
  assert.equal(parse({ auth: 'jwt', 'jwt-hmac-secret': S32 }, {}, true).mode, 'jwt');
  assert.equal(parse({ auth: 'jwt', 'jwt-hmac-secret': S32 }, { SVCD_INSECURE_AUTH: 'true' }).mode, 'jwt');
  refuses(/needs TLS/, { auth: 'jwt', 'jwt-hmac-secret': S32, 'insecure-auth': 'false' });
  refuses(/must be true or false/, { auth: 'jwt', 'jwt-hmac-secret': S32, 'insecure-auth': 'maybe' });
});

test('mtls needs cert, key and a client CA', () => {
  refuses(/--tls-client-ca/, { auth: 'mtls', 'tls-cert': 'c', 'tls-key': 'k' }, {}, true);
  refuses(/--tls-cert and --tls-key/, { auth: 'mtls', 'tls-client-ca': 'ca' }, {}, false);
  const c = parse({ auth: 'mtls', 'tls-cert': 'c', 'tls-key': 'k', 'tls-client-ca': 'ca' }, {}, true);
  assert.deepEqual(c.mtls, { certFile: 'c', keyFile: 'k', clientCaFile: 'ca' });
});

test('jwt needs exactly one source', () => {
  const insecure = { auth: 'jwt', 'insecure-auth': 'true' };
  refuses(/exactly one JWT source, none given/, insecure);
  refuses(/exactly one JWT source, got --jwt-hmac-secret-file, SVCD_JWT_HMAC_SECRET$/, { ...insecure, 'jwt-hmac-secret-file': '/nonexistent', 'jwt-hmac-secret': S32 });
  refuses(/got SVCD_JWT_HMAC_SECRET, --jwt-jwks-url/, { ...insecure, 'jwt-jwks-url': 'https://idp/jwks' }, { SVCD_JWT_HMAC_SECRET: S32 });
  refuses(/got --jwt-jwks-url, --jwt-oidc-issuer/, { ...insecure, 'jwt-jwks-url': 'https://idp/jwks', 'jwt-oidc-issuer': 'https://idp' });
  refuses(/got SVCD_JWT_HMAC_SECRET, SVCD_JWT_HMAC_KEYS/, insecure, { SVCD_JWT_HMAC_SECRET: 'short', SVCD_JWT_HMAC_KEYS: `a:${S32}` });
});

test('jwt sources parse; secrets must be 32 bytes; keysets keep order', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svcd-auth-'));
  try {
    const file = join(dir, 'secret');
    writeFileSync(file, `${S32}\n`);
    const base = { auth: 'jwt' };
    const fromFile = parse({ ...base, 'jwt-hmac-secret-file': file }, {}, true);
    assert.equal(fromFile.jwt?.source.kind, 'hmac-secret');
    assert.equal(new TextDecoder().decode((fromFile.jwt?.source as { key: { secret: Uint8Array } }).key.secret), S32);
    assert.ok(canSign(fromFile));
    refuses(/at least 32/, { ...base, 'jwt-hmac-secret': 'short' }, {}, true);
    refuses(/cannot read JWT secret file/, { ...base, 'jwt-hmac-secret-file': join(dir, 'none') }, {}, true);
    const ks = parse(base, { SVCD_JWT_HMAC_KEYS: `new:${S32},old:${'y'.repeat(31)}:` }, true);
    assert.deepEqual((ks.jwt?.source as { keys: { kid: string }[] }).keys.map((k) => k.kid), ['new', 'old']);
    refuses(/id:secret/, base, { SVCD_JWT_HMAC_KEYS: S32 }, true);
    refuses(/twice/, base, { SVCD_JWT_HMAC_KEYS: `a:${S32},a:${S32}` }, true);
    const jwks = parse({ ...base, 'jwt-jwks-url': 'https://idp/jwks', 'jwt-audience': 'svcd', 'peer-service-token-file': file }, {}, true);
    assert.deepEqual(jwks.jwt, { source: { kind: 'jwks-url', url: 'https://idp/jwks' }, audience: 'svcd' });
    assert.equal(jwks.peerServiceToken, S32);
    assert.ok(!canSign(jwks));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('JWKS/OIDC: plaintext key URLs only on loopback; peers need a provisioned token', () => {
  const base = { auth: 'jwt' };
  const env = { SVCD_PEER_SERVICE_TOKEN: 'tok' };
  refuses(/must be https/, { ...base, 'jwt-jwks-url': 'http://idp.example/jwks' }, env, true);
  refuses(/is not a URL/, { ...base, 'jwt-oidc-issuer': 'idp' }, env, true);
  assert.equal(parse({ ...base, 'jwt-oidc-issuer': 'http://127.0.0.1:9000' }, env, true).jwt?.source.kind, 'oidc-issuer');
  refuses(/peer-service-token/, { ...base, 'jwt-jwks-url': 'https://idp/jwks' }, {}, true);
  assert.equal(parse({ ...base, 'jwt-jwks-url': 'https://idp/jwks' }, {}, true, false).peerServiceToken, undefined);
});

test('JWT settings outside jwt mode refuse (a forgotten --auth jwt)', () => {
  refuses(/--jwt-jwks-url is set but --auth is off/, { 'jwt-jwks-url': 'https://idp/jwks' });
  refuses(/SVCD_JWT_HMAC_KEYS is set but --auth is basic/, { auth: 'basic', 'admin-username': 'o', 'insecure-auth': '1' }, { SVCD_JWT_HMAC_KEYS: `a:${S32}`, SVCD_ADMIN_PASSWORD: 'p' });
});

test('basic needs a username and SVCD_ADMIN_PASSWORD', () => {
  refuses(/--admin-username/, { auth: 'basic' }, { SVCD_ADMIN_PASSWORD: 'p' }, true);
  refuses(/SVCD_ADMIN_PASSWORD/, { auth: 'basic', 'admin-username': 'ops' }, {}, true);
  refuses(/cannot contain ":"/, { auth: 'basic', 'admin-username': 'a:b' }, { SVCD_ADMIN_PASSWORD: 'p' }, true);
  assert.deepEqual(parse({ auth: 'basic', 'admin-username': 'ops' }, { SVCD_ADMIN_PASSWORD: 'pw' }, true).basic, { username: 'ops', password: 'pw' });
});

test('root seed: three forms, exactly one', () => {
  const hash = createHash('sha256').update('root-secret').digest('hex');
  assert.deepEqual(parse({ 'root-key-id': 'root' }, { SVCD_ROOT_SECRET: 'root-secret' }).rootSeed, { key_id: 'root', secret_hash: hash, scope: 'svc:admin' });
  assert.deepEqual(parse({}, { SVCD_ROOT_CREDENTIAL: JSON.stringify({ key_id: 'r', secret_hash: hash.toUpperCase() }) }).rootSeed,
    { key_id: 'r', secret_hash: hash, scope: 'svc:admin' });
  const dir = mkdtempSync(join(tmpdir(), 'svcd-auth-'));
  try {
    const file = join(dir, 'root.json');
    writeFileSync(file, JSON.stringify({ key_id: 'r', secret_hash: hash, scope: 'svc:admin svc:node' }));
    assert.equal(parse({ 'root-credential-file': file }).rootSeed?.scope, 'svc:admin svc:node');
    refuses(/give the root seed once/, { 'root-credential-file': file, 'root-key-id': 'r' }, { SVCD_ROOT_SECRET: 's' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  refuses(/go together/, { 'root-key-id': 'root' });
  refuses(/go together/, {}, { SVCD_ROOT_SECRET: 's' });
  refuses(/not valid JSON/, {}, { SVCD_ROOT_CREDENTIAL: '{' });
  refuses(/secret_hash must be 64 hex/, {}, { SVCD_ROOT_CREDENTIAL: '{"key_id":"r","secret_hash":"abc"}' });
  refuses(/malformed scope token/, {}, { SVCD_ROOT_CREDENTIAL: JSON.stringify({ key_id: 'r', secret_hash: hash, scope: 'svc:bogus' }) });
});

test('AUTH_SETTINGS lists every flag with an SVCD_ variable and help', () => {
  for (const s of AUTH_SETTINGS) {
    assert.match(s.env, /^SVCD_[A-Z_]+$/);
    assert.ok(s.help.length > 0);
  }
  const flags = AUTH_SETTINGS.map((s) => s.flag).filter(Boolean);
  for (const f of ['auth', 'tls-cert', 'tls-key', 'tls-client-ca', 'jwt-hmac-secret-file', 'jwt-hmac-secret', 'jwt-jwks-url',
    'jwt-oidc-issuer', 'jwt-audience', 'admin-username', 'insecure-auth', 'root-credential-file', 'root-key-id', 'peer-service-token-file']) {
    assert.ok(flags.includes(f), f);
  }
});
