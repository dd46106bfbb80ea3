// The Gateway: the internet-facing HTTP tier in front of the stars' data bridges (spec: Deployment
// shape, Gateway hosts; Gateway, bridge and peers). It serves the same route table by forwarding:
//   1. GET /healthz answers 200 itself, outside everything below;
//   2. virtual hosts put the bucket of `{bucket}.{zone}` into the path (hosts.ts);
//   3. edge verification, when armed (`--auth jwt`), checks the bearer early: 401 without a valid
//      token, 403 when no grant covers the route; the star verifies again, authoritatively;
//   4. with `--gateway-limits`, the token's svc_aux.limits rates per sub (limiter.ts);
//   5. a share of the upstream capacity per tenant (capacity.ts): subscriptions on a pool of their
//      own, capped per sub by the token's `connections` or a default; other requests capped per sub
//      in the request pool; 429 past a share, 503 past a pool, never a hang for the others;
//   6. the request goes upstream with the caller's bearer verbatim, bodies and answers streamed both
//      ways (event streams included, paused while a read budget is spent).
// The exchange route is throttled per client address (failed asks), as the star throttles per key id.
// The Gateway mints nothing and holds no cluster credential.

import { createServer, request as httpRequest, Agent, type IncomingMessage, type ServerResponse, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  GATEWAY_CONNECTIONS_PER_SUB_DEFAULT, GATEWAY_REQUESTS_PER_SUB_MAX, GATEWAY_UPSTREAM_HEAD_MS_MAX, GATEWAY_UPSTREAM_QUEUE_MAX,
  GATEWAY_UPSTREAM_SOCKETS_MAX, GATEWAY_UPSTREAM_STREAM_SOCKETS_MAX,
} from '../config/limits.ts';
import { ServiceError, notFound, orInternal } from '../protocol/errors.ts';
import { authorize, EXCHANGE_ADDRESS_THROTTLE, FailureThrottle, type Authenticator, type Operation, type Principal, type TokenLimits } from '../auth/index.ts';
import { matchRoute, type RouteMatch } from '../api/routes.ts';
import { UpstreamPool } from './capacity.ts';
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
  /** Concurrent subscriptions per tenant when its token names no `connections`. */
  connectionsDefault?: number;
  /** Concurrent requests per tenant in the request pool. */
  requestsPerSub?: number;
  /** Peers (a TLS terminator, a load balancer) whose X-Forwarded-For names the client: its last
   *  entry is then the client address that per-address shares and throttles key on. */
  trustedProxies?: ReadonlySet<string>;
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
  const e = orInternal(err);
  if (e.code === 'internal') log('bug: gateway request failed', err);
  const headers: Record<string, string> = e.httpStatus === 429 || e.httpStatus === 503 ? { 'Retry-After': '1' } : {};
  if (e.code === 'method_not_allowed' && e.detail.allow) headers.Allow = e.detail.allow.join(', ');
  answer(res, e.httpStatus, e.toBody(), headers);
}

/** The route a request names, or undefined for unknown paths, wrong methods and bad segments, which
 *  are left for the star to answer. */
function routeOf(method: string, path: string): RouteMatch | undefined {
  try {
    const m = matchRoute(method, path);
    return m.badSegment ? undefined : m;
  } catch {
    return undefined;
  }
}

/** An address as one spelling: IPv4 peers of a dual-stack listener arrive as ::ffff:a.b.c.d. */
export function normalizeAddress(address: string): string {
  const a = address.trim().toLowerCase();
  return a.startsWith('::ffff:') && a.includes('.') ? a.slice('::ffff:'.length) : a;
}

/**
 * The client's address: the TCP peer, unless the peer is a trusted proxy, whose X-Forwarded-For
 * then names the client in its last entry (each proxy appends the peer it saw; entries further left
 * were written by whoever sent the request and prove nothing).
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | string[] | undefined, trusted: ReadonlySet<string>): string {
  const from = normalizeAddress(peer ?? 'unknown');
  if (!trusted.has(from) || forwardedFor === undefined) return from;
  const entries = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',').map((e) => e.trim()).filter((e) => e !== '');
  const last = entries[entries.length - 1];
  return last === undefined ? from : normalizeAddress(last);
}

/** Edge authorization: 403 when no grant covers a route the table knows. */
function authorizeEarly(principal: Principal, m: RouteMatch | undefined): void {
  if (m === undefined) return;
  authorize(principal, m.route.verb as Operation, { bucket: m.params.bucket || undefined, key: m.route.level === 'stream' ? m.params.key : undefined });
}

/** What forward() does beyond moving bytes. */
interface ForwardHooks {
  /** Answers how long to pause an answer after `bytes` were served (read_Bps); 0 goes on. */
  served(bytes: number): number;
  /** For a body that declared no length: whether `bytes` more may go (write_Bps); false refuses it. */
  meterBody?: (bytes: number) => boolean;
  /** The upstream's status, once known. */
  onStatus?: (status: number) => void;
}

