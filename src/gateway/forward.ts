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
//      its read budget (read_Bps) is spent.

import { request as httpRequest, Agent, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { FOLLOW_HEADER, HOP_HEADER, LEADER_HEADER } from '../api/proxy.ts';
import { endBounded } from '../api/end-bounded.ts';
import { AUTH_EXPIRED_FRAME } from '../api/sse.ts';
import { atWallClock } from '../core/wall-timer.ts';
import {
  GATEWAY_RESEND_BYTES_TOTAL_MAX, GATEWAY_UPSTREAM_HEAD_MS_MAX, GATEWAY_UPSTREAM_SOCKETS_MAX, GATEWAY_UPSTREAM_STREAM_SOCKETS_MAX, SSE_HEARTBEAT_MS,
} from '../config/limits.ts';
import { ServiceError } from '../protocol/errors.ts';
import { RequestBody, ResendBudget } from './body.ts';
import { fail, type LogError } from './reply.ts';
import { leaderUrl, type Upstreams } from './upstreams.ts';

/** What forward() does beyond moving bytes. */
export interface ForwardHooks {
  /** Answers how long to pause an answer after `bytes` were served (read_Bps); 0 goes on. */
  served(bytes: number): number;
  /** For a body that declared no length: whether `bytes` more may go (write_Bps); false refuses it. */
  meterBody?: (bytes: number) => boolean;
  /** The status the caller gets from a star, once known. */
  onStatus?: (status: number) => void;
  /** The verified token's exp, for an event stream the read budget paces: the Gateway ends it then. */
  expiresAtMs?: number;
}

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

/** Headers that describe one hop's connection and are never forwarded. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host']);
/** The stars' own routing headers: a caller cannot set them (a forged svcd-hop would keep stars from
 *  answering 421), and a star's are not shown to callers. */
const CLUSTER_HEADERS = new Set([HOP_HEADER, FOLLOW_HEADER, LEADER_HEADER]);
/** A star's engine names itself (uWS adds `uWebSockets: 20` to every answer); the Gateway is the
 *  server its callers talk to, so that is not relayed. */
const STAR_IDENTITY_HEADERS = new Set(['uwebsockets', 'server']);
/** Failures of the connect itself: the star never saw a byte, so any request may go to the next. */
const CONNECT_ERRORS = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** Methods a star may be asked twice without effect (RFC 9110 safe methods). */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
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

/** An attempt still waiting for its answer's head, and how to give it up. */
interface Waiting { sentAtMs: number; abandon(): void }

export class Forwarder {
  private readonly agents = new Map<string, Agents>();
  private readonly budget = new ResendBudget(GATEWAY_RESEND_BYTES_TOTAL_MAX);
  /** Attempts waiting for a head, by star origin (abandon() gives up those of a wedged star). */
  private readonly waiting = new Map<string, Set<Waiting>>();

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
    const attempt = (url: URL): Promise<Outcome> | undefined => {
      if (closed || body.refused) return undefined;
      return this.attempt(f, url, headers, body, (up) => { current = up; });
    };
    const unavailable = (why: string): void => {
      if (!closed && !body.refused) fail(res, new ServiceError('unavailable', why), this.logError);
    };
    /** The stars in order until one answers (or names a leader), or a failure that cannot go on. */
    const roundTheStars = async (): Promise<Outcome | undefined> => {
      let outcome: Outcome | undefined;
      for (const url of this.upstreams.order(f.stream)) {
        outcome = await attempt(url);
        if (outcome?.kind !== 'failed') break;
        if (outcome.connectFailed) this.upstreams.markDown(url);
        if (!outcome.resendable) break;
      }
      return outcome;
    };
    try {
      let outcome = await roundTheStars();
      if (outcome?.kind === 'misdirected') {
        const leader = leaderUrl(outcome.leader, outcome.from);
        if (leader === undefined) {
          unavailable('the star does not lead this stream and named no leader; retry shortly');
          return;
        }
        outcome = await attempt(leader);
        if (outcome?.kind === 'failed' && outcome.connectFailed) this.upstreams.markDown(leader);
        // The named leader is dead or wedged: by the time that is known its lease has lapsed or moved,
        // so a request safe to send again goes round the stars once more instead of failing.
        if (outcome?.kind === 'failed' && outcome.resendable) outcome = await roundTheStars();
        if (outcome?.kind === 'misdirected') {
          unavailable('the stream\'s lease moved while the request was on its way; retry');
          return;
        }
      }
      if (outcome?.kind === 'failed') unavailable(`the star did not answer (${outcome.err.message}); retry shortly`);
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
  private attempt(f: ForwardRequest, url: URL, headers: OutgoingHttpHeaders, body: RequestBody, onRequest: (up: ClientRequest) => void): Promise<Outcome> {
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
      let relaying = false;
      const settle = (o: Outcome): void => {
        if (settled) return;
        settled = true;
        clearTimeout(headTimer);
        waitingHere.delete(waiting);
        resolve(o);
      };
      up.on('error', (err: NodeJS.ErrnoException) => {
        // Mid-answer: cutting the caller's connection is the only honest signal left.
        if (relaying) { f.res.destroy(); return; }
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
        relaying = true;
        body.release();
        settle({ kind: 'answered' });
        relay(upRes, f.res, f.hooks, f.ownCors === true, this.stallMs);
      });
      if (!body.sendTo(up)) {
        up.destroy();
        settle({ kind: 'failed', err: new Error('the request body was not kept whole, so it cannot be sent again'), connectFailed: false, resendable: false });
      }
    });
  }

  private waitingAt(url: URL): Set<Waiting> {
    let set = this.waiting.get(url.origin);
    if (set === undefined) {
      set = new Set();
      this.waiting.set(url.origin, set);
    }
    return set;
  }

  /** Gives up the attempts sent to a wedged star before `sinceMs` that still wait for a head: each
   *  fails as a star that stopped answering (a safe method goes on to the next star; any other is 503
   *  with Retry-After, since the star may have acted on it), long before GATEWAY_UPSTREAM_HEAD_MS_MAX.
   *  Answers streaming back are left alone: the star's own heartbeats stop, which tells the caller. */
  abandon(url: URL, sinceMs: number): void {
    for (const w of [...this.waiting.get(url.origin) ?? []]) {
      if (w.sentAtMs < sinceMs) w.abandon();
    }
  }

  close(): void {
    for (const a of this.agents.values()) {
      a.request.destroy();
      a.stream.destroy();
    }
  }
}

