// `svcd gateway`: the Gateway process. Flags and SVCD_* variables like the star's, its own listener,
// the stars it forwards to, the DNS zone of bucket hosts, TLS on its listener, and edge verification
// and limits, which refuse to boot in an unsafe combination (limits without verification, spec:
// Gateway, bridge and peers; a bearer-checking edge over plaintext without --insecure-auth, spec:
// Modes). Every refusal is one stderr line and exit 2, as the star's.

import { AUTH_SETTINGS, createAuthenticator, createJwtVerifier, parseAuthConfig, type Authenticator, type JwtVerifier } from '../auth/index.ts';
import { ConfigError } from '../config/config.ts';
import { hostPort, listValue, parseFlags, positiveInt, timerMs, usageText, type FlagSpec } from '../config/flags.ts';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { createSecureContext } from 'node:tls';
import {
  GATEWAY_CONNECTIONS_PER_SUB_DEFAULT, GATEWAY_HEALTH_INTERVAL_MS, GATEWAY_HEALTH_TIMEOUT_MS, GATEWAY_REQUESTS_PER_SUB_MAX,
  GATEWAY_UPSTREAM_DOWN_MS, SSE_STALL_MS,
} from '../config/limits.ts';
import { GatewayLimiter } from './limiter.ts';
import { CorsPolicy } from '../api/cors.ts';
import { startGateway, type RunningGateway } from './server.ts';
import { parseUpstream } from './upstreams.ts';
import { BootError } from '../config/boot-error.ts';
import { stamped } from '../log-line.ts';

/** The auth settings that matter at the edge: the mode and the JWT sources. */
const EDGE_AUTH = new Set(['SVCD_AUTH', 'SVCD_INSECURE_AUTH', 'SVCD_JWT_HMAC_SECRET_FILE', 'SVCD_JWT_HMAC_SECRET', 'SVCD_JWT_HMAC_KEYS', 'SVCD_JWT_JWKS_URL', 'SVCD_JWT_OIDC_ISSUER', 'SVCD_JWT_AUDIENCE']);

export const GATEWAY_FLAGS: FlagSpec[] = [
  { name: 'listen', env: 'SVCD_GATEWAY_LISTEN', help: 'Gateway address host:port', default: '127.0.0.1:8080' },
  {
    name: 'upstream', env: 'SVCD_GATEWAY_UPSTREAM', value: 'HOST:PORT', repeat: 'all', default: 'http://127.0.0.1:7070',
    help: `a star's data bridge, host:port or http(s)://host:port; repeat the flag or give a comma list for several stars of a cluster (a stream's requests start at the star its address hashes to, others go round robin; a star refusing connections is skipped for ${GATEWAY_UPSTREAM_DOWN_MS / 1000} s, and one whose GET /healthz, probed every ${GATEWAY_HEALTH_INTERVAL_MS / 1000} s, gets no 200 within ${GATEWAY_HEALTH_TIMEOUT_MS / 1000} s is skipped until a probe passes; a 421 naming the leader is followed once)`,
  },
  // Variables of their own, not the star's SVCD_TLS_*: the Gateway faces the internet under a name of
  // its own, and one environment may well configure a Gateway and a star side by side.
  { name: 'tls-cert', env: 'SVCD_GATEWAY_TLS_CERT', value: 'FILE', default: '', help: 'serve HTTPS with this certificate chain (PEM; with --tls-key); edge verification (--auth jwt) then needs no --insecure-auth' },
  { name: 'tls-key', env: 'SVCD_GATEWAY_TLS_KEY', value: 'FILE', default: '', help: 'private key (PEM) of --tls-cert' },
  { name: 'dns-zone', env: 'SVCD_DNS_ZONE', help: 'zone of bucket hosts: {bucket}.{zone} carries the bucket, api.{zone} serves path-style (empty: path-style only)', default: '' },
  { name: 'gateway-limits', env: 'SVCD_GATEWAY_LIMITS', help: 'enforce the svc_aux.limits ceilings per sub: auto (on whenever --auth jwt verifies tokens at the edge), true (needs --auth jwt) or false', default: 'auto', boolean: true },
  {
    name: 'sse-stall-ms', env: 'SVCD_SSE_STALL_MS', default: String(SSE_STALL_MS),
    help: 'a caller that takes nothing of an answer (an event stream above all) for this long is disconnected, as a star disconnects a stalled SSE consumer',
  },
  {
    name: 'gateway-connections-default', env: 'SVCD_GATEWAY_CONNECTIONS_DEFAULT', default: String(GATEWAY_CONNECTIONS_PER_SUB_DEFAULT),
    help: 'concurrent subscriptions per caller (verified sub, else client address) when its token names no svc_aux.limits.connections; past it 429',
  },
  {
    name: 'gateway-requests-per-sub', env: 'SVCD_GATEWAY_REQUESTS_PER_SUB', default: String(GATEWAY_REQUESTS_PER_SUB_MAX),
    help: 'concurrent requests per caller (verified sub, else client address) in the upstream request pool; past it 429',
  },
  {
    name: 'gateway-trusted-proxies', env: 'SVCD_GATEWAY_TRUSTED_PROXIES', default: '',
    help: 'comma-separated addresses of proxies in front (a TLS terminator) whose X-Forwarded-For names the client address that per-address shares and the exchange throttle key on',
  },
  {
    name: 'cors-allowed-origins', env: 'SVCD_CORS_ALLOWED_ORIGINS', default: '',
    help: 'comma-separated browser origins allowed to call the data plane through this Gateway (* for any): it then answers CORS preflights itself and puts its CORS headers on every answer, its own errors and limits included; empty leaves CORS to the stars',
  },
  ...AUTH_SETTINGS.filter((a) => EDGE_AUTH.has(a.env)).map((a) => ({
    name: a.flag ?? '', env: a.env, help: a.flag === 'auth' ? 'off (forward unverified; the star decides) or jwt (verify at the edge too)' : a.help,
    boolean: a.boolean, envOnly: a.flag === undefined,
  })),
  { name: 'help', env: '', help: 'print this help and exit', boolean: true },
];

