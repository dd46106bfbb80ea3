// One request through the Gateway to the stars (spec: Deployment shape, "The Gateway follows redirects
// itself"; Errors, "NOT_OWNER never reaches an HTTP caller"):
//   1. it goes to the first star of upstreams.order(), with `svcd-follow-leader: 1`, so a star that
//      does not lead the stream answers 421 with the leader's bridge in `svcd-leader` instead of
//      hopping there itself;
//   2. a star that refuses the connection is marked down and the next one is tried; so is any star
//      for a GET/HEAD/OPTIONS that failed before its answer began (safe to repeat). Any other failure
//      (a POST that may have reached the star) is 503 with Retry-After: the caller decides;
//   3. on a 421 the same request (method, path and query, headers with the caller's Authorization
//      verbatim, the same body bytes) goes once to the leader it names, which need not be in the
//      upstream list. A second 421 means the lease moved again while the request was on its way: 503
//      with Retry-After: 1. The caller never sees a 421;
//   4. the answer streams back (event streams included), paused while the caller's socket is full or
//      its read budget (read_Bps) is spent; an event stream paced by that budget goes out in whole
//      frames, and when the star's side ends under it (the star's stall bound cannot tell the
//      budget's pause from a consumer that stopped reading) it is subscribed again from its last
//      frame, so the caller's stream pauses rather than drops (relay.ts);
//   5. a star taken for wedged by its health probes (health.ts) has what waits on it given up, and
//      the event streams relayed from it that went silent end, so their callers resume elsewhere.

import { request as httpRequest, Agent, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { FOLLOW_HEADER, LEADER_HEADER, SAFE_METHODS, noAnswerText } from '../api/proxy.ts';
import {
  GATEWAY_RESEND_BYTES_TOTAL_MAX, GATEWAY_UPSTREAM_HEAD_MS_MAX, GATEWAY_UPSTREAM_SOCKETS_MAX, GATEWAY_UPSTREAM_STREAM_SOCKETS_MAX,
} from '../config/limits.ts';
import { ServiceError } from '../protocol/errors.ts';
import { RequestBody, ResendBudget } from './body.ts';
import { fail, type LogError } from './reply.ts';
import { leaderUrl, type Upstreams } from './upstreams.ts';
import { CLUSTER_HEADERS, HOP_HEADERS } from './hop-headers.ts';
import { Relay, type ForwardHooks } from './relay.ts';

export interface ForwardRequest {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  /** Path and query as they go upstream. */
  target: string;
  /** An event stream: its sockets come from a pool of their own. */
  subscribe: boolean;
  /** The stream's `bucket/key`, when the route names one (it picks the first star). */
  stream?: string;
  hooks: ForwardHooks;
  /** The Gateway sets CORS headers itself: the star's are not relayed. */
  ownCors?: boolean;
}

/** Failures of the connect itself: the star never saw a byte, so any request may go to the next. */
const CONNECT_ERRORS = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** The misdirected answer a star gives a caller that follows the leader itself. */
const MISDIRECTED = 421;

type Outcome =
  | { kind: 'answered' }
  | { kind: 'misdirected'; from: URL; leader: string | undefined }
  | { kind: 'failed'; err: Error; connectFailed: boolean; resendable: boolean };

function forwardedHeaders(req: IncomingMessage): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(req.headersDistinct)) {
    if (value === undefined || HOP_HEADERS.has(name) || CLUSTER_HEADERS.has(name)) continue;
    out[name] = value.length === 1 ? value[0] : value;
  }
  const peer = req.socket.remoteAddress ?? '';
  const prior = req.headers['x-forwarded-for'];
  out['x-forwarded-for'] = prior ? `${String(prior)}, ${peer}` : peer;
  if (req.headers.host) out['x-forwarded-host'] = req.headers.host;
  // The scheme the caller used to reach the Gateway (its listener is HTTPS under --tls-cert).
  out['x-forwarded-proto'] = (req.socket as Partial<TLSSocket>).encrypted === true ? 'https' : 'http';
  out[FOLLOW_HEADER] = '1';
  return out;
}

interface Agents { request: Agent; stream: Agent }

/** What an attempt sends as the request's body (RequestBody: the caller's, kept to send again). */
type OutgoingBody = Pick<RequestBody, 'refused' | 'resendable' | 'sendTo' | 'detach' | 'release'>;

/** A resumed subscription's request: a GET without a body. */
const NO_BODY: OutgoingBody = {
  refused: false,
  resendable: true,
  sendTo: (up) => { up.end(); return true; },
  detach: () => undefined,
  release: () => undefined,
};

/** An attempt still waiting for its answer's head, and how to give it up. */
interface Waiting { sentAtMs: number; abandon(): void }

export class Forwarder {
  private readonly agents = new Map<string, Agents>();
  private readonly budget = new ResendBudget(GATEWAY_RESEND_BYTES_TOTAL_MAX);
  /** Attempts waiting for a head, by star origin (abandon() gives up those of a wedged star). */
  private readonly waiting = new Map<string, Set<Waiting>>();
  /** Event streams being relayed, by star origin: abandon() gives up those silent since its probes
   *  began to fail. Each returns true once given up. */
  private readonly streaming = new Map<string, Set<(sinceMs: number) => boolean>>();

