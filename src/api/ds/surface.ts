// The Durable Streams protocol on the data bridge: every request under DS_PREFIX comes here (one hook
// in dispatch.ts), whichever HTTP engine carries it. Routes by method, authenticates and authorizes
// as the data plane's verbs would (authorizeDs), on the DS bucket, and answers through the exchange.
// See README: Durable Streams for the mapping onto svcd streams.

import type { StreamService } from '../../core/service-api.ts';
import { authorize, checkFencingPin, type Authenticator, type Principal } from '../../auth/index.ts';
import type { HttpExchange } from '../exchange.ts';
import { HOP_HEADER, asHop, hopOrHere } from '../proxy.ts';
import { ServiceError } from '../../core/errors.ts';
import { dsFailure, dsError, dsNotFound } from './errors.ts';
import { sourceKeyOf } from './fork.ts';
import { DS_METHODS, baseHeaders, preflightHeaders, type HeaderList } from './headers.ts';
import { DS_BODY_BYTES_MAX, DS_LIVE_CONNECTIONS_MAX, DS_PREFIX, DS_STREAM_PATH } from './limits.ts';
import { headStream, liveParam, offsetParam, pumpSse, readCatchUp, readLongPoll, readPage, sseHeaders, startSeq, type Page, type ReadCtx } from './read.ts';
import { DsStates } from './state.ts';
import { appendStream, createStream, deleteStream, liveState, type DsAnswer, type WriteCtx } from './write.ts';

export interface DsDeps {
  svc: StreamService;
  /** The svcd bucket DS streams live in (--ds-bucket). */
  bucket: string;
  /** Absent: auth off, every caller trusted. */
  authenticator?: Authenticator;
  /** How long a long-poll waits before 204 (--ds-long-poll-ms). */
  longPollMs: number;
  /** An event stream whose consumer has not drained for this long is cut (--sse-stall-ms, shared
   *  with /v1's event streams). */
  sseStallMs: number;
  /** 'https' when the bridge serves TLS (for Location). */
  scheme: 'http' | 'https';
  logError(msg: string, err?: unknown): void;
  /** A cluster: sends the request to the stream's leader and relays its answer (proxy.ts forward,
   *  with DS_HOP_HEADERS); resolves with the status relayed. Absent on a star alone. */
  hop?: (ex: HttpExchange, body: Buffer, leader: { star_id: string; bridge_address: string }, base: HeaderList, live: boolean) => Promise<number>;
}

const NO_BODY = Buffer.alloc(0);

const DS_WRITE_METHODS = new Set(['PUT', 'POST', 'DELETE']);
const DS_READ_METHODS = new Set(['GET', 'HEAD']);

/** What a DS request asks of the caller's grants, as the data plane's verbs would (spec, scope
 *  grammar): GET and HEAD read; POST appends; PUT creates the stream (CreateStream), and appends too
 *  when its head says it carries data, and reads the source of a fork; DELETE deletes. The `ds`
 *  bucket a first PUT makes rides on that PUT's grant, as autocreate rides its triggering action. A
 *  credential that pins a fencing token cannot write through DS, which has no way to present one:
 *  POST and PUT write records (an open), so they are refused under a pin. */
function authorizeDs(principal: Principal, method: string, bucket: string, key: string, header: (n: string) => string | undefined): void {
  if (DS_READ_METHODS.has(method)) { authorize(principal, 'Read', { bucket, key }); return; }
  if (method === 'DELETE') { authorize(principal, 'DeleteStream', { bucket, key }); return; }
  if (method === 'PUT') {
    authorize(principal, 'CreateStream', { bucket, key });
    if (mayCarryBody(header)) authorize(principal, 'Append', { bucket, key });
    const from = header('stream-forked-from');
    if (from !== undefined) authorize(principal, 'Read', { bucket, key: sourceKeyOf(from) });
  } else {
    authorize(principal, 'Append', { bucket, key });
  }
  checkFencingPin(principal, 'Append', undefined);
}