export interface GatewayConfig {
  listen: { host: string; port: number };
  upstreams: URL[];
  /** Certificate and key files of an HTTPS listener; undefined: plain HTTP. */
  tls?: { certFile: string; keyFile: string };
  zone: string;
  /** --gateway-limits: undefined for auto (on with edge verification). */
  limits: boolean | undefined;
  connectionsDefault: number;
  requestsPerSub: number;
  /** --sse-stall-ms: a caller that takes nothing of an answer for this long is disconnected. */
  stallMs: number;
  trustedProxies: Set<string>;
  /** Browser origins this Gateway allows (empty: the stars decide CORS). */
  corsAllowedOrigins: string[];
  help: boolean;
  get(flag: string): string | undefined;
}

function addressList(v: string, flag: string): Set<string> {
  const out = new Set<string>();
  for (const entry of listValue(v)) {
    if (isIP(entry) === 0) throw new ConfigError(`--${flag} takes IP addresses, got '${entry}'`);
    out.add(entry);
  }
  return out;
}

export function loadGatewayConfig(argv: readonly string[], env: NodeJS.ProcessEnv): GatewayConfig {
  const flags = parseFlags(argv, GATEWAY_FLAGS, env);
  const value = (name: string): string => flags.str(name) ?? '';
  const listen = hostPort(value('listen'), 'listen');
  if (!listen) throw new ConfigError('--listen is required');
  // Each value may itself be a comma list, so SVCD_GATEWAY_UPSTREAM=a:7070,b:7070 names several too.
  const upstreams: URL[] = [];
  for (const entry of flags.all('upstream').flatMap(listValue)) {
    try {
      const url = parseUpstream(entry);
      if (!upstreams.some((u) => u.origin === url.origin)) upstreams.push(url);
    } catch (err) {
      throw new ConfigError(`--upstream: ${(err as Error).message}`);
    }
  }
  if (upstreams.length === 0) throw new ConfigError('--upstream names no star');
  const zone = value('dns-zone').trim().toLowerCase().replace(/\.$/, '');
  if (zone !== '' && !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(zone)) throw new ConfigError('--dns-zone must be a DNS name');
  const certFile = value('tls-cert');
  const keyFile = value('tls-key');
  // One without the other is a slip, never a request for plain HTTP: refused, not ignored.
  if (certFile !== '' && keyFile === '') throw new ConfigError('--tls-cert needs --tls-key (the certificate\'s private key)');
  if (keyFile !== '' && certFile === '') throw new ConfigError('--tls-key needs --tls-cert');
  return {
    listen, upstreams, zone,
    tls: certFile !== '' ? { certFile, keyFile } : undefined,
    limits: value('gateway-limits') === 'auto' ? undefined : flags.bool('gateway-limits'),
    connectionsDefault: positiveInt(value('gateway-connections-default'), 'gateway-connections-default'),
    requestsPerSub: positiveInt(value('gateway-requests-per-sub'), 'gateway-requests-per-sub'),
    stallMs: timerMs(value('sse-stall-ms'), 'sse-stall-ms'),
    trustedProxies: addressList(value('gateway-trusted-proxies'), 'gateway-trusted-proxies'),
    corsAllowedOrigins: listValue(value('cors-allowed-origins')),
    help: flags.bool('help'),
    // Auth reads its own variables (parseAuthConfig): it is handed the command line only.
    get: (flag) => flags.argv(flag),
  };
}