  /** `stallMs`: a caller that takes nothing of an answer for this long is disconnected (relay). */
  constructor(private readonly upstreams: Upstreams, private readonly logError: LogError, private readonly stallMs: number) {}

  /** Forwards one request; resolves when the exchange with the caller is over. */
  async forward(f: ForwardRequest): Promise<void> {
    const { res } = f;
    let current: ClientRequest | undefined;
    let closed = false;
    const over = new Promise<void>((resolve) => {
      // A caller that left while its request was verified or queued has nothing to forward for.
      if (res.destroyed) { closed = true; resolve(); return; }
      // A caller that goes away takes the upstream exchange with it.
      res.on('close', () => {
        closed = true;
        if (!res.writableFinished) current?.destroy();
        resolve();
      });
    });
    const body = new RequestBody(f.req, this.budget, f.hooks.meterBody, () => {
      res.shouldKeepAlive = false;
      fail(res, new ServiceError('resource_exhausted', 'write_Bps ceiling: the write budget is spent (earlier bodies went into debt); retry shortly'), this.logError);
    });
    const headers = forwardedHeaders(f.req);
    // A paced subscription is subscribed again from its last frame when its star's side ends (Relay).
    const relay: Relay = new Relay(res, f.hooks, f.ownCors === true, this.stallMs, f.subscribe ? (lastId) => {
      void send(NO_BODY, lastId === undefined ? headers : { ...headers, 'last-event-id': lastId });
    } : undefined);
    const attempt = (url: URL, out: OutgoingBody, hdrs: OutgoingHttpHeaders): Promise<Outcome> | undefined => {
      if (closed || out.refused) return undefined;
      return this.attempt(f, url, hdrs, out, relay, (up) => { current = up; });
    };
    const unavailable = (why: string): void => {
      if (closed || body.refused) return;
      // A resumed stream's caller has its answer's head already: its stream ends, and it resumes
      // with its cursor as from any ended stream.
      if (res.headersSent) relay.end();
      else fail(res, new ServiceError('unavailable', why), this.logError);
    };
    /** The stars in order until one answers (or names a leader), or a failure that cannot go on. */
    const roundTheStars = async (out: OutgoingBody, hdrs: OutgoingHttpHeaders): Promise<Outcome | undefined> => {
      let outcome: Outcome | undefined;
      for (const url of this.upstreams.order(f.stream)) {
        outcome = await attempt(url, out, hdrs);
        if (outcome?.kind !== 'failed') break;
        if (outcome.connectFailed) this.upstreams.markDown(url);
        if (!outcome.resendable) break;
      }
      return outcome;
    };
    /** The request to the star that answers it, following a 421 to the leader once. */
    const send = async (out: OutgoingBody, hdrs: OutgoingHttpHeaders): Promise<void> => {
      let outcome = await roundTheStars(out, hdrs);
      if (outcome?.kind === 'misdirected') {
        const leader = leaderUrl(outcome.leader, outcome.from);
        if (leader === undefined) {
          unavailable('the star does not lead this stream and named no leader; retry shortly');
          return;
        }
        outcome = await attempt(leader, out, hdrs);
        if (outcome?.kind === 'failed' && outcome.connectFailed) this.upstreams.markDown(leader);
        // The named leader is dead or wedged: by the time that is known its lease has lapsed or moved,
        // so a request safe to send again goes round the stars once more instead of failing.
        if (outcome?.kind === 'failed' && outcome.resendable) {
          outcome = await roundTheStars(out, hdrs);
          // Its lease lapsed and another star took it: that star, named now, is followed once too.
          const next = outcome?.kind === 'misdirected' ? leaderUrl(outcome.leader, outcome.from) : undefined;
          if (next !== undefined && next.origin !== leader.origin) {
            outcome = await attempt(next, out, hdrs);
            if (outcome?.kind === 'failed' && outcome.connectFailed) this.upstreams.markDown(next);
          }
        }
        if (outcome?.kind === 'misdirected') {
          unavailable('the stream\'s lease moved while the request was on its way; retry');
          return;
        }
      }
      if (outcome?.kind === 'failed') unavailable(noAnswerText('the star', outcome.err.message, f.method, !outcome.connectFailed));
    };
    try {
      await send(body, headers);
    } finally {
      body.release();
    }
    await over;
  }

  private agentsFor(url: URL): Agents {
    let a = this.agents.get(url.protocol);
    if (a === undefined) {
      const make = (sockets: number): Agent => {
        const options = { keepAlive: true, maxSockets: sockets, maxFreeSockets: Math.min(sockets, GATEWAY_UPSTREAM_SOCKETS_MAX) };
        return url.protocol === 'https:' ? new HttpsAgent(options) : new Agent(options);
      };
      // Two pools: an event stream holds its socket for as long as it lives, so subscriptions get
      // sockets of their own and can never leave a short request waiting behind them.
      a = { request: make(GATEWAY_UPSTREAM_SOCKETS_MAX), stream: make(GATEWAY_UPSTREAM_STREAM_SOCKETS_MAX) };
      this.agents.set(url.protocol, a);
    }
    return a;
  }

