// Authentication settings: every flag and SVCD_* variable of the spec's Authentication section,
// parsed once into one typed AuthConfig. Every unsafe or ambiguous combination refuses to boot with
// a one-line reason (fail closed): a star that cannot tell who its callers are must not serve them.

import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { EXCHANGE_TOKEN_CONNECTIONS_DEFAULT, ROOT_SECRET_BYTES_MIN } from '../config/limits.ts';
import { isValidKeyId, KEY_ID_RULE } from './credentials.ts';
import { parseStoredScope } from './scope.ts';
import { BootError } from '../config/boot-error.ts';

export type AuthMode = 'off' | 'mtls' | 'jwt' | 'basic';
export const AUTH_MODES: readonly AuthMode[] = ['off', 'mtls', 'jwt', 'basic'];

/**
 * RFC 7518 §3.2: an HS256 key should be at least as long as the hash output; a shorter secret is
 * guessable offline from any one token. The spec sets no minimum (test harnesses use short
 * secrets), so boot accepts any non-empty secret and prints one warning line below this length.
 */
export const HMAC_SECRET_BYTES_RECOMMENDED = 32;

export interface HmacKey {
  /** Stamped as `kid` on minted tokens; '' for the single-secret sources, which stamp none. */
  kid: string;
  secret: Uint8Array;
}

export type JwtSource =
  | { kind: 'hmac-secret'; key: HmacKey }
  | { kind: 'hmac-keys'; keys: HmacKey[] }
  | { kind: 'jwks-url'; url: string }
  | { kind: 'oidc-issuer'; issuer: string };

export interface JwtConfig {
  source: JwtSource;
  audience?: string;
}

export interface RootSeed {
  key_id: string;
  /** Lowercase hex SHA-256 of the secret (normalized from any accepted input form). */
  secret_hash: string;
  scope: string;
}

export interface AuthConfig {
  mode: AuthMode;
  insecureAuth: boolean;
  /** mtls only: the files the TLS listener loads; the client CA verifies client certificates. */
  mtls?: { certFile: string; keyFile: string; clientCaFile: string };
  /** jwt only. */
  jwt?: JwtConfig;
  /** basic only. */
  basic?: { username: string; password: string };
  rootSeed?: RootSeed;
  /** jwt with JWKS/OIDC: the provisioned token this star presents to its peers. */
  peerServiceToken?: string;
  /** `svc_aux.limits.connections` stamped on exchanged tokens; 0 stamps none. Absent: the default. */
  exchangeTokenConnections?: number;
}

export interface AuthSetting {
  /** Flag name without the leading dashes; absent for environment-only secrets. */
  flag?: string;
  env: string;
  help: string;
  boolean?: boolean;
}

