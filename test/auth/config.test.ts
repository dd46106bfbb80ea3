// Startup settings: every refusal is a one-line reason; the accepted shapes parse into AuthConfig.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AUTH_SETTINGS, canSign, parseAuthConfig, parseSecretHash, type AuthConfig } from '../../src/auth/config.ts';

const S32 = 'x'.repeat(32);

function parse(flags: Record<string, string>, env: Record<string, string> = {}, tls = false, warnings: string[] = []): AuthConfig {
  return parseAuthConfig((f) => flags[f], env, tls, { warn: (line) => warnings.push(line) });
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

test('jwt sources parse; any non-empty secret is accepted; keysets keep order', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svcd-auth-'));
  try {
    const file = join(dir, 'secret');
    writeFileSync(file, `${S32}\n`);
    const base = { auth: 'jwt' };
    const fromFile = parse({ ...base, 'jwt-hmac-secret-file': file }, {}, true);
    assert.equal(fromFile.jwt?.source.kind, 'hmac-secret');
    assert.equal(new TextDecoder().decode((fromFile.jwt?.source as { key: { secret: Uint8Array } }).key.secret), S32);
    assert.ok(canSign(fromFile));
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

test('short HMAC secrets boot with one warning line; empty ones refuse', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svcd-auth-'));
  try {
    const base = { auth: 'jwt' };
    const quiet: string[] = [];
    parse({ ...base, 'jwt-hmac-secret': S32 }, {}, true, quiet);
    parse(base, { SVCD_JWT_HMAC_KEYS: `a:${S32},b:${'z'.repeat(40)}` }, true, quiet);
    assert.deepEqual(quiet, [], 'no warning at 32 bytes and more');

    const inline: string[] = [];
    const c = parse({ ...base, 'jwt-hmac-secret': 'short-secre!' }, {}, true, inline);
    assert.equal(new TextDecoder().decode((c.jwt?.source as { key: { secret: Uint8Array } }).key.secret), 'short-secre!');
    assert.ok(canSign(c));
    assert.equal(inline.length, 1);
    assert.match(inline[0], /^auth: warning: SVCD_JWT_HMAC_SECRET is 12 bytes; HS256 wants at least 32/);
    assert.ok(!inline[0].includes('\n'), 'one line');
    // The environment form names the same source.
    const fromEnv: string[] = [];
    parse(base, { SVCD_JWT_HMAC_SECRET: 'k' }, true, fromEnv);
    assert.match(fromEnv[0], /SVCD_JWT_HMAC_SECRET is 1 bytes/);

    const file = join(dir, 'short');
    writeFileSync(file, 'tiny\n');
    const fromFile: string[] = [];
    parse({ ...base, 'jwt-hmac-secret-file': file }, {}, true, fromFile);
    assert.equal(fromFile.length, 1);
    assert.match(fromFile[0], /--jwt-hmac-secret-file is 4 bytes/);

    const keys: string[] = [];
    const ks = parse(base, { SVCD_JWT_HMAC_KEYS: `new:abc,mid:${S32},old:defgh` }, true, keys);
    assert.equal((ks.jwt?.source as { keys: unknown[] }).keys.length, 3);
    assert.equal(keys.length, 1, 'one line for the whole key set');
    assert.match(keys[0], /SVCD_JWT_HMAC_KEYS key 'new' is 3 bytes, SVCD_JWT_HMAC_KEYS key 'old' is 5 bytes;/);
    assert.ok(!keys[0].includes("'mid'"));

    const empty = join(dir, 'empty');
    writeFileSync(empty, '\n');
    refuses(/--jwt-hmac-secret-file secret is empty/, { ...base, 'jwt-hmac-secret-file': empty }, {}, true);
    refuses(/SVCD_JWT_HMAC_KEYS key 'b' is empty/, base, { SVCD_JWT_HMAC_KEYS: `a:${S32},b:` }, true);
    // An empty inline secret is no source at all.
    refuses(/exactly one JWT source, none given/, { ...base, 'jwt-hmac-secret': '' }, {}, true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('JWKS/OIDC: plaintext key URLs only on loopback; boot refuses without a provisioned peer token', () => {
  const base = { auth: 'jwt' };
  const env = { SVCD_PEER_SERVICE_TOKEN: 'tok' };
  refuses(/must be https/, { ...base, 'jwt-jwks-url': 'http://idp.example/jwks' }, env, true);
  refuses(/is not a URL/, { ...base, 'jwt-oidc-issuer': 'idp' }, env, true);
  assert.equal(parse({ ...base, 'jwt-oidc-issuer': 'http://127.0.0.1:9000' }, env, true).jwt?.source.kind, 'oidc-issuer');
  assert.equal(parse({ ...base, 'jwt-jwks-url': 'https://idp/jwks' }, env, true).peerServiceToken, 'tok');
  const sources: Record<string, string>[] = [{ 'jwt-jwks-url': 'https://idp/jwks' }, { 'jwt-oidc-issuer': 'https://idp' }];
  for (const source of sources) {
    refuses(/JWKS\/OIDC cannot mint peer tokens; give --peer-service-token-file or SVCD_PEER_SERVICE_TOKEN/, { ...base, ...source }, {}, true);
    refuses(/peer-service-token/, { ...base, ...source }, { SVCD_PEER_SERVICE_TOKEN: '  ' }, true); // blank is none
  }
  refuses(/give the peer service token once/, { ...base, 'jwt-jwks-url': 'https://idp/jwks', 'peer-service-token-file': '/x' }, env, true);
  // Symmetric sources self-mint: no peer token needed.
  assert.equal(parse({ ...base, 'jwt-hmac-secret': S32 }, {}, true).peerServiceToken, undefined);
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

/** A root secret long enough to boot (ROOT_SECRET_BYTES_MIN). */
const ROOT_SECRET = 'root-secret-of-at-least-32-bytes!';

test('root seed: three forms, exactly one', () => {
  const hash = createHash('sha256').update(ROOT_SECRET).digest('hex');
  assert.deepEqual(parse({ 'root-key-id': 'root' }, { SVCD_ROOT_SECRET: ROOT_SECRET }).rootSeed, { key_id: 'root', secret_hash: hash, scope: 'svc:admin' });
  assert.deepEqual(parse({}, { SVCD_ROOT_CREDENTIAL: JSON.stringify({ key_id: 'r', secret_hash: hash.toUpperCase() }) }).rootSeed,
    { key_id: 'r', secret_hash: hash, scope: 'svc:admin' });
  const dir = mkdtempSync(join(tmpdir(), 'svcd-auth-'));
  try {
    const file = join(dir, 'root.json');
    writeFileSync(file, JSON.stringify({ key_id: 'r', secret_hash: hash, scope: 'svc:admin svc:node' }));
    assert.equal(parse({ 'root-credential-file': file }).rootSeed?.scope, 'svc:admin svc:node');
    refuses(/give the root seed once/, { 'root-credential-file': file, 'root-key-id': 'r' }, { SVCD_ROOT_SECRET: ROOT_SECRET });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  refuses(/go together/, { 'root-key-id': 'root' });
  refuses(/go together/, {}, { SVCD_ROOT_SECRET: 's' });
  // ROOT_SECRET_BYTES_MIN, counted in UTF-8 bytes: 31 refuse, 32 boot.
  refuses(/SVCD_ROOT_SECRET is 9 bytes; the root secret needs at least 32/, { 'root-key-id': 'root' }, { SVCD_ROOT_SECRET: 'change-me' });
  refuses(/SVCD_ROOT_SECRET is 31 bytes/, { 'root-key-id': 'root' }, { SVCD_ROOT_SECRET: 'x'.repeat(31) });
  assert.equal(parse({ 'root-key-id': 'root' }, { SVCD_ROOT_SECRET: 'x'.repeat(32) }).rootSeed?.key_id, 'root');
  assert.equal(parse({ 'root-key-id': 'root' }, { SVCD_ROOT_SECRET: 'é'.repeat(16) }).rootSeed?.key_id, 'root', '16 two-byte characters');
  refuses(/not valid JSON/, {}, { SVCD_ROOT_CREDENTIAL: '{' });
  refuses(/secret_hash must be the secret's SHA-256 as 64 hex digits, sha256:<64 hex digits>, or base64\/base64url/, {}, { SVCD_ROOT_CREDENTIAL: '{"key_id":"r","secret_hash":"abc"}' });
  // Rule 5: a malformed token is kept (and grants nothing); only past 64 svc: tokens is a seed refused.
  assert.equal(parse({}, { SVCD_ROOT_CREDENTIAL: JSON.stringify({ key_id: 'r', secret_hash: hash, scope: 'svc:admin svc:bogus' }) }).rootSeed?.scope, 'svc:admin svc:bogus');
  const tooMany = Array.from({ length: 65 }, (_, i) => `svc:read:b${i}:*`).join(' ');
  refuses(/scope has 65 svc: scope tokens/, {}, { SVCD_ROOT_CREDENTIAL: JSON.stringify({ key_id: 'r', secret_hash: hash, scope: tooMany }) });
});

test('root seed secret_hash: hex, sha256:hex, base64 and base64url of the digest; anything else refuses', () => {
  const digest = createHash('sha256').update('root-secret').digest();
  const hex = digest.toString('hex');
  const seed = (secretHash: unknown): Record<string, string> => ({ SVCD_ROOT_CREDENTIAL: JSON.stringify({ key_id: 'r', secret_hash: secretHash }) });
  const b64 = digest.toString('base64');
  const b64url = digest.toString('base64url');
  assert.ok(b64.endsWith('=') && b64url.length === 43);
  for (const form of [hex, hex.toUpperCase(), `sha256:${hex}`, `sha256:${hex.toUpperCase()}`, b64, b64.slice(0, -1), b64url, `${b64url}=`]) {
    assert.equal(parse({}, seed(form)).rootSeed?.secret_hash, hex, form);
  }
  // A digest whose base64 needs both + and / and whose base64url needs - and _: each alphabet alone.
  const mixed = Buffer.from('fbff' + 'ff'.repeat(30), 'hex');
  assert.match(mixed.toString('base64'), /[+/]/);
  assert.equal(parseSecretHash(mixed.toString('base64')), mixed.toString('hex'));
  assert.equal(parseSecretHash(mixed.toString('base64url')), mixed.toString('hex'));
  const notCanonical = b64url.slice(0, 42) + String.fromCharCode(b64url.charCodeAt(42) + 1); // sets a padding bit
  const bad = [
    '', 'abc', hex.slice(0, 63), `${hex}0`, `sha256:${b64}`, `SHA256:${hex}`, `sha256:${hex.slice(1)}`, `md5:${hex}`,
    b64.slice(0, -2), `${b64}=`, `${b64url}==`, ` ${hex}`, `${hex}\n`, notCanonical,
    `${'A'.repeat(20)}+_${'A'.repeat(21)}`, // mixes the two alphabets
    Buffer.alloc(31).toString('base64'), Buffer.alloc(33).toString('base64url'),
  ];
  for (const form of bad) {
    assert.equal(parseSecretHash(form), undefined, JSON.stringify(form));
    refuses(/secret_hash must be/, {}, seed(form));
  }
  for (const notString of [7, null, [hex], { hex }]) refuses(/secret_hash must be/, {}, seed(notString));
  refuses(/secret_hash must be/, {}, { SVCD_ROOT_CREDENTIAL: JSON.stringify({ key_id: 'r' }) });
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

test('a root seed under --auth off boots with one warning line (it converges nowhere)', () => {
  const warnings: string[] = [];
  parse({ 'root-key-id': 'ck_root' }, { SVCD_ROOT_SECRET: 'a-root-secret-of-at-least-32-bytes!!' }, false, warnings);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /^auth: warning: the root seed ck_root is ignored under --auth off/);
  const quiet: string[] = [];
  parse({ auth: 'off' }, {}, false, quiet);
  assert.deepEqual(quiet, []);
});