  /** One star's turn: resolves at its answer's head (relayed from there on), a 421, or a failure. */
  private attempt(f: ForwardRequest, url: URL, headers: OutgoingHttpHeaders, body: OutgoingBody, relay: Relay, onRequest: (up: ClientRequest) => void): Promise<Outcome> {
    return new Promise<Outcome>((resolve) => {
      const agents = this.agentsFor(url);
      const up = (url.protocol === 'https:' ? httpsRequest : httpRequest)({
        agent: f.subscribe ? agents.stream : agents.request, protocol: url.protocol, hostname: url.hostname, port: url.port,
        method: f.method, path: f.target, headers: { ...headers, host: url.host },
      });
      onRequest(up);
      let timedOut = false;
      const headTimer = setTimeout(() => { timedOut = true; up.destroy(new Error('the star did not answer in time')); }, GATEWAY_UPSTREAM_HEAD_MS_MAX);
      const waiting: Waiting = {
        sentAtMs: Date.now(),
        abandon: () => up.destroy(new Error('the star stopped answering: its health probes failed')),
      };
      const waitingHere = this.waitingAt(url);
      waitingHere.add(waiting);
      let settled = false;
      let relaying: IncomingMessage | undefined;
      const settle = (o: Outcome): void => {
        if (settled) return;
        settled = true;
        clearTimeout(headTimer);
        waitingHere.delete(waiting);
        resolve(o);
      };
      up.on('error', (err: NodeJS.ErrnoException) => {
        // Mid-answer: the relay decides (a paced stream resumes; any other is cut, the only honest
        // signal left).
        if (relaying) { relay.upstreamFailed(relaying); return; }
        body.detach(up);
        const connectFailed = CONNECT_ERRORS.has(err.code ?? '');
        // A star that was reached may have acted on the request: only a safe method goes again, and
        // not after a full head timeout (the caller has waited long enough).
        const resendable = body.resendable && (connectFailed || (SAFE_METHODS.has(f.method) && !timedOut));
        settle({ kind: 'failed', err, connectFailed, resendable });
      });
      up.on('response', (upRes) => {
        clearTimeout(headTimer);
        if (settled || body.refused) { upRes.resume(); settle({ kind: 'answered' }); return; }
        const status = upRes.statusCode ?? 502;
        if (status === MISDIRECTED) {
          upRes.resume();
          body.detach(up);
          // A body not yet sent whole would leave the socket mid-request: it cannot be reused.
          if (!up.writableFinished) up.destroy();
          const leader = upRes.headers[LEADER_HEADER];
          settle({ kind: 'misdirected', from: url, leader: typeof leader === 'string' ? leader : undefined });
          return;
        }
        relaying = upRes;
        body.release();
        settle({ kind: 'answered' });
        relay.attach(upRes);
        if (f.subscribe && status === 200) this.watchStream(url, upRes, relay);
      });
      if (!body.sendTo(up)) {
        up.destroy();
        settle({ kind: 'failed', err: new Error('the request body was not kept whole, so it cannot be sent again'), connectFailed: false, resendable: false });
      }
    });
  }

  private waitingAt(url: URL): Set<Waiting> {
    return setAt(this.waiting, url.origin);
  }

  /** An event stream relayed from `url`, until its star's side closes. */
  private watchStream(url: URL, upRes: IncomingMessage, relay: Relay): void {
    const here = setAt(this.streaming, url.origin);
    const giveUp = (sinceMs: number): boolean => relay.abandonIfSilent(upRes, sinceMs);
    here.add(giveUp);
    upRes.once('close', () => here.delete(giveUp));
  }

  /** Gives up what is open to a wedged star since before `sinceMs` (its first failed probe). Attempts
   *  still waiting for a head each fail as a star that stopped answering (a safe method goes on to the
   *  next star; any other is 503 with Retry-After, since the star may have acted on it), long before
   *  GATEWAY_UPSTREAM_HEAD_MS_MAX. When the star does not answer its probes at all (`silent`:
   *  stopped or cut off, not merely not ready, whose streams still carry heartbeats), the event
   *  streams relayed from it that have been silent since then end too (Relay.abandonIfSilent): a
   *  caller that watches no heartbeat (a browser's EventSource) would otherwise wait on a silent
   *  stream for as long as the star stays stopped (audit 41, M2). */
  abandon(url: URL, sinceMs: number, silent: boolean): void {
    for (const w of [...this.waiting.get(url.origin) ?? []]) {
      if (w.sentAtMs < sinceMs) w.abandon();
    }
    if (!silent) return;
    for (const giveUp of [...this.streaming.get(url.origin) ?? []]) giveUp(sinceMs);
  }

  close(): void {
    for (const a of this.agents.values()) {
      a.request.destroy();
      a.stream.destroy();
    }
  }
}

/** The set under `key`, made when absent. */
function setAt<T>(m: Map<string, Set<T>>, key: string): Set<T> {
  let set = m.get(key);
  if (set === undefined) {
    set = new Set();
    m.set(key, set);
  }
  return set;
}
