// Shared pieces of the black-box auth conformance suite: a star child process whatever its scheme
// (http or https), a child that must refuse to boot, requests over node:http/https (client
// certificates, repeated headers, verbatim paths), JWT minting with jose, test-made certificates
// (openssl), a loopback JWKS / OIDC issuer, and a bounded SSE reader.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import https from 'node:https';
import { createServer, type Server } from 'node:http';
import { writeFileSync, readFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import assert from 'node:assert/strict';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { REPO_ROOT, childEnv, removeDir, starArgs, startServer, tempDir, type Engine } from '../helpers/server.ts';

export { ENGINES, tempDir, removeDir, type Engine } from '../helpers/server.ts';

const START_TIMEOUT_MS = 60_000; // a bound, not a speed: a loaded CI machine has taken over 20 s to start a star
/** Every request here gives up after this long: a bounded wait, never a hang. */
export const REQUEST_TIMEOUT_MS = 10_000;

export interface Star {
  /** http://… or https://… following whether the star was given TLS files. */
  baseUrl: string;
  port: number;
  dataDir: string;
  /** The engine the star reports serving with (mtls always reports node). */
  engine: string;
  /** The scheme the listening line printed. */
  printedScheme: string;
  proc: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

export interface StarOptions {
  engine?: Engine;
  dataDir?: string;
  args?: string[];
  env?: Record<string, string>;
  /** Serve over TLS: baseUrl becomes https. */
  tls?: boolean;
  /** Keep the data dir on stop (restarts on the same dir). */
  keepDir?: boolean;
}

/** Start a star child on loopback (the one harness, test/helpers/server.ts, with a clean SVCD_*
 *  environment); resolves at its listening line. Its temp data dir goes with it unless kept. */
export async function startStar(opts: StarOptions = {}): Promise<Star> {
  const s = await startServer({
    engine: opts.engine ?? 'uws', dataDir: opts.dataDir ?? tempDir('svcd-auth-'), cleanEnv: true,
    ...(opts.args ? { args: opts.args } : {}), ...(opts.env ? { env: opts.env } : {}), ...(opts.tls ? { tls: true } : {}),
  });
  return {
    ...s,
    async stop() {
      await s.stop();
      if (!opts.keepDir && opts.dataDir === undefined) removeDir(s.dataDir);
    },
  };
}

export interface Refusal { code: number | null; signal: string | null; stdout: string; stderr: string }

/** Run a star that is expected to refuse to boot; bounded, and killed if it starts serving instead. */
export function runRefusal(opts: { engine?: Engine; args?: string[]; env?: Record<string, string> }): Promise<Refusal> {
  const dataDir = tempDir('svcd-refuse-');
  const proc = spawn(process.execPath, starArgs(dataDir, opts.engine ?? 'node', opts.args), {
    cwd: REPO_ROOT, env: childEnv({ cleanEnv: true, ...(opts.env ? { env: opts.env } : {}) }), stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (c: Buffer) => {
    stdout += c.toString();
    if (/listening on/.test(stdout)) proc.kill('SIGKILL'); // it booted: the test will fail on stdout
  });
  proc.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); });
  return new Promise((resolve) => {
    const timer = setTimeout(() => proc.kill('SIGKILL'), START_TIMEOUT_MS);
    proc.once('exit', (code, signal) => {
      clearTimeout(timer);
      removeDir(dataDir);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The refusal contract: exit 2, no listener, exactly one stderr line naming the reason. */
export function assertRefused(r: Refusal, reason: RegExp): void {
  assert.ok(!/listening on/.test(r.stdout), `the star must not serve: ${r.stdout}`);
  assert.equal(r.signal, null, `exited by itself, not killed: ${r.stderr}`);
  assert.equal(r.code, 2, 'startup refusals exit 2');
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `one stderr line, got:\n${r.stderr}`);
  assert.match(lines[0], /^svcd: auth: /, 'the line names auth as the cause');
  assert.match(lines[0], reason);
}

// ------------------------------------------------------------------ requests

export interface TlsClient { ca?: Buffer; cert?: Buffer; key?: Buffer }

export interface Res {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** Parsed JSON, or undefined. */
  body: any;
}

export interface ReqOptions {
  /** A string[] value is sent as that many header lines. */
  headers?: Record<string, string | string[]>;
  body?: unknown;
  /** Sent verbatim instead of JSON. */
  raw?: string;
  tls?: TlsClient;
}

/** One request on a fresh connection (no pooling, so a client certificate is always presented). */
export function request(baseUrl: string, method: string, path: string, opts: ReqOptions = {}): Promise<Res> {
  const u = new URL(baseUrl);
  const payload = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  const headers: Record<string, string | string[]> = { ...(opts.headers ?? {}) };
  if (payload !== undefined) {
    headers['content-type'] ??= 'application/json';
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  const secure = u.protocol === 'https:';
  const mod = secure ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request({
      host: u.hostname, port: Number(u.port), method, path, headers, agent: false, timeout: REQUEST_TIMEOUT_MS,
      ...(secure ? { ca: opts.tls?.ca, cert: opts.tls?.cert, key: opts.tls?.key } : {}),
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: any;
        try { body = text === '' ? undefined : JSON.parse(text); } catch { body = undefined; }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/** The spec's error envelope with the expected status (and never a 500). */
export function assertStatus(res: Res, status: number, what = ''): void {
  assert.equal(res.status, status, `${what}: expected ${status}, got ${res.status}: ${res.text}`);
  if (status >= 400) {
    assert.match(String(res.headers['content-type']), /^application\/json/, `${what}: JSON error body`);
    assert.equal(typeof res.body?.error, 'string', `${what}: {error: string}, got ${res.text}`);
  }
}

let counter = 0;
export function uniq(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid.toString(36)}-${counter}-${Math.random().toString(36).slice(2, 7)}`;
}

export const streamPath = (bucket: string, key: string): string =>
  `/v1/streams/${encodeURIComponent(bucket)}/${encodeURIComponent(key)}`;

// ------------------------------------------------------------------ tokens

export const nowS = (): number => Math.floor(Date.now() / 1000);
const enc = new TextEncoder();

export interface MintOptions {
  alg?: string;
  kid?: string;
  /** Absolute exp in seconds; null leaves exp out. Default: now + 10 min. */
  exp?: number | null;
  aud?: string;
  iss?: string;
  sub?: string;
}

/** A token with the given scope, signed with an HMAC secret (string) or an asymmetric private key. */
export async function mint(key: string | CryptoKey, scope: string | undefined, o: MintOptions = {}): Promise<string> {
  const payload: JWTPayload = scope === undefined ? {} : { scope };
  const jwt = new SignJWT(payload).setProtectedHeader({ alg: o.alg ?? 'HS256', typ: 'JWT', ...(o.kid !== undefined ? { kid: o.kid } : {}) })
    .setIssuedAt();
  if (o.exp !== null) jwt.setExpirationTime(o.exp ?? nowS() + 600);
  if (o.aud !== undefined) jwt.setAudience(o.aud);
  if (o.iss !== undefined) jwt.setIssuer(o.iss);
  jwt.setSubject(o.sub ?? 'tester');
  return jwt.sign(typeof key === 'string' ? enc.encode(key) : key);
}

const b64url = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');

/** An unsecured JWT (`alg: none`, empty signature) carrying the given claims. */
export function unsignedToken(claims: Record<string, unknown>): string {
  return `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims)}.`;
}

/** The payload of a compact JWT, unverified. */
export function claimsOf(token: string): Record<string, any> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
}

export function headerOf(token: string): Record<string, any> {
  return JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString('utf8'));
}

// ------------------------------------------------------------------ certificates

export interface Certs {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A client certificate signed by a CA the star does not trust. */
  rogueCert: string;
  rogueKey: string;
  read(file: string): Buffer;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A CA, a server certificate for 127.0.0.1, a client certificate from the CA, and an untrusted one. */
export function makeCerts(): Certs {
  const dir = tempDir('svcd-certs-');
  mkdirSync(dir, { recursive: true });
  const days = ['-days', '2'];
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', ...days, '-subj', '/CN=svcd test CA'], dir);
  openssl(['req', '-x509', ...ec, '-keyout', 'rogue-ca.key', '-out', 'rogue-ca.pem', ...days, '-subj', '/CN=rogue CA'], dir);
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  writeFileSync(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  const leaf = (name: string, caName: string, ext: string, cn: string): void => {
    openssl(['req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`], dir);
    openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', `${caName}.pem`, '-CAkey', `${caName}.key`, '-CAcreateserial',
      '-out', `${name}.pem`, ...days, '-extfile', ext], dir);
  };
  leaf('server', 'ca', 'server.ext', '127.0.0.1');
  leaf('client', 'ca', 'client.ext', 'svcd test client');
  leaf('rogue', 'rogue-ca', 'client.ext', 'rogue client');
  const p = (f: string): string => join(dir, f);
  return {
    dir, ca: p('ca.pem'), serverCert: p('server.pem'), serverKey: p('server.key'),
    clientCert: p('client.pem'), clientKey: p('client.key'), rogueCert: p('rogue.pem'), rogueKey: p('rogue.key'),
    read: (f) => readFileSync(f),
  };
}

