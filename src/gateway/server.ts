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
//   6. the request goes to one of several stars with the caller's bearer verbatim, bodies and answers
//      streamed both ways (event streams included, paused while a read budget is spent); a star that
//      refuses connections is skipped, and a star that names another leader (421) is followed once
//      (forward.ts, upstreams.ts). Each star is also probed (GET /healthz) in the background, and one
//      that fails its probe is tried last until it passes again (health.ts).
// The listener is HTTPS when given a certificate and key (`--tls-cert`, `--tls-key`), plain HTTP
// otherwise (behind a TLS terminator).
// The exchange route is throttled per client address (failed asks), as the star throttles per key id.
// The Gateway mints nothing and holds no cluster credential.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import {
  APPEND_BODY_BYTES_MAX, GATEWAY_CLOSE_WAIT_MS_MAX, GATEWAY_CONNECTIONS_PER_SUB_DEFAULT, GATEWAY_REQUESTS_PER_SUB_MAX, GATEWAY_UPSTREAM_QUEUE_MAX,
  GATEWAY_UPSTREAM_SOCKETS_MAX, GATEWAY_UPSTREAM_STREAM_SOCKETS_MAX, SSE_STALL_MS,
} from '../config/limits.ts';
import { notFound, ServiceError } from '../protocol/errors.ts';
import { HEAD_BOUNDS, refuseBadHeads, refusedHead } from '../../native-free/head-refusal.ts';
import { authorize, EXCHANGE_ADDRESS_THROTTLE, FailureThrottle, type Authenticator, type Operation, type Principal, type TokenLimits } from '../auth/index.ts';
import { matchRoute, methodsFor, type RouteMatch } from '../api/routes.ts';
import type { CorsPolicy } from '../api/cors.ts';
import { UpstreamPool } from './capacity.ts';
import { Forwarder } from './forward.ts';
import type { ForwardHooks } from './relay.ts';
import { answer, fail } from './reply.ts';
import { Upstreams } from './upstreams.ts';
import { HealthProbes, type HealthOptions } from './health.ts';
import { routeHost } from './hosts.ts';
import type { ChunkedBody, GatewayLimiter } from './limiter.ts';

export interface GatewayOptions {
  host: string;
  port: number;
  /** The stars' data bridges, http(s)://host:port: any star of the cluster serves any request. */
  upstreams: readonly URL[];
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
  /** A caller that takes nothing of an answer for this long is disconnected (default SSE_STALL_MS). */
  stallMs?: number;
  /** Peers (a TLS terminator, a load balancer) whose X-Forwarded-For names the client: its last
   *  entry is then the client address that per-address shares and throttles key on. */
  trustedProxies?: ReadonlySet<string>;
  /** The Gateway's own CORS policy for the data plane (/v1): it answers preflights and sets the CORS
   *  headers of every answer, the stars' replaced. Absent: preflights and CORS headers are the stars'. */
  cors?: CorsPolicy;
  /** Serve HTTPS with this certificate chain and key (PEM), read by the caller; absent: plain HTTP. */
  tls?: { cert: Buffer; key: Buffer };
  /** Upstream health probes: period and timeout (defaults: GATEWAY_HEALTH_*_MS) and where a star's
   *  change of verdict is logged. */
  health?: HealthOptions;
  logError(msg: string, err?: unknown): void;
}

export interface RunningGateway {
  port: number;
  close(): Promise<void>;
}

/** The one route the auth middleware exempts (spec: Api-key exchange). */
const EXCHANGE_PATH = '/v1/token/exchange';

/** The route a request names; none for a bad segment (left for the star to answer after the
 *  credential, as it does), and none with the answer (404, 405 with Allow) for an unknown path or a
 *  method the path does not take. */
function routeOf(method: string, path: string): { route?: RouteMatch; refused?: unknown } {
  try {
    const m = matchRoute(method, path);
    return m.badSegment ? {} : { route: m };
  } catch (err) {
    return { refused: err };
  }
}

/** A request target as origin-form (path and query), with the authority of an absolute-form target
 *  (RFC 9112 3.2.2: it replaces Host); undefined for a target that names no path (`*`). */