export async function startGateway(o: GatewayOptions): Promise<RunningGateway> {
  const https = o.upstream.protocol === 'https:';
  const makeAgent = (sockets: number): Agent => {
    const options = { keepAlive: true, maxSockets: sockets, maxFreeSockets: Math.min(sockets, GATEWAY_UPSTREAM_SOCKETS_MAX) };
    return https ? new HttpsAgent(options) : new Agent(options);
  };
  // Two pools: an event stream holds its socket for as long as it lives, so subscriptions get
  // sockets of their own and can never leave a short request waiting behind them.
  const requestAgent = makeAgent(GATEWAY_UPSTREAM_SOCKETS_MAX);
  const streamAgent = makeAgent(GATEWAY_UPSTREAM_STREAM_SOCKETS_MAX);
  const requests = new UpstreamPool({ socketsMax: GATEWAY_UPSTREAM_SOCKETS_MAX, queueMax: GATEWAY_UPSTREAM_QUEUE_MAX, what: 'requests' });
  const streams = new UpstreamPool({ socketsMax: GATEWAY_UPSTREAM_STREAM_SOCKETS_MAX, queueMax: 0, what: 'subscriptions' });
  const connectionsDefault = o.connectionsDefault ?? GATEWAY_CONNECTIONS_PER_SUB_DEFAULT;
  const requestsPerSub = o.requestsPerSub ?? GATEWAY_REQUESTS_PER_SUB_MAX;
  const exchangeThrottle = new FailureThrottle(EXCHANGE_ADDRESS_THROTTLE);
  const trustedProxies = new Set([...(o.trustedProxies ?? [])].map(normalizeAddress));
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
    const route = routeOf(method, path);
    const address = clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], trustedProxies);
    const isExchange = route?.route.verb === 'ExchangeToken';
    // The exchange is the one route a guesser can use unauthenticated: refused while this address
    // has spent its failed asks (counted below from the star's 401s).
    if (isExchange) exchangeThrottle.check(address);

    let principal: Principal | undefined;
    // CORS preflights carry no credentials by design: the star answers them (and denies unknown origins).
    if (o.authenticator && !isExchange && path !== EXCHANGE_PATH && method !== 'OPTIONS') {
      const auth = req.headersDistinct.authorization;
      principal = await o.authenticator.authenticate(auth === undefined ? undefined : auth.join(', '));
      authorizeEarly(principal, route);
    }

    // A verified token's sub is the tenant; without one (no edge verification, the exchange, a
    // preflight) the client's address is: an unverified sub would let anyone take anyone's share.
    const token = principal?.kind === 'token' ? principal : undefined;
    const tenant = token !== undefined ? `sub ${token.sub ?? ''}` : `address ${address}`;
    const limits: TokenLimits | undefined = token?.aux.limits;
    const sub = token?.sub ?? '';
    const declaredHeader = req.headers['content-length'];
    const enforce = o.limiter !== undefined && limits !== undefined ? { limiter: o.limiter, limits } : undefined;
    if (enforce) enforce.limiter.admit(sub, enforce.limits, Number(declaredHeader ?? 0) || 0);

    const subscribe = method === 'GET' && route?.route.verb === 'Subscribe';
    const release = subscribe
      ? streams.acquire(tenant, limits?.connections ? limits.connections : connectionsDefault)
      : requests.acquire(tenant, requestsPerSub);
    const hooks: ForwardHooks = {
      served: (bytes) => (enforce ? enforce.limiter.served(sub, enforce.limits, bytes) : 0),
      // A declared length was charged whole by admit(); a body without one is charged as it arrives.
      ...(enforce?.limits.write_Bps && declaredHeader === undefined
        ? { meterBody: (bytes: number) => enforce.limiter.chargeWrite(sub, enforce.limits, bytes) }
        : {}),
      ...(isExchange ? { onStatus: (status: number) => { if (status === 401) exchangeThrottle.failed(address); } } : {}),
    };
    await forward(req, res, subscribe ? streamAgent : requestAgent, method, path + query, hooks).finally(release);
  }

  /** Streams the request upstream and the answer back; resolves when the exchange is over. */
  function forward(req: IncomingMessage, res: ServerResponse, agent: Agent, method: string, target: string, hooks: ForwardHooks): Promise<void> {
    return new Promise<void>((resolve) => {
      const up = send({
        agent, protocol: o.upstream.protocol, hostname: o.upstream.hostname, port: o.upstream.port, method, path: target,
        headers: forwardedHeaders(req, o.upstream.host),
      });
      const headTimer = setTimeout(() => up.destroy(new Error('upstream did not answer in time')), GATEWAY_UPSTREAM_HEAD_MS_MAX);
      let refused = false;
      const done = (): void => { clearTimeout(headTimer); resolve(); };
      up.on('error', (err) => {
        if (refused) { done(); return; }
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
        if (refused) { upRes.resume(); return; }
        hooks.onStatus?.(upRes.statusCode ?? 0);
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
          const waitMs = hooks.served(chunk.length);
          if (waitMs > 0) { hold(); setTimeout(unhold, waitMs); }
        });
        upRes.on('end', () => res.end());
        upRes.on('error', () => res.destroy());
      });
      // The body goes up as it arrives, with backpressure both ways. A body past its write budget
      // is refused: the upstream request is torn down before its end, so the star never sees a
      // whole body and appends nothing, and the caller is told 429 on a closing connection.
      req.on('data', (chunk: Buffer) => {
        if (refused) return;
        if (hooks.meterBody && !hooks.meterBody(chunk.length)) {
          refused = true;
          up.destroy();
          res.shouldKeepAlive = false;
          fail(res, new ServiceError('resource_exhausted', 'write_Bps ceiling: the body outgrew the write budget; retry shortly'), o.logError);
          return;
        }
        if (!up.write(chunk)) {
          req.pause();
          up.once('drain', () => req.resume());
        }
      });
      req.on('end', () => { if (!refused) up.end(); });
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
      requestAgent.destroy();
      streamAgent.destroy();
    },
  };
}