// ------------------------------------------------------------------ a loopback JWKS / OIDC issuer

export interface Issuer {
  /** http://127.0.0.1:port, also the OIDC issuer. */
  url: string;
  jwksUrl: string;
  keys: Record<string, { alg: string; kid: string; priv: CryptoKey; jwk: JWK }>;
  close(): void;
}

/** Serves /jwks.json and /.well-known/openid-configuration with freshly made ES256, RS256 and EdDSA keys. */
export async function startIssuer(): Promise<Issuer> {
  const specs = [['ES256', 'es-1'], ['RS256', 'rs-1'], ['EdDSA', 'ed-1']] as const;
  const keys: Issuer['keys'] = {};
  for (const [alg, kid] of specs) {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    keys[alg] = { alg, kid, priv: privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
  }
  let url = '';
  const server: Server = createServer((req, res) => {
    const body = req.url === '/jwks.json' ? { keys: Object.values(keys).map((k) => k.jwk) }
      : req.url === '/.well-known/openid-configuration' ? { issuer: url, jwks_uri: `${url}/jwks.json` }
        : undefined;
    if (body === undefined) { res.writeHead(404).end(); return; }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url, jwksUrl: `${url}/jwks.json`, keys,
    close() { server.closeAllConnections(); server.close(); },
  };
}

// ------------------------------------------------------------------ SSE

export interface SseResult {
  status: number;
  text: string;
  /** The stream ended (server closed it) before the bound. */
  ended: boolean;
  ms: number;
}

/** Subscribe and collect the event stream until the server ends it or `boundMs` passes. */
export function readSse(baseUrl: string, path: string, headers: Record<string, string>, boundMs: number,
  onOpen?: () => void): Promise<SseResult> {
  const u = new URL(baseUrl);
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: Number(u.port), method: 'GET', path, headers, agent: false }, (res) => {
      let text = '';
      let done = false;
      const finish = (ended: boolean): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, text, ended, ms: Date.now() - t0 });
        req.destroy();
      };
      const timer = setTimeout(() => finish(false), boundMs);
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => finish(true));
      res.on('close', () => finish(true));
      res.on('error', () => finish(true));
      onOpen?.();
    });
    req.on('error', reject);
    req.end();
  });
}