/** The flags and variables, for the CLI's --help. Secrets are environment-only where the spec says so. */
export const AUTH_SETTINGS: readonly AuthSetting[] = [
  { flag: 'auth', env: 'SVCD_AUTH', help: 'authentication mode: off (default), mtls, jwt, basic' },
  { flag: 'insecure-auth', env: 'SVCD_INSECURE_AUTH', boolean: true, help: 'allow jwt/basic credentials over plaintext (testing only)' },
  { flag: 'tls-cert', env: 'SVCD_TLS_CERT', help: 'TLS certificate file (PEM)' },
  { flag: 'tls-key', env: 'SVCD_TLS_KEY', help: 'TLS private key file (PEM)' },
  { flag: 'tls-client-ca', env: 'SVCD_TLS_CLIENT_CA', help: 'CA bundle that verifies client certificates (required by mtls)' },
  { flag: 'jwt-hmac-secret-file', env: 'SVCD_JWT_HMAC_SECRET_FILE', help: 'jwt source: HS256 secret read from a file' },
  { flag: 'jwt-hmac-secret', env: 'SVCD_JWT_HMAC_SECRET', help: 'jwt source: inline HS256 secret (prefer the environment form)' },
  { env: 'SVCD_JWT_HMAC_KEYS', help: 'jwt source: HS256 key set id:secret,id:secret; the first signs, all verify' },
  { flag: 'jwt-jwks-url', env: 'SVCD_JWT_JWKS_URL', help: 'jwt source: JWKS URL (RS*, ES*, EdDSA), fetched at start, refreshed hourly' },
  { flag: 'jwt-oidc-issuer', env: 'SVCD_JWT_OIDC_ISSUER', help: 'jwt source: OIDC issuer; JWKS discovered, iss pinned' },
  { flag: 'jwt-audience', env: 'SVCD_JWT_AUDIENCE', help: 'required aud claim value' },
  { flag: 'admin-username', env: 'SVCD_ADMIN_USERNAME', help: 'basic mode: operator username' },
  { env: 'SVCD_ADMIN_PASSWORD', help: 'basic mode: operator password' },
  { flag: 'root-credential-file', env: 'SVCD_ROOT_CREDENTIAL_FILE', help: 'root seed file: JSON {key_id, secret_hash, scope}' },
  { env: 'SVCD_ROOT_CREDENTIAL', help: 'root seed as inline JSON {key_id, secret_hash, scope}' },
  { flag: 'root-key-id', env: 'SVCD_ROOT_KEY_ID', help: 'root seed key id (with SVCD_ROOT_SECRET; scope svc:admin)' },
  { env: 'SVCD_ROOT_SECRET', help: `root seed secret, hashed at boot; at least ${ROOT_SECRET_BYTES_MIN} bytes` },
  { flag: 'peer-service-token-file', env: 'SVCD_PEER_SERVICE_TOKEN_FILE', help: 'jwt with JWKS/OIDC: token this star presents to peers' },
  { env: 'SVCD_PEER_SERVICE_TOKEN', help: 'jwt with JWKS/OIDC: inline peer token' },
  {
    flag: 'exchange-token-connections', env: 'SVCD_EXCHANGE_TOKEN_CONNECTIONS',
    help: `svc_aux.limits.connections stamped on tokens the exchange mints: concurrent subscriptions per sub at a Gateway; 0 stamps none (default ${EXCHANGE_TOKEN_CONNECTIONS_DEFAULT})`,
  },
];

export interface ParseAuthOptions {
  /** Where boot warnings go (one line each, already prefixed `auth: warning: `). Default: stderr. */
  warn?: (line: string) => void;
  /** The Gateway's edge verification: it only verifies, never calls a peer, so it needs no peer token. */
  verifyOnly?: boolean;
  /** The modes this process serves, refused before any other mode's settings are asked for (the
   *  Gateway: off and jwt; asking for basic's --admin-username would name a flag it does not take). */
  modes?: { allowed: readonly AuthMode[]; refusal: string };
}

type Reader = (name: string) => string | undefined;

function refuse(reason: string): never {
  throw new BootError(`auth: ${reason}`);
}

