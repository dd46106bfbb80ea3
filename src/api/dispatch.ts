// One request through the route table: match, read the body under the route's cap, parse large
// appends on a worker, run the handler, and answer JSON or an event stream. Errors become the spec's
// envelope through the one code → status table.

import {
  BODY_BYTES_IN_FLIGHT_MAX, BODY_BYTES_IN_FLIGHT_PER_TENANT_MAX, SSE_CONNECTIONS_PER_HOST_MAX, SSE_RETRY_AFTER_S, WORKER_PARSE_BYTES_MIN,
} from '../config/limits.ts';
import { ServiceError, asServiceError, invalid } from '../core/errors.ts';
import type { StreamService } from '../core/service-api.ts';
import type { AppendInput } from '../core/types.ts';
import type { ExchangedToken } from '../protocol/resources.ts';
import { TRUSTED_PRINCIPAL, authorize, type Authenticator, type Operation, type Principal } from '../auth/index.ts';
import type { HttpExchange } from './exchange.ts';
import type { CorsPolicy } from './cors.ts';
import { matchRoute, methodsFor, type RequestCtx, type Route, type RouteResult } from './routes.ts';
import { SSE_HEADERS, pumpSse } from './sse.ts';
import { FOLLOW_HEADER, HOP_HEADER, LEADER_HEADER, asHop, hopOrHere, type LeaderProxy } from './proxy.ts';
import { httpStatusOf } from './http-status.ts';

export type OffThreadParser = (body: Buffer) => Promise<AppendInput>;

/** Charges one request's body bytes to the budgets as they arrive (never a declared length). */
export interface BodyMeter {
  /** Bytes just received; false when a budget is spent, and `refusal` says which. */
  charge(bytes: number): boolean;
  readonly refusal: ServiceError | undefined;
}

/** An adapter that reports its body's bytes as they arrive: the bytes already received are charged
 *  at once, every later chunk as it comes; once a charge fails, the body read fails with `refusal`. */
export interface MeteredExchange extends HttpExchange {
  meterBody(meter: BodyMeter): void;
}

const isMetered = (ex: HttpExchange): ex is MeteredExchange => typeof (ex as Partial<MeteredExchange>).meterBody === 'function';

/**
 * Request-body bytes received and not yet handled, star-wide and per tenant. Tenants are tokens'
 * `sub`s; callers the mode trusts whole (auth off, mtls, basic) have the star budget only. A tenant
 * has an entry only while it has bytes in flight, so the map holds at most one entry per request.
 */
class BodyBudget {
  total = 0;
  private readonly tenants = new Map<string, number>();

  constructor(private readonly starBytesMax: number, private readonly tenantBytesMax: number) {}

  open(tenant: string | undefined): BodyAccount { return new BodyAccount(this, tenant); }

  /** Charges `n` bytes, or answers why not. */
  take(tenant: string | undefined, n: number): ServiceError | undefined {
    if (this.total + n > this.starBytesMax) return new ServiceError('resource_exhausted', 'too many request bytes in flight on this star; retry shortly');
    if (tenant !== undefined) {
      const held = this.tenants.get(tenant) ?? 0;
      if (held + n > this.tenantBytesMax) return new ServiceError('resource_exhausted', `too many request bytes in flight for ${tenant}; retry shortly`);
      this.tenants.set(tenant, held + n);
    }
    this.total += n;
    return undefined;
  }

  give(tenant: string | undefined, n: number): void {
    this.total -= n;
    if (tenant === undefined) return;
    const left = (this.tenants.get(tenant) ?? 0) - n;
    if (left > 0) this.tenants.set(tenant, left);
    else this.tenants.delete(tenant);
  }
}

/** One request's share of the budget, handed back whole when the request is done. */
class BodyAccount implements BodyMeter {
  private held = 0;
  private closed = false;
  refusal: ServiceError | undefined;

  constructor(private readonly budget: BodyBudget, private readonly tenant: string | undefined) {}