/** Reads the listener's certificate and key, and checks they make a TLS context (parseable PEM, the
 *  key matching the certificate), so a bad pair refuses the start instead of every handshake. */
export function loadTlsFiles(files: { certFile: string; keyFile: string }): { cert: Buffer; key: Buffer } {
  const read = (flag: string, file: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new ConfigError(`--${flag}: cannot read ${file}: ${oneLine(err)}`);
    }
  };
  const cert = read('tls-cert', files.certFile);
  const key = read('tls-key', files.keyFile);
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    throw new ConfigError(`--tls-cert ${files.certFile} and --tls-key ${files.keyFile} are not a usable certificate and key: ${oneLine(err)}`);
  }
  return { cert, key };
}

/** An error's message on one line: refusals are one stderr line. */
function oneLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/g, ' ');
}

/** Runs `svcd gateway …` until SIGTERM/SIGINT; answers the exit code for a refused start. */
export async function runGateway(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number | undefined> {
  let cfg: GatewayConfig;
  let authenticator: Authenticator | undefined;
  let verifier: JwtVerifier | undefined;
  let tls: { cert: Buffer; key: Buffer } | undefined;
  try {
    cfg = loadGatewayConfig(argv, env);
    if (cfg.help) {
      console.log(usageText('usage: svcd gateway [flags]', GATEWAY_FLAGS));
      return 0;
    }
    tls = cfg.tls ? loadTlsFiles(cfg.tls) : undefined;
    // A TLS listener is what lets jwt verification run without --insecure-auth (spec: Modes).
    const auth = parseAuthConfig(cfg.get, env, tls !== undefined, {
      verifyOnly: true, modes: { allowed: ['off', 'jwt'], refusal: 'the Gateway verifies JWTs only: --auth off or jwt' },
    });
    if (cfg.limits === true && auth.mode !== 'jwt') {
      throw new ConfigError('--gateway-limits needs edge verification (--auth jwt): limits ride verified tokens');
    }
    // The token's svc_aux.limits are ceilings the Gateway enforces (spec: Claims); once it verifies
    // tokens it reads them, unless told not to.
    cfg.limits ??= auth.mode === 'jwt';
    if (auth.jwt) {
      verifier = await createJwtVerifier(auth.jwt, { log: (m) => console.error(`svcd gateway: ${m}`) });
      authenticator = createAuthenticator(auth, verifier);
    }
  } catch (err) {
    if (err instanceof ConfigError || err instanceof BootError) {
      console.error(`svcd gateway: ${err.message}`);
      return 2;
    }
    throw err;
  }
  let running: RunningGateway;
  try {
    running = await startGateway({
      host: cfg.listen.host, port: cfg.listen.port, upstreams: cfg.upstreams, zone: cfg.zone, authenticator,
      limiter: cfg.limits ? new GatewayLimiter(() => Date.now()) : undefined,
      connectionsDefault: cfg.connectionsDefault, requestsPerSub: cfg.requestsPerSub, stallMs: cfg.stallMs, trustedProxies: cfg.trustedProxies, tls,
      ...(cfg.corsAllowedOrigins.length > 0 ? { cors: new CorsPolicy(cfg.corsAllowedOrigins) } : {}),
      health: { log: (line) => console.error(stamped(`svcd gateway: ${line}`)) },
      logError: (msg, err) => console.error(stamped(`svcd gateway: ${msg}${err ? `: ${String(err)}` : ''}`)),
    });
  } catch (err) {
    verifier?.close();
    console.error(`svcd gateway: cannot listen on ${cfg.listen.host}:${cfg.listen.port}: ${(err as Error).message}`);
    return 2;
  }
  // The handlers go in before the listening line: a supervisor (or a test) may signal the moment it
  // reads it, and a SIGTERM that came first killed the gateway by the signal's default.
  const shutdown = (): void => {
    void running.close().then(() => { verifier?.close(); process.exit(0); });
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
  console.log(`svcd gateway listening on ${tls ? 'https' : 'http'}://${cfg.listen.host}:${running.port} upstream ${cfg.upstreams.map((u) => u.origin).join(',')}${cfg.zone ? ` zone ${cfg.zone}` : ''}${authenticator ? ' (edge verification' : ''}${cfg.limits ? ', limits)' : authenticator ? ')' : ''}`);
  return undefined;
}