const HEARTBEAT = ': hb\n\n';
/** How soon a stream that is quiet past the heartbeat, but cannot take one yet, is looked at again. */
const HELD_HEARTBEAT_RECHECK_MS = 1000;
const LF = 0x0a;
const FRAME_END = Buffer.from('\n\n');
/** The event line of a star's expiry frame. */
const STAR_EXPIRY_EVENT = AUTH_EXPIRED_FRAME.slice(0, AUTH_EXPIRED_FRAME.indexOf('\n'));

/** Where an event stream relayed chunk by chunk stands: at a frame's end (just past its blank line,
 *  which may span two chunks) or inside a frame. */
class FrameBoundary {
  atEnd = true;
  private lastLf = false;

  wrote(chunk: Buffer): void {
    if (chunk.length === 0) return;
    const n = chunk.length;
    this.atEnd = n >= 2 ? chunk[n - 1] === LF && chunk[n - 2] === LF : this.lastLf && chunk[0] === LF;
    this.lastLf = chunk[n - 1] === LF;
  }

  /** Where in `chunk` the frame under way ends (just past its blank line); -1 when it goes on. */
  endIn(chunk: Buffer): number {
    if (this.lastLf && chunk[0] === LF) return 1;
    const blank = chunk.indexOf(FRAME_END);
    return blank < 0 ? -1 : blank + FRAME_END.length;
  }
}

/**
 * Keeps an event stream the Gateway holds back (its read budget spent) from going silent: when
 * nothing was written for SSE_HEARTBEAT_MS while the relay held the stream, and the last write ended
 * a frame, a heartbeat comment goes out, so a proxy idle timeout set above the heartbeat (as the spec
 * asks) does not turn the pause into a drop (spec: Events, rule 8). While the star's own frames and
 * heartbeats flow it never fires; nor while the Gateway is not holding the stream back: a silent
 * star (stopped, wedged, cut off) must stay silent, so the caller's heartbeat watch sees it and
 * reconnects, rather than being kept on a dead stream by heartbeats the star never sent.
 * One timer per stream, armed at most every SSE_HEARTBEAT_MS.
 */