  charge(bytes: number): boolean {
    // Bytes an adapter still drains after the request was answered belong to no budget.
    if (this.closed) return true;
    if (this.refusal) return false;
    this.refusal = this.budget.take(this.tenant, bytes);
    if (this.refusal) return false;
    this.held += bytes;
    return true;
  }

  close(): void {
    this.closed = true;
    this.budget.give(this.tenant, this.held);
    this.held = 0;
  }
}

/** Whose budget a body is charged to: a token's sub; none for callers the mode trusts whole. */
const tenantOf = (p: Principal): string | undefined => (p.kind === 'token' ? p.sub ?? '' : undefined);

export interface DispatchAuth {
  authenticator: Authenticator;
  /** Present when this star can sign tokens (a symmetric JWT source). */
  exchange?: (body: unknown) => Promise<ExchangedToken>;
}

export interface DispatchDeps {
  svc: StreamService;
  parseOffThread?: OffThreadParser;
  sse?: { heartbeatMs: number; stallMs: number; connectionsMax: number };
  /** Called once per answered request (metrics). */
  observe?: (verb: string, status: number, seconds: number) => void;
  /** Absent: auth off, every caller is trusted. */
  auth?: DispatchAuth;
  /** Body budgets in bytes (defaults BODY_BYTES_IN_FLIGHT_MAX and BODY_BYTES_IN_FLIGHT_PER_TENANT_MAX). */
  bodyBudget?: { starBytes: number; tenantBytes: number };
  /** Browser origins allowed to call (absent: every preflight is denied). */
  cors?: CorsPolicy;
  /** The Durable Streams surface (src/api/ds/): serves every path under /ds when present. */
  ds?: { handles(path: string): boolean; handle(ex: HttpExchange): Promise<number>; stop(): void };
  /** A cluster: requests for streams another star leads hop there (absent: one star, no hops). */
  proxy?: LeaderProxy;
  logError(msg: string, err?: unknown): void;
}

const JSON_HEADERS: [string, string][] = [['Content-Type', 'application/json']];
/** Shared by every request without a query string or body; handlers only read them. */
const EMPTY_QUERY = new URLSearchParams();
const EMPTY_BODY = Buffer.alloc(0);

/** An answer's headers plus the request's CORS headers, if any (the shared arrays stay untouched). */
const withCors = (headers: [string, string][], cors: [string, string][] | undefined): [string, string][] =>
  (cors ? [...headers, ...cors] : headers);

/** The query's parameters; one given twice is ambiguous (which one counts?), so it is a 400. */
function uniqueQuery(raw: string): URLSearchParams {
  const q = new URLSearchParams(raw);
  const seen = new Set<string>();
  for (const k of q.keys()) {
    if (seen.has(k)) throw invalid(`query parameter ${k} is given more than once`);
    seen.add(k);
  }
  return q;
}

/** A route's view of one request (a class, so no closures are made per request). */
class Context implements RequestCtx {
  readonly query: URLSearchParams;

  constructor(
    private readonly ex: HttpExchange,
    readonly params: { bucket: string; key: string },
    readonly body: Buffer,
    readonly principal: Principal,
    readonly exchange: RequestCtx['exchange'],
    readonly vending: RequestCtx['vending'],
    readonly ready: RequestCtx['ready'],
  ) {
    this.query = ex.query === '' ? EMPTY_QUERY : uniqueQuery(ex.query);
  }

  header(name: string): string | undefined { return this.ex.header(name); }
}

export class Dispatcher {
  private sseOpen = 0;
  /** How to end each open event stream (endStreams). */
  private readonly streamEnds = new Set<{ end(): void }>();
  /** Requests being handled now, and who waits for there to be none (a stopping star). */
  private requestsInFlight = 0;
  /** Presigned object URLs this star serves: set once it listens (the URLs name its address). */
  private vending: RequestCtx['vending'];
  private ready: RequestCtx['ready'];
  private idleWaiters: (() => void)[] = [];
  private readonly bodyBudget: BodyBudget;