/** Whether a request says it has a body (read from its head, so grants are checked before any of it
 *  is taken in; a PUT that says so and sends none asked for no more than it needed). */
function mayCarryBody(header: (n: string) => string | undefined): boolean {
  const length = header('content-length');
  return header('transfer-encoding') !== undefined || (length !== undefined && length.trim() !== '0');
}

export const isDsPath = (path: string): boolean => path === DS_PREFIX || path.startsWith(`${DS_PREFIX}/`);

export class DsSurface {
  readonly states: DsStates;
  private live = 0;
  private stopped = false;
  /** Live reads to tell when the star stops: at most one per live reader (DS_LIVE_CONNECTIONS_MAX),
   *  each taken back when its read ends. */
  private readonly stopWaiters = new Set<() => void>();
  private readonly onStop = (cb: () => void): (() => void) => {
    if (this.stopped) { cb(); return () => {}; }
    this.stopWaiters.add(cb);
    return () => { this.stopWaiters.delete(cb); };
  };

  constructor(private readonly deps: DsDeps) {
    this.states = new DsStates(deps.svc, deps.bucket, () => Date.now());
  }

  handles(path: string): boolean { return isDsPath(path); }

  /** The star is stopping: a long-poll waiting at the tail answers now (204, as at its timeout, so
   *  the client polls again, elsewhere in a cluster) and live event streams end. */
  stop(): void {
    this.stopped = true;
    for (const cb of [...this.stopWaiters]) cb();
    this.stopWaiters.clear();
  }

  /** The svcd key of a DS path: what follows `/ds/v1/stream/`, still percent-encoded. */
  private keyOf(path: string): string {
    const rest = path.startsWith(DS_PREFIX + DS_STREAM_PATH) ? path.slice(DS_PREFIX.length + DS_STREAM_PATH.length) : '';
    if (rest === '' || rest.split('/').some((s) => s === '' || s === '.' || s === '..')) throw dsNotFound('no such DS path');
    return rest;
  }

  /** Answers one request; returns its status (200 for an event stream) for the bridge's metrics. In a
   *  cluster a request for a stream another star leads hops there once (as the data plane's do); a
   *  request that is such a hop is handled here as the stream's home. */
  async handle(ex: HttpExchange): Promise<number> {
    const origin = ex.header('origin');
    const base = baseHeaders(origin);
    const hopped = ex.header(HOP_HEADER) !== undefined;
    let body: Buffer = NO_BODY;
    let key = '';
    let expMs: number | undefined;
    try {
      if (ex.method === 'OPTIONS') { ex.respond(204, preflightHeaders(origin), ''); return 204; }
      key = this.keyOf(ex.path);
      if (!DS_READ_METHODS.has(ex.method) && !DS_WRITE_METHODS.has(ex.method)) throw dsError('method_not_allowed', `${ex.method} is not a DS method`);
      // Authenticated and authorized before the body is read: a caller without the grant never has
      // its body taken in.
      const principal = this.deps.authenticator
        ? await this.deps.authenticator.authenticate(ex.header('authorization'), { clientCertVerified: ex.clientCertVerified })
        : undefined;
      if (principal) authorizeDs(principal, ex.method, this.deps.bucket, key, (n) => ex.header(n));
      if (ex.method === 'PUT' || ex.method === 'POST') {
        const read = ex.readBody(DS_BODY_BYTES_MAX);
        body = read instanceof Promise ? await read : read;
      }
      // The credential's exp is the request's deadline: appends not sequenced by then are refused, and
      // live reads end at it (spec, Claims).
      expMs = principal?.expMs;
      return this.answer(ex, base, hopped ? await asHop(() => this.route(ex, key, base, body, expMs)) : await this.route(ex, key, base, body, expMs));
    } catch (err) {
      let failure = err;
      // Only the request's own stream hops: a not_owner about another (a fork's source, a parent it
      // releases) comes after this request's own writes, and is answered (503: retry) instead.
      const own = err instanceof ServiceError && err.code === 'not_owner' && err.detail.stream?.bucket === this.deps.bucket && err.detail.stream.key === key;
      const leader = own ? err.detail.leader : undefined;
      const hop = this.deps.hop;
      if (leader && hop && !hopped && !ex.aborted) {
        const mode = new URLSearchParams(ex.query).get('live'); // the leader checks it; here it only picks the sockets
        const live = ex.method === 'GET' && (mode === 'long-poll' || mode === 'sse');
        try {
          const r = await hopOrHere(() => hop(ex, body, leader, base, live), () => (ex.aborted ? undefined : this.route(ex, key, base, body, expMs)));
          return 'relayed' in r ? r.relayed : this.answer(ex, base, r.here);
        } catch (hopErr) {
          failure = hopErr;
        }
      }
      const f = dsFailure(failure);
      if (f.error.code === 'internal') this.deps.logError(`bug: unmapped error on DS ${ex.method} ${ex.path}`, failure);
      if (ex.aborted) return f.status;
      const headers: HeaderList = [...base, ['Content-Type', 'application/json'], ...f.headers];
      if (f.error.code === 'method_not_allowed') headers.push(['Allow', DS_METHODS]);
      if (f.status === 503 || f.status === 429) headers.push(['Retry-After', '1']);
      ex.respond(f.status, headers, JSON.stringify(f.error.toBody()));
      return f.status;
    }
  }