function readSecretFile(path: string, what: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    refuse(`cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  // Editors and `echo` leave a trailing newline that is never part of the secret.
  return text.replace(/\r?\n$/, '');
}

function parseBool(raw: string | undefined, name: string): boolean {
  if (raw === undefined) return false;
  const v = raw.trim().toLowerCase();
  if (v === '' || v === 'true' || v === '1' || v === 'yes') return true;
  if (v === 'false' || v === '0' || v === 'no') return false;
  return refuse(`--${name} must be true or false, got '${raw}'`);
}

function parseCount(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) return refuse(`--${name} must be a non-negative integer, got '${raw}'`);
  return n;
}

function hmacKey(kid: string, secret: string, what: string): HmacKey {
  const bytes = new TextEncoder().encode(secret);
  if (bytes.length === 0) refuse(`${what} is empty`);
  return { kid, secret: bytes };
}

/** One warning line naming every HS256 secret under the recommended length, or undefined. */
function shortSecretWarning(source: JwtSource, name: string): string | undefined {
  const short = (k: HmacKey): boolean => k.secret.length < HMAC_SECRET_BYTES_RECOMMENDED;
  let what: string[] = [];
  if (source.kind === 'hmac-secret' && short(source.key)) what = [`${name} is ${source.key.secret.length} bytes`];
  if (source.kind === 'hmac-keys') what = source.keys.filter(short).map((k) => `${name} key '${k.kid}' is ${k.secret.length} bytes`);
  if (what.length === 0) return undefined;
  return `auth: warning: ${what.join(', ')}; HS256 wants at least ${HMAC_SECRET_BYTES_RECOMMENDED} ` +
    '(RFC 7518 §3.2): a shorter secret can be guessed offline from any one token';
}

function parseHmacKeys(raw: string): HmacKey[] {
  const keys: HmacKey[] = [];
  for (const entry of raw.split(',')) {
    const colon = entry.indexOf(':');
    if (colon <= 0) refuse('SVCD_JWT_HMAC_KEYS entries must be id:secret');
    const kid = entry.slice(0, colon).trim();
    if (keys.some((k) => k.kid === kid)) refuse(`SVCD_JWT_HMAC_KEYS names key id '${kid}' twice`);
    keys.push(hmacKey(kid, entry.slice(colon + 1), `SVCD_JWT_HMAC_KEYS key '${kid}'`));
  }
  return keys;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Key material fetched over plaintext could be swapped by anyone on the path: https, or loopback. */
function parseKeyUrl(raw: string, name: string, insecureAuth: boolean): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse(`--${name} is not a URL: '${raw}'`);
  }
  if (url.protocol === 'https:') return raw;
  if (url.protocol === 'http:' && (LOOPBACK_HOSTS.has(url.hostname) || insecureAuth)) return raw;
  return refuse(`--${name} must be https (http only on loopback or with --insecure-auth)`);
}

function parseJwt(read: Reader, env: NodeJS.ProcessEnv, insecureAuth: boolean, warn: (line: string) => void): JwtConfig {
  // Count the sources before reading any, so two sources are refused as two sources even when
  // one of them is also broken.
  const given: { name: string; value: string; parse: (value: string) => JwtSource }[] = [];
  const offer = (name: string, value: string | undefined, parse: (value: string) => JwtSource): void => {
    if (value !== undefined && value !== '') given.push({ name, value, parse });
  };
  offer('--jwt-hmac-secret-file', read('jwt-hmac-secret-file'), (path) =>
    ({ kind: 'hmac-secret', key: hmacKey('', readSecretFile(path, 'JWT secret file'), '--jwt-hmac-secret-file secret') }));
  offer('SVCD_JWT_HMAC_SECRET', read('jwt-hmac-secret'), (secret) =>
    ({ kind: 'hmac-secret', key: hmacKey('', secret, 'SVCD_JWT_HMAC_SECRET') }));
  offer('SVCD_JWT_HMAC_KEYS', env.SVCD_JWT_HMAC_KEYS, (keys) => ({ kind: 'hmac-keys', keys: parseHmacKeys(keys) }));
  offer('--jwt-jwks-url', read('jwt-jwks-url'), (url) =>
    ({ kind: 'jwks-url', url: parseKeyUrl(url, 'jwt-jwks-url', insecureAuth) }));
  offer('--jwt-oidc-issuer', read('jwt-oidc-issuer'), (issuer) =>
    ({ kind: 'oidc-issuer', issuer: parseKeyUrl(issuer, 'jwt-oidc-issuer', insecureAuth) }));
  if (given.length === 0) refuse('--auth jwt needs exactly one JWT source, none given');
  if (given.length > 1) refuse(`--auth jwt needs exactly one JWT source, got ${given.map((g) => g.name).join(', ')}`);
  const audience = read('jwt-audience');
  const source = given[0].parse(given[0].value);
  const warning = shortSecretWarning(source, given[0].name);
  if (warning !== undefined) warn(warning);
  return { source, ...(audience !== undefined ? { audience } : {}) };
}

const HEX64 = /^[0-9a-fA-F]{64}$/;
/** base64 (+/) or base64url (-_) of 32 bytes: 43 significant characters, optionally one `=`. */
const B64_32 = /^(?:[A-Za-z0-9+/]{43}|[A-Za-z0-9_-]{43})=?$/;
const SECRET_HASH_FORMS = '64 hex digits, sha256:<64 hex digits>, or base64/base64url of the 32-byte digest';

/**
 * A root seed's secret_hash (the SHA-256 of the secret) as lowercase hex, from any accepted form:
 * 64 hex digits, `sha256:` plus 64 hex digits, or the 32-byte digest in base64 or base64url (padded
 * or not). Anything else is undefined. The base64 forms must be canonical, so one digest has one
 * spelling per alphabet and nothing is silently dropped by a lenient decoder.
 */
export function parseSecretHash(raw: string): string | undefined {
  const hex = raw.startsWith('sha256:') ? raw.slice('sha256:'.length) : raw;
  if (HEX64.test(hex)) return hex.toLowerCase();
  if (hex !== raw || !B64_32.test(raw)) return undefined;
  const body = raw.replace(/=$/, '');
  const url = /[-_]/.test(body);
  const bytes = Buffer.from(body, url ? 'base64url' : 'base64');
  if (bytes.length !== 32) return undefined;
  const again = bytes.toString(url ? 'base64url' : 'base64').replace(/=+$/, '');
  return again === body ? bytes.toString('hex') : undefined;
}

function seedFromJson(text: string, origin: string): RootSeed {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return refuse(`${origin} is not valid JSON`);
  }
  if (typeof raw !== 'object' || raw === null) return refuse(`${origin} must be a JSON object`);
  const { key_id: keyId, secret_hash: hash, scope } = raw as Record<string, unknown>;
  if (typeof keyId !== 'string' || !isValidKeyId(keyId)) return refuse(`${origin}: key_id must be ${KEY_ID_RULE}`);
  const secretHash = typeof hash === 'string' ? parseSecretHash(hash) : undefined;
  if (secretHash === undefined) return refuse(`${origin}: secret_hash must be the secret's SHA-256 as ${SECRET_HASH_FORMS}`);
  const seedScope = scope === undefined ? 'svc:admin' : scope;
  if (typeof seedScope !== 'string') return refuse(`${origin}: scope must be a string`);
  try {
    // Only the token cap refuses a seed; its malformed tokens are skipped (rule 5), and reported
    // when the seed converges into the registry.
    parseStoredScope(seedScope);
  } catch (err) {
    return refuse(`${origin}: ${(err as Error).message}`);
  }
  return { key_id: keyId, secret_hash: secretHash, scope: seedScope };
}

function parseRootSeed(read: Reader, env: NodeJS.ProcessEnv): RootSeed | undefined {
  const seeds: RootSeed[] = [];
  const file = read('root-credential-file');
  if (file !== undefined) seeds.push(seedFromJson(readSecretFile(file, 'root credential file'), '--root-credential-file'));
  const inline = env.SVCD_ROOT_CREDENTIAL;
  if (inline !== undefined && inline !== '') seeds.push(seedFromJson(inline, 'SVCD_ROOT_CREDENTIAL'));
  const keyId = read('root-key-id');
  const secret = env.SVCD_ROOT_SECRET;
  if (keyId !== undefined || (secret !== undefined && secret !== '')) {
    if (keyId === undefined || secret === undefined || secret === '') refuse('--root-key-id and SVCD_ROOT_SECRET go together');
    if (!isValidKeyId(keyId)) refuse(`--root-key-id must be ${KEY_ID_RULE}`);
    // The seed is svc:admin and its hash an unsalted SHA-256: a short secret is guessable.
    const bytes = Buffer.byteLength(secret, 'utf8');
    if (bytes < ROOT_SECRET_BYTES_MIN) {
      refuse(`SVCD_ROOT_SECRET is ${bytes} bytes; the root secret needs at least ${ROOT_SECRET_BYTES_MIN} (e.g. $(openssl rand -hex 32))`);
    }
    seeds.push({ key_id: keyId, secret_hash: createHash('sha256').update(secret, 'utf8').digest('hex'), scope: 'svc:admin' });
  }
  if (seeds.length > 1) refuse('give the root seed once: --root-credential-file, SVCD_ROOT_CREDENTIAL or --root-key-id');
  return seeds[0];
}

function parsePeerToken(read: Reader, env: NodeJS.ProcessEnv): string | undefined {
  const file = read('peer-service-token-file');
  const inline = env.SVCD_PEER_SERVICE_TOKEN;
  if (file !== undefined && inline !== undefined && inline !== '') refuse('give the peer service token once: file or SVCD_PEER_SERVICE_TOKEN');
  const token = file !== undefined ? readSecretFile(file, 'peer service token file').trim() : inline?.trim();
  return token === '' ? undefined : token;
}

/**
 * Read the auth flags and SVCD_* variables. `get(flag)` answers a command-line flag by its name
 * without dashes; a flag left unset falls back to its SVCD_* variable. `tlsEnabled` says whether
 * the listeners serve TLS. Throws BootError('auth: <one-line reason>') for every startup refusal.
 */
export function parseAuthConfig(
  get: (flag: string) => string | undefined,
  env: NodeJS.ProcessEnv,
  tlsEnabled: boolean,
  options: ParseAuthOptions = {},
): AuthConfig {
  const warn = options.warn ?? ((line: string) => { console.error(`svcd: ${line}`); });
  const envOf = new Map(AUTH_SETTINGS.filter((s) => s.flag).map((s) => [s.flag as string, s.env]));
  const read: Reader = (flag) => {
    const fromFlag = get(flag);
    if (fromFlag !== undefined) return fromFlag;
    const name = envOf.get(flag);
    const fromEnv = name === undefined ? undefined : env[name];
    return fromEnv === '' ? undefined : fromEnv;
  };

  const modeRaw = (read('auth') ?? 'off').trim().toLowerCase();
  if (!(AUTH_MODES as readonly string[]).includes(modeRaw)) refuse(`--auth must be one of ${AUTH_MODES.join(', ')}, got '${modeRaw}'`);
  const mode = modeRaw as AuthMode;
  if (options.modes && !options.modes.allowed.includes(mode)) refuse(`${options.modes.refusal}, not ${mode}`);
  const insecureAuth = parseBool(read('insecure-auth'), 'insecure-auth');

  const jwtFlags = ['jwt-hmac-secret-file', 'jwt-hmac-secret', 'jwt-jwks-url', 'jwt-oidc-issuer', 'jwt-audience'];
  const jwtSet = jwtFlags.filter((f) => read(f) !== undefined).map((f) => `--${f}`);
  if (env.SVCD_JWT_HMAC_KEYS) jwtSet.push('SVCD_JWT_HMAC_KEYS');
  if (mode !== 'jwt' && jwtSet.length > 0) {
    // Almost always a forgotten `--auth jwt`: serving wide open while the operator believes tokens
    // are checked is the failure fail-closed exists for.
    refuse(`${jwtSet[0]} is set but --auth is ${mode}; set --auth jwt or remove it`);
  }
  if ((mode === 'jwt' || mode === 'basic') && !tlsEnabled && !insecureAuth) {
    refuse(`--auth ${mode} sends credentials; it needs TLS (--tls-cert, --tls-key) or --insecure-auth`);
  }

  const config: AuthConfig = { mode, insecureAuth, exchangeTokenConnections: parseCount(read('exchange-token-connections'), 'exchange-token-connections', EXCHANGE_TOKEN_CONNECTIONS_DEFAULT) };
  if (mode === 'mtls') {
    const certFile = read('tls-cert');
    const keyFile = read('tls-key');
    const clientCaFile = read('tls-client-ca');
    if (certFile === undefined || keyFile === undefined || !tlsEnabled) refuse('--auth mtls needs --tls-cert and --tls-key');
    if (clientCaFile === undefined) refuse('--auth mtls needs --tls-client-ca to verify client certificates');
    config.mtls = { certFile, keyFile, clientCaFile };
  }
  if (mode === 'jwt') {
    config.jwt = parseJwt(read, env, insecureAuth, warn);
    const asymmetric = config.jwt.source.kind === 'jwks-url' || config.jwt.source.kind === 'oidc-issuer';
    const peer = parsePeerToken(read, env);
    // Spec: required, boot refuses without it, whether or not this star has peers yet.
    if (asymmetric && peer === undefined && !options.verifyOnly) {
      refuse('jwt with JWKS/OIDC cannot mint peer tokens; give --peer-service-token-file or SVCD_PEER_SERVICE_TOKEN');
    }
    if (peer !== undefined) config.peerServiceToken = peer;
  }
  if (mode === 'basic') {
    const username = read('admin-username');
    const password = env.SVCD_ADMIN_PASSWORD;
    if (username === undefined || username === '') refuse('--auth basic needs --admin-username');
    if (username.includes(':')) refuse('--admin-username cannot contain ":" (Basic auth splits on it)');
    if (password === undefined || password === '') refuse('--auth basic needs SVCD_ADMIN_PASSWORD');
    config.basic = { username, password };
  }
  const seed = parseRootSeed(read, env);
  if (seed !== undefined) config.rootSeed = seed;
  // Not refused (a shared environment may set the seed for every star), but said: under auth off no
  // registry is kept and the seed converges nowhere.
  if (seed !== undefined && mode === 'off') warn(`auth: warning: the root seed ${seed.key_id} is ignored under --auth off (no credential registry is kept)`);
  return config;
}

/** Whether the configured source can sign (exchange, peer self-minting) or only verify. */
export function canSign(config: AuthConfig): boolean {
  const kind = config.jwt?.source.kind;
  return kind === 'hmac-secret' || kind === 'hmac-keys';
}