  constructor(private readonly deps: DispatchDeps) {
    this.bodyBudget = new BodyBudget(deps.bodyBudget?.starBytes ?? BODY_BYTES_IN_FLIGHT_MAX, deps.bodyBudget?.tenantBytes ?? BODY_BYTES_IN_FLIGHT_PER_TENANT_MAX);
  }

  get openStreams(): number { return this.sseOpen; }
  get requestBodyBytesInFlight(): number { return this.bodyBudget.total; }

  /** Serves the presigned object URLs `v` signs (undefined: none, GetObject answers 404). */
  vendObjects(v: RequestCtx['vending']): void { this.vending = v; }
  /** The star's readiness, once it is composed: the bridge's /healthz answers by it. */
  readiness(ready: () => boolean): void { this.ready = ready; }

  /** Whether plain requests need their Origin header read (some origin is allowed). */
  get readsOrigin(): boolean { return this.deps.cors?.enabled ?? false; }

  private observe(verb: string, status: number, t0: number): void {
    this.deps.observe?.(verb, status, (performance.now() - t0) / 1000);
  }

  /** Resolves once no request is being handled (an open event stream does not count: it ends with
   *  the star), or after `waitMsMax`. A stopping star waits here after closing its listeners, so the
   *  requests already on their way are answered rather than cut. */
  whenIdle(waitMsMax: number): Promise<void> {
    if (this.requestsInFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, waitMsMax);
      this.idleWaiters.push(() => { clearTimeout(timer); resolve(); });
    });
  }

  private requestEnded(): void {
    if (--this.requestsInFlight > 0 || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  async handle(ex: HttpExchange): Promise<void> {
    const t0 = ex.startedAt ?? performance.now();
    this.requestsInFlight += 1;
    if (this.deps.ds?.handles(ex.path)) {
      // The DS protocol has its own routes, headers and CORS; its answers are counted as one verb.
      try {
        this.observe('DurableStreams', await this.deps.ds.handle(ex), t0);
      } finally {
        this.requestEnded();
      }
      return;
    }
    let verb = 'Unmatched';
    let account: BodyAccount | undefined;
    let sseSlot = false;
    let cors: [string, string][] | undefined;
    let body: Buffer = EMPTY_BODY;
    let principal: Principal = TRUSTED_PRINCIPAL;
    /** The route's handler and its arguments, once authorized and parsed: run here again when a hop
     *  finds its star down. Kept as values, and made a closure only when one is needed (runnerOf): a
     *  closure per request, with the context its captured variables need, was 250 bytes of garbage on
     *  every append. */
    let readyRoute: Route | undefined;
    let readyCtx: Context | undefined;
    let readyPre: AppendInput | undefined;
    try {
      if (ex.method === 'OPTIONS' && ex.header('origin') !== undefined && ex.header('access-control-request-method') !== undefined) {
        verb = 'Preflight';
        this.preflight(ex);
        this.observe(verb, 204, t0);
        return;
      }
      cors = this.deps.cors?.responseHeaders(ex.header('origin'));
      const m = matchRoute(ex.method, ex.path);
      verb = m.route.verb;
      if (m.route.level !== 'open' && this.deps.auth) {
        // Authenticate and authorize before the address resolves: a denied caller cannot tell a
        // missing stream from a forbidden one.
        principal = await this.deps.auth.authenticator.authenticate(ex.header('authorization'), { clientCertVerified: ex.clientCertVerified });
        if (!m.badSegment) authorize(principal, m.route.verb as Operation, { bucket: m.params.bucket || undefined, key: m.route.level === 'stream' ? m.params.key : undefined });
      }
      if (m.badSegment) throw m.badSegment;
      if (m.route.bodyBytesMax > 0 && isMetered(ex)) {
        // Bodies being read or parsed hold budgets, star-wide and per tenant, charged by the bytes
        // that actually arrived (a declared length costs nothing: a trickling upload holds only what
        // it sent). Past a budget the upload is refused with 429 instead of being buffered.
        account = this.bodyBudget.open(tenantOf(principal));
        ex.meterBody(account);
      }
      if (m.route.bodyBytesMax > 0) refuseContentCoding(ex.header('content-encoding'));
      const read = m.route.bodyBytesMax > 0 ? ex.readBody(m.route.bodyBytesMax) : EMPTY_BODY;
      body = read instanceof Promise ? await read : read;
      if (ex.aborted) return;
      const ctx = new Context(ex, m.params, body, principal, this.deps.auth?.exchange, this.vending, this.ready);
      let pre: AppendInput | undefined;
      if (m.route.parseOffThread && this.deps.parseOffThread && body.length >= WORKER_PARSE_BYTES_MIN) {
        pre = await this.deps.parseOffThread(body);
      }
      m.route.precheck?.(ctx);
      if (m.route.verb === 'Subscribe') {
        // The slot is taken before any await, so concurrent subscribes cannot pass the cap together.
        if (this.sseOpen >= (this.deps.sse?.connectionsMax ?? SSE_CONNECTIONS_PER_HOST_MAX)) {
          throw new ServiceError('sse_at_cap', 'too many event streams on this host');
        }
        this.sseOpen += 1;
        sseSlot = true;
      }
      readyRoute = m.route;
      readyCtx = ctx;
      readyPre = pre;
      const res = ex.header(HOP_HEADER) === undefined ? await m.route.handle(this.deps.svc, ctx, pre) : await asHop(this.runnerOf(m.route, ctx, pre));
      if (this.answer(ex, res, principal, cors)) sseSlot = false; // the stream owns the slot now and frees it when it ends
      this.observe(verb, res.kind === 'sse' ? 200 : res.status, t0);
    } catch (err) {
      // Another star leads the stream: one hop there, unless this request is that hop already (then
      // the lease moved again, and the caller gets 503 with Retry-After to try once more).
      let failure = err;
      const leader = err instanceof ServiceError && err.code === 'not_owner' ? err.detail.leader : undefined;
      if (leader && ex.header(FOLLOW_HEADER) !== undefined && ex.header(HOP_HEADER) === undefined && !ex.aborted) {
        // The Gateway follows the leader itself: it is told where, instead of this star hopping.
        ex.respond(421, [...withCors(JSON_HEADERS, cors), [LEADER_HEADER, leader.bridge_address]], JSON.stringify({ error: 'another star leads this stream', leader: leader.bridge_address }));
        this.observe(verb, 421, t0);
        return;
      }
      const proxy = this.deps.proxy;
      if (leader && proxy && ex.header(HOP_HEADER) === undefined && !ex.aborted) {
        const route = readyRoute;
        const ctx = readyCtx;
        const pre = readyPre;
        try {
          const r = await hopOrHere(
            () => proxy.forward(ex, body, leader, { ...(cors ? { answerHeaders: cors } : {}), live: verb === 'Subscribe' }),
            () => (route && ctx && !ex.aborted ? Promise.resolve(route.handle(this.deps.svc, ctx, pre)) : undefined),
          );
          if ('relayed' in r) {
            this.observe(verb, r.relayed, t0);
          } else {
            if (this.answer(ex, r.here, principal, cors)) sseSlot = false;
            this.observe(verb, r.here.kind === 'sse' ? 200 : r.here.status, t0);
          }
          return;
        } catch (hopErr) {
          failure = hopErr;
        }
      }
      // A client that went away is not answered; its request is neither counted nor logged as a bug.
      if (!ex.aborted) this.observe(verb, this.fail(ex, failure, cors), t0);
    } finally {
      account?.close();
      if (sseSlot) this.sseOpen -= 1;
      this.requestEnded();
    }
  }

  /** A route's handler bound to its request, for asHop. */
  private runnerOf(route: Route, ctx: Context, pre: AppendInput | undefined): () => RouteResult | Promise<RouteResult> {
    return () => route.handle(this.deps.svc, ctx, pre);
  }

  /** Writes a route's result; true when it opened an event stream (which then owns its SSE slot). */
  private answer(ex: HttpExchange, res: RouteResult, principal: Principal, cors: [string, string][] | undefined): boolean {
    if (ex.aborted || (ex.method === 'HEAD' && res.kind === 'sse')) {
      if (res.kind === 'sse') res.subscription.close();
      if (!ex.aborted) ex.respond(200, SSE_HEADERS, ''); // HEAD: the headers a subscribe would send
      return false;
    }
    const jsonHeaders = withCors(JSON_HEADERS, cors);
    if (res.kind === 'sse') {
      this.openStream(ex, res, principal, cors);
      return true;
    }
    // A HEAD gets GET's answer: each engine sends its headers only (node:http with GET's length).
    if (res.kind === 'json') ex.respond(res.status, jsonHeaders, res.text ?? JSON.stringify(res.body));
    else if (res.kind === 'empty') ex.respond(res.status, withCors([], cors), '');
    else ex.respond(res.status, withCors(res.headers, cors), res.body);
    return false;
  }

  /** A CORS preflight: 204 with the allowed methods for an allowed origin, 403 otherwise. */
  private preflight(ex: HttpExchange): void {
    const origin = ex.header('origin') ?? '';
    const methods = methodsFor(ex.path);
    if (!this.deps.cors) throw new ServiceError('permission_denied', `origin ${origin} is not allowed`);
    if (methods.length === 0 && this.deps.cors.allows(origin)) throw new ServiceError('not_found', 'no such path');
    ex.respond(204, this.deps.cors.preflight(origin, ex.header('access-control-request-method') ?? '', methods), '');
  }

  private openStream(ex: HttpExchange, res: Extract<RouteResult, { kind: 'sse' }>, principal: Principal, cors: [string, string][] | undefined): void {
    const sink = ex.startStream(withCors(SSE_HEADERS, cors));
    const stream = { end: (): void => {} };
    this.streamEnds.add(stream);
    stream.end = pumpSse(sink, res.subscription, res.base64, {
      heartbeatMs: this.deps.sse?.heartbeatMs, stallMs: this.deps.sse?.stallMs,
      expiresAtMs: principal.expMs, onEnd: () => { this.sseOpen -= 1; this.streamEnds.delete(stream); },
    });
  }

  /** A stopping star ends every open event stream now, cleanly (spec: Events rule 5, the stream
   *  simply ends; the client reconnects with its cursor), and answers the DS reads waiting at a
   *  tail: none of them would end by itself while the star drains its requests. */
  endStreams(): void {
    for (const stream of [...this.streamEnds]) stream.end();
    this.deps.ds?.stop();
  }

  /** Answers the error envelope; returns the status. */
  private fail(ex: HttpExchange, err: unknown, cors: [string, string][] | undefined): number {
    const e = asServiceError(err);
    if (e.code === 'internal') this.deps.logError(`bug: unmapped error on ${ex.method} ${ex.path}`, err);
    const status = httpStatusOf(e.code);
    if (ex.aborted) return status;
    const headers = [...withCors(JSON_HEADERS, cors)]; // a copy: Allow and Retry-After may be added
    if (e.code === 'method_not_allowed') headers.push(['Allow', (e.detail.allow ?? []).join(', ')]);
    if (e.code === 'unsupported_encoding') headers.push(['Accept-Encoding', 'identity']);
    if (status === 503 || status === 429) headers.push(['Retry-After', String(SSE_RETRY_AFTER_S)]);
    ex.respond(status, headers, JSON.stringify(e.toBody()));
    return status;
  }
}

/** A body in a content coding (Content-Encoding: gzip …) is refused before it is read: it would be
 *  parsed as its compressed bytes (a 400 about UTF-8), or, mislabelled, taken as what it is not. */
function refuseContentCoding(coding: string | undefined): void {
  if (coding === undefined) return;
  const codings = coding.split(',').map((c) => c.trim().toLowerCase()).filter((c) => c !== '' && c !== 'identity');
  if (codings.length > 0) {
    throw new ServiceError('unsupported_encoding', `request bodies are not accepted in Content-Encoding ${codings.join(', ')}; send the body uncompressed`);
  }
}