  /** Writes a route's answer (an event stream answered as it went); the status, for metrics. */
  private answer(ex: HttpExchange, base: HeaderList, answer: DsAnswer | undefined): number {
    if (answer && !ex.aborted) ex.respond(answer.status, [...base, ...answer.headers], answer.body);
    return answer?.status ?? 200;
  }

  /** Answers the request; undefined when it became an event stream (answered as it goes). */
  private async route(ex: HttpExchange, key: string, base: HeaderList, body: Buffer, expMs: number | undefined): Promise<DsAnswer | undefined> {
    const now = Date.now();
    const { svc } = this.deps;
    if (ex.method === 'PUT' || ex.method === 'POST' || ex.method === 'DELETE') {
      const host = ex.header('host') ?? 'localhost';
      const c: WriteCtx = {
        svc, states: this.states, key, nowMs: now, header: (n) => ex.header(n), body, url: `${this.deps.scheme}://${host}${ex.path}`,
        ...(expMs !== undefined ? { deadlineMs: expMs } : {}),
      };
      if (ex.method === 'PUT') return createStream(c);
      if (ex.method === 'POST') return appendStream(c);
      return deleteStream(c);
    }
    const query = new URLSearchParams(ex.query);
    const st = await liveState(svc, this.states, key, now);
    if (ex.method === 'HEAD') return headStream(st);
    const offset = offsetParam(query);
    const live = liveParam(query);
    const start = startSeq(offset, st);
    st.lastAccessMs = now;
    const c: ReadCtx = { svc, states: this.states, key, st, query, header: (n) => ex.header(n), nowMs: () => Date.now(), longPollMs: this.deps.longPollMs, sseStallMs: this.deps.sseStallMs, onStop: this.onStop, ...(expMs !== undefined ? { expiresAtMs: expMs } : {}) };
    if (live === 'none') return readCatchUp(c, start);
    // A live read waits on the stream's leader (a subscription): in a cluster, lead it (or learn who
    // does: not_owner, and the request hops there) before anything is answered.
    await svc.leadStream(this.deps.bucket, key);
    if (this.live >= DS_LIVE_CONNECTIONS_MAX) throw dsError('unavailable', 'too many live DS readers on this star');
    this.live++;
    if (live === 'long-poll') {
      try {
        return await readLongPoll(c, start);
      } finally {
        this.live--;
      }
    }
    let first: Page;
    try {
      first = await readPage(c, start);
    } catch (err) {
      this.live--;
      throw err;
    }
    const sink = ex.startStream([...base, ...sseHeaders(st)]);
    void pumpSse(c, sink, start, () => { this.live--; }, first);
    return undefined;
  }
}