export function originForm(target: string): { url: string; authority?: string } | undefined {
  if (target.startsWith('/')) return { url: target };
  const abs = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/.exec(target);
  if (!abs) return undefined;
  const rest = target.slice(abs[0].length);
  return { url: rest.startsWith('/') ? rest : `/${rest}`, authority: abs[1] };
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

/** The Gateway's CORS policy covers the data plane's routes (/v1); the Durable Streams surface keeps
 *  its own CORS rules (src/api/ds/), and /healthz is outside the middleware stack. */
const isDataPlanePath = (target: string): boolean => target.startsWith('/v1/');

/** A CORS preflight under the Gateway's policy: 204 with the path's methods, 403 for an origin or
 *  method it does not allow, 404 for an allowed origin asking about a path no route serves. */
function preflight(cors: CorsPolicy, req: IncomingMessage, res: ServerResponse, path: string): void {
  const origin = req.headers.origin ?? '';
  const methods = methodsFor(path);
  if (methods.length === 0 && cors.allows(origin)) throw notFound('no such path');
  const headers = cors.preflight(origin, String(req.headers['access-control-request-method']), methods);
  res.writeHead(204, Object.fromEntries(headers));
  res.end();
}

export async function startGateway(o: GatewayOptions): Promise<RunningGateway> {
  const upstreams = new Upstreams(o.upstreams);
  const forwarder = new Forwarder(upstreams, o.logError, o.stallMs ?? SSE_STALL_MS);
  const requests = new UpstreamPool({ socketsMax: GATEWAY_UPSTREAM_SOCKETS_MAX, queueMax: GATEWAY_UPSTREAM_QUEUE_MAX, what: 'requests' });
  const streams = new UpstreamPool({ socketsMax: GATEWAY_UPSTREAM_STREAM_SOCKETS_MAX, queueMax: 0, what: 'subscriptions' });
  const connectionsDefault = o.connectionsDefault ?? GATEWAY_CONNECTIONS_PER_SUB_DEFAULT;
  const requestsPerSub = o.requestsPerSub ?? GATEWAY_REQUESTS_PER_SUB_MAX;
  const exchangeThrottle = new FailureThrottle(EXCHANGE_ADDRESS_THROTTLE);
  const trustedProxies = new Set([...(o.trustedProxies ?? [])].map(normalizeAddress));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // The Gateway answers every head a star's uWS bridge would drop unanswered (RFC 9112 absolute-form
    // targets, `*`, too many fields, a body past any route's), rather than forward it to each star in
    // turn and answer 503 for what can never succeed.
    const target = originForm(req.url ?? '/');
    if (target === undefined) throw notFound(`the request target ${JSON.stringify((req.url ?? '').slice(0, 64))} names no path`);
    const url = target.url;
    const q = url.indexOf('?');
    const rawPath = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? '' : url.slice(q);
    const method = (req.method ?? 'GET').toUpperCase();
    if (rawPath === '/healthz') {
      if (method === 'GET' || method === 'HEAD') answer(res, 200, { status: 'ok' });
      else answer(res, 405, { error: 'GET /healthz' }, { Allow: 'GET, HEAD' });
      return;
    }
    const routed = routeHost(o.zone, target.authority ?? req.headers.host, rawPath);
    if (routed.kind === 'not-found') throw notFound(routed.why);
    const path = routed.path;
    const ownCors = o.cors !== undefined && isDataPlanePath(path);
    const preflightAsked = method === 'OPTIONS' && req.headers.origin !== undefined && req.headers['access-control-request-method'] !== undefined;
    if (ownCors && preflightAsked) {
      preflight(o.cors!, req, res, path);
      return;
    }
    const { route, refused } = routeOf(method, path);
    // An unknown path or a method the path does not take is 404 or 405 before any credential is
    // looked at, as the star answers it: one route table on both surfaces. Answered here, never
    // forwarded: a method outside the few a uWS star's parser knows would be dropped there unanswered
    // and come back as a retryable 503. Not a CORS preflight the Gateway does not answer itself (the
    // star does), nor /ds, which is not in the route table (its surface answers its own methods).
    if (refused !== undefined && !rawPath.startsWith('/ds/') && !preflightAsked) throw refused;
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
    // A route that reads a body is held to its cap; any other (the star ignores or drains what it
    // is sent) to the largest any route takes, past which a uWS star hangs up unanswered.
    const bodyMax = route && route.route.bodyBytesMax > 0 ? route.route.bodyBytesMax : APPEND_BODY_BYTES_MAX;
    if (Number(declaredHeader ?? 0) > bodyMax) throw new ServiceError('payload_too_large', `request body is over the ${bodyMax}-byte limit`);
    const enforce = o.limiter !== undefined && limits !== undefined ? { limiter: o.limiter, limits } : undefined;
    if (enforce) enforce.limiter.admit(sub, enforce.limits, Number(declaredHeader ?? 0) || 0);

    const subscribe = method === 'GET' && route?.route.verb === 'Subscribe';
    const release = subscribe
      ? streams.acquire(tenant, limits?.connections ? limits.connections : connectionsDefault)
      : requests.acquire(tenant, requestsPerSub);
    // A declared length was charged whole by admit(); a body without one is charged as it arrives.
    let held: ChunkedBody | undefined;
    const meterBody = (bytes: number): boolean => (held = enforce!.limiter.chargeWrite(sub, enforce!.limits, bytes, held)) !== undefined;
    const hooks: ForwardHooks = {
      served: (bytes) => (enforce ? enforce.limiter.served(sub, enforce.limits, bytes) : 0),
      // A paced event stream ends at the token's exp, not once its read debt is repaid (forward.ts).
      ...(enforce?.limits.read_Bps && token?.expMs !== undefined ? { expiresAtMs: token.expMs } : {}),
      // A paced event stream goes out in whole frames and resumes from its last when the star cuts it.
      ...(enforce?.limits.read_Bps ? { paced: true } : {}),
      ...(enforce?.limits.write_Bps && declaredHeader === undefined ? { meterBody } : {}),
      ...(isExchange ? { onStatus: (status: number) => { if (status === 401) exchangeThrottle.failed(address); } } : {}),
    };
    const stream = route?.route.level === 'stream' ? `${route.params.bucket}/${route.params.key}` : undefined;
    await forwarder.forward({ req, res, method, target: path + query, subscribe, stream, hooks, ownCors }).finally(release);
  }

  /** Each connection's exchange under way, settled when its answer is over (its `close`). */
  const inFlight = new WeakMap<Socket, Promise<void>>();
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    if (refusedHead(req)) return;
    // The Gateway's CORS headers go on every answer it gives (its 401, 403, 429 and 404 included, or
    // a browser could not read them); the stars' are dropped from what is relayed (forward.ts).
    if (o.cors && isDataPlanePath(originForm(req.url ?? '/')?.url ?? '')) {
      for (const [k, v] of o.cors.responseHeaders(req.headers.origin) ?? []) res.setHeader(k, v);
    }
    // A request pipelined behind one still being answered waits for that answer: node:http hands it
    // over at once, and a read forwarded while the append ahead of it was under way answered the
    // tail from before that append (HTTP/1.1 answers in order, so the caller expects them done so).
    const socket = req.socket;
    const ahead = inFlight.get(socket);
    const done = new Promise<void>((resolve) => res.once('close', () => {
      if (inFlight.get(socket) === done) inFlight.delete(socket);
      resolve();
    }));
    inFlight.set(socket, done);
    const run = (): void => { handle(req, res).catch((err: unknown) => fail(res, err, o.logError)); };
    if (ahead) void ahead.then(run);
    else run();
  };
  // node:https's Server is node:http's over TLS sockets: the same handler, timeouts and close. Heads
  // are bounded as on the node engine's bridge, and every refused one gets the envelope.
  const server: Server = o.tls ? createTlsServer({ ...HEAD_BOUNDS, cert: o.tls.cert, key: o.tls.key }, onRequest) : createServer(HEAD_BOUNDS, onRequest);
  refuseBadHeads(server);
  // Every socket, from its accept: closeAllConnections knows only those that became HTTP connections
  // (over TLS, those whose handshake finished), and close() waits for all of them.
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: o.host, port: o.port, exclusive: true }, () => resolve());
  });
  const health = new HealthProbes(upstreams, { ...o.health, onWedged: (url, sinceMs, silent) => forwarder.abandon(url, sinceMs, silent) });
  health.start();
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      health.close();
      server.closeAllConnections();
      const closed = new Promise<void>((r) => server.close(() => r()));
      let bound: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((r) => { bound = setTimeout(r, GATEWAY_CLOSE_WAIT_MS_MAX); });
      await Promise.race([closed, waited]);
      clearTimeout(bound);
      for (const s of sockets) s.destroy();
      await closed;
      forwarder.close();
    },
  };
}