class HeldStreamHeartbeat {
  private lastWriteMs = Date.now();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly res: ServerResponse, private readonly held: () => boolean, private readonly frames: FrameBoundary) {
    this.arm(SSE_HEARTBEAT_MS);
  }

  /** The relay wrote a chunk (`frames` has seen it). */
  wrote(): void {
    this.lastWriteMs = Date.now();
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.tick(), ms);
  }

  private tick(): void {
    if (this.res.destroyed) return;
    const quietMs = Date.now() - this.lastWriteMs;
    if (quietMs < SSE_HEARTBEAT_MS) {
      this.arm(SSE_HEARTBEAT_MS - quietMs);
      return;
    }
    if (this.frames.atEnd && this.held()) {
      this.res.write(HEARTBEAT);
      this.lastWriteMs = Date.now();
      this.arm(SSE_HEARTBEAT_MS);
      return;
    }
    // Quiet long enough, but mid-frame or not held: look again shortly (not in a 1 ms loop).
    this.arm(HELD_HEARTBEAT_RECHECK_MS);
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

/** The star's answer to the caller, with backpressure and the read budget. */
function relay(upRes: IncomingMessage, res: ServerResponse, hooks: ForwardHooks, ownCors: boolean, stallMs: number): void {
  hooks.onStatus?.(upRes.statusCode ?? 0);
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(upRes.headersDistinct)) {
    if (value === undefined || HOP_HEADERS.has(name) || CLUSTER_HEADERS.has(name) || STAR_IDENTITY_HEADERS.has(name)) continue;
    // Under the Gateway's own policy its CORS headers (set on `res` already) stand; a star's Vary
    // on the data plane is only ever Origin.
    if (ownCors && (name.startsWith('access-control-') || name === 'vary')) continue;
    headers[name] = value.length === 1 ? value[0] : value;
  }
  res.writeHead(upRes.statusCode ?? 502, headers);
  // Paused while the caller's socket is full or its read budget is spent; resumed when both clear.
  let holds = 0;
  const hold = (): void => { if (holds++ === 0) upRes.pause(); };
  const unhold = (): void => { if (--holds === 0 && !res.destroyed) upRes.resume(); };
  const frames = /^text\/event-stream/i.test(String(upRes.headers['content-type'] ?? '')) ? new FrameBoundary() : undefined;
  const heartbeat = frames ? new HeldStreamHeartbeat(res, () => holds > 0, frames) : undefined;
  res.once('close', () => heartbeat?.stop());
  const expiry = frames && hooks.expiresAtMs !== undefined ? new PacedStreamExpiry(res, upRes, hooks.expiresAtMs, frames, () => heartbeat?.stop()) : undefined;
  // A caller whose socket stays full for stallMs is disconnected, star and all (spec: Events, rule 3).
  // The star cannot do it for the Gateway: its answer, paused here, no longer reads the star's socket,
  // so the star's own cut (or its end) is never seen. A pause on the read budget is not a stall.
  let stall: NodeJS.Timeout | undefined;
  const stalled = (): void => { res.destroy(); upRes.destroy(); };
  const drained = (): void => { clearTimeout(stall); stall = undefined; unhold(); };
  res.once('close', () => clearTimeout(stall));
  upRes.on('data', (chunk: Buffer) => {
    if (expiry?.relayPast(chunk)) return;
    if (!res.write(chunk)) {
      hold();
      stall ??= setTimeout(stalled, stallMs);
      res.once('drain', drained);
    }
    frames?.wrote(chunk);
    heartbeat?.wrote();
    expiry?.saw(chunk);
    const waitMs = hooks.served(chunk.length);
    if (waitMs > 0) { hold(); setTimeout(unhold, waitMs); }
  });
  // A caller not reading does not hold the ended answer's socket (node:http has no write timeout).
  upRes.on('end', () => { heartbeat?.stop(); expiry?.stop(); endBounded(res); });
  upRes.on('error', () => { heartbeat?.stop(); expiry?.stop(); res.destroy(); });
}

/**
 * Ends an event stream the read budget paces at its token's exp, from the Gateway: the star ends it
 * then too, but what it wrote before and the pause still holds back (its send buffer and both
 * sockets', megabytes) would reach the caller after exp, and only once the read debt is repaid (spec:
 * no SSE stream outlives its credential). At exp the frame under way is finished, unpaced (one frame
 * at most), then the expiry frame goes out and the star's stream is dropped.
 */
class PacedStreamExpiry {
  private readonly cancelExpiry: () => void;
  private expired = false;
  private done = false;

  constructor(
    private readonly res: ServerResponse, private readonly upRes: IncomingMessage, expiresAtMs: number,
    private readonly frames: FrameBoundary, private readonly onDone: () => void,
  ) {
    this.cancelExpiry = atWallClock(expiresAtMs, () => this.expire());
  }

  /** A chunk relayed before exp: the star's own expiry frame, come first, ends the stream itself. */
  saw(chunk: Buffer): void {
    if (chunk.includes(STAR_EXPIRY_EVENT)) this.cancelExpiry();
  }

  /** After exp: relays `chunk` up to the end of the frame under way, then ends; true once handled. */
  relayPast(chunk: Buffer): boolean {
    if (!this.expired) return false;
    if (this.done) return true;
    const end = this.frames.endIn(chunk);
    if (end < 0) {
      this.res.write(chunk);
      this.frames.wrote(chunk);
      return true;
    }
    this.res.write(chunk.subarray(0, end));
    this.finish();
    return true;
  }

  private expire(): void {
    if (this.res.destroyed || this.res.writableEnded) return;
    this.expired = true;
    if (this.frames.atEnd) { this.finish(); return; }
    this.upRes.resume(); // the rest of the frame under way, past any pause
  }

  private finish(): void {
    this.done = true;
    this.onDone();
    endBounded(this.res, AUTH_EXPIRED_FRAME);
    this.upRes.destroy();
  }

  stop(): void {
    this.cancelExpiry();
  }
}
