// The Gateway: the internet-facing HTTP tier in front of the stars' data bridges (spec: Deployment
// shape, Gateway hosts; Gateway, bridge and peers). It serves the same route table by forwarding:
//   1. GET /healthz answers 200 itself, outside everything below;
//   2. virtual hosts put the bucket of `{bucket}.{zone}` into the path (hosts.ts);
//   3. edge verification, when armed (`--auth jwt`), checks the bearer early: 401 without a valid
//      token, 403 when no grant covers the route; the star verifies again, authoritatively;
//   4. with `--gateway-limits`, the token's svc_aux.limits ceilings per sub (limiter.ts);
//   5. the request goes upstream with the caller's bearer verbatim, bodies and answers streamed both
//      ways (event streams included, paused while a read budget is spent).
// The Gateway mints nothing and holds no cluster credential.

import { createServer, request as httpRequest, Agent, type IncomingMessage, type ServerResponse, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { GATEWAY_UPSTREAM_HEAD_MS_MAX, GATEWAY_UPSTREAM_SOCKETS_MAX } from '../config/limits.ts';
import { ServiceError, asServiceError, notFound } from '../core/errors.ts';
import { authorize, type Authenticator, type Operation, type Principal } from '../auth/index.ts';
import { matchRoute } from '../api/routes.ts';
import { routeHost } from './hosts.ts';
import type { GatewayLimiter } from './limiter.ts';

export interface GatewayOptions {
  host: string;
  port: number;
  /** A star's data bridge, http(s)://host:port. */
  upstream: URL;
  /** The DNS zone of bucket hosts; '' serves path-style only. */
  zone: string;
  /** Edge verification (undefined: requests go upstream unverified, and the star decides). */
  authenticator?: Authenticator;
  /** svc_aux.limits enforcement (needs the authenticator). */
  limiter?: GatewayLimiter;
  logError(msg: string, err?: unknown): void;
}

export interface RunningGateway {
  port: number;
  close(): Promise<void>;
}

/** The one route the auth middleware exempts (spec: Api-key exchange). */
const EXCHANGE_PATH = '/v1/token/exchange';

/** Headers that describe one hop's connection and are never forwarded. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host']);

function forwardedHeaders(req: IncomingMessage, upstreamHost: string): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(req.headersDistinct)) {
    if (value === undefined || HOP_HEADERS.has(name)) continue;
    out[name] = value.length === 1 ? value[0] : value;
  }
  out.host = upstreamHost;
  const peer = req.socket.remoteAddress ?? '';
  const prior = req.headers['x-forwarded-for'];
  out['x-forwarded-for'] = prior ? `${String(prior)}, ${peer}` : peer;
  if (req.headers.host) out['x-forwarded-host'] = req.headers.host;
  out['x-forwarded-proto'] = 'http';
  return out;
}

function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

function fail(res: ServerResponse, err: unknown, log: GatewayOptions['logError']): void {
  const e = asServiceError(err);
  if (e.code === 'internal') log('bug: gateway request failed', err);
  const headers: Record<string, string> = e.httpStatus === 429 || e.httpStatus === 503 ? { 'Retry-After': '1' } : {};
  if (e.code === 'method_not_allowed' && e.detail.allow) headers.Allow = e.detail.allow.join(', ');
  answer(res, e.httpStatus, e.toBody(), headers);
}

/** Edge authorization: 403 when no grant covers a route the table knows; unknown paths, wrong
 *  methods and bad segments are left for the star to answer. */
function authorizeEarly(principal: Principal, method: string, path: string): void {
  let m: ReturnType<typeof matchRoute>;
  try {
    m = matchRoute(method, path);
  } catch {
    return;
  }
  if (m.badSegment) return;
  authorize(principal, m.route.verb as Operation, { bucket: m.params.bucket || undefined, key: m.route.level === 'stream' ? m.params.key : undefined });
}

export async function startGateway(o: GatewayOptions): Promise<RunningGateway> {
  const https = o.upstream.protocol === 'https:';
  const agentOptions = { keepAlive: true, maxSockets: GATEWAY_UPSTREAM_SOCKETS_MAX, maxFreeSockets: GATEWAY_UPSTREAM_SOCKETS_MAX };
  const agent = https ? new HttpsAgent(agentOptions) : new Agent(agentOptions);
  const send = https ? httpsRequest : httpRequest;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const rawPath = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? '' : url.slice(q);
    const method = (req.method ?? 'GET').toUpperCase();
    if (rawPath === '/healthz') {
      if (method === 'GET' || method === 'HEAD') answer(res, 200, { status: 'ok' });
      else answer(res, 405, { error: 'GET /healthz' }, { Allow: 'GET, HEAD' });
      return;
    }
    const routed = routeHost(o.zone, req.headers.host, rawPath);
    if (routed.kind === 'not-found') throw notFound(routed.why);
    const path = routed.path;

    let principal: Principal | undefined;
    // CORS preflights carry no credentials by design: the star answers them (and denies unknown origins).
    if (o.authenticator && path !== EXCHANGE_PATH && method !== 'OPTIONS') {
      const auth = req.headersDistinct.authorization;
      principal = await o.authenticator.authenticate(auth === undefined ? undefined : auth.join(', '));
      authorizeEarly(principal, method, path);
    }

    let releaseSubscription: (() => void) | undefined;
    const limits = principal?.kind === 'token' ? principal.aux.limits : undefined;
    const sub = principal?.sub ?? '';
    if (o.limiter && limits) {
      const declared = Number(req.headers['content-length'] ?? 0) || 0;
      o.limiter.admit(sub, limits, declared);
      if (method === 'GET' && path.endsWith('/records/subscribe')) releaseSubscription = o.limiter.openSubscription(sub, limits);
    }
    await forward(req, res, method, path + query, (bytes) => (o.limiter && limits ? o.limiter.served(sub, limits, bytes) : 0))
      .finally(() => releaseSubscription?.());
  }

  /** Streams the request upstream and the answer back; resolves when the exchange is over. */
  function forward(req: IncomingMessage, res: ServerResponse, method: string, target: string, served: (bytes: number) => number): Promise<void> {
    return new Promise<void>((resolve) => {
      const up = send({
        agent, protocol: o.upstream.protocol, hostname: o.upstream.hostname, port: o.upstream.port, method, path: target,
        headers: forwardedHeaders(req, o.upstream.host),
      });
      const headTimer = setTimeout(() => up.destroy(new Error('upstream did not answer in time')), GATEWAY_UPSTREAM_HEAD_MS_MAX);
      const done = (): void => { clearTimeout(headTimer); resolve(); };
      up.on('error', (err) => {
        if (!res.headersSent) fail(res, new ServiceError('unavailable', `the star did not answer (${err.message}); retry shortly`), o.logError);
        else res.destroy();
        done();
      });
      // A caller that goes away takes the upstream exchange with it.
      res.on('close', () => {
        if (!res.writableFinished) up.destroy();
        done();
      });
      up.on('response', (upRes) => {
        clearTimeout(headTimer);
        const headers: OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(upRes.headersDistinct)) {
          if (value !== undefined && !HOP_HEADERS.has(name)) headers[name] = value.length === 1 ? value[0] : value;
        }
        res.writeHead(upRes.statusCode ?? 502, headers);
        // Paused while the caller's socket is full or its read budget is spent; resumed when both clear.
        let holds = 0;
        const hold = (): void => { if (holds++ === 0) upRes.pause(); };
        const unhold = (): void => { if (--holds === 0 && !res.destroyed) upRes.resume(); };
        upRes.on('data', (chunk: Buffer) => {
          if (!res.write(chunk)) { hold(); res.once('drain', unhold); }
          const waitMs = served(chunk.length);
          if (waitMs > 0) { hold(); setTimeout(unhold, waitMs); }
        });
        upRes.on('end', () => res.end());
        upRes.on('error', () => res.destroy());
      });
      req.pipe(up);
    });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => fail(res, err, o.logError));
  });
  server.requestTimeout = 0; // event streams are long-lived; the stars bound stalled consumers
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: o.host, port: o.port, exclusive: true }, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      agent.destroy();
    },
  };
}
