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
//      frame, so the caller's stream pauses rather than drops (Relay).

import { request as httpRequest, Agent, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { FOLLOW_HEADER, HOP_HEADER, LEADER_HEADER } from '../api/proxy.ts';
import { endBounded } from '../api/end-bounded.ts';
import { AUTH_EXPIRED_FRAME } from '../api/sse.ts';
import { atWallClock } from '../core/wall-timer.ts';
import {
  GATEWAY_PACED_FRAME_HOLD_BYTES_MAX, GATEWAY_PACED_FRAME_HOLD_BYTES_TOTAL_MAX, GATEWAY_PACED_RESUMES_IDLE_MAX,
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
  /** The caller's read budget (read_Bps) is in force: an event stream goes out in whole frames and is
   *  subscribed again from its last frame when its star's side ends (Relay). */
  paced?: boolean;
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
      if (outcome?.kind === 'failed') unavailable(`the star did not answer (${outcome.err.message}); retry shortly`);
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

/** Bytes held by paced streams' frames under way, across this Gateway (PacedFrames). */
let pacedHeldBytes = 0;
/** The bytes of a frame's start kept to read its `id:` or `event:` line. */
const FRAME_HEAD_BYTES = 64;
const ID_LINE = /^id: (\d+)\n/;

/**
 * Where a paced event stream stands (its caller's read_Bps in force), for going out in whole frames
 * and for subscribing again where it stands. Alone, the relay writes what the star sends as it comes
 * and pauses on the budget wherever the budget runs out, inside a frame as often as not; a star
 * that cuts the paused relay (its stall bound: it cannot tell a budget's pause from a consumer that
 * stopped reading) would leave the caller with half a frame. Here the frame under way is held until
 * it ends (GATEWAY_PACED_FRAME_HOLD_BYTES_MAX, and a budget across streams) and the budget's pause
 * comes between frames, so a cut finds the caller at a frame's end, after the last frame's id.
 */
class PacedFrames {
  /** The star's side as seen so far (held, passing or written). */
  incoming = new FrameBoundary();
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** The frame under way outgrew what may be held: it goes out as it comes, and the stream cannot be
   *  resumed until it ends. */
  passing = false;
  private head: Buffer | undefined;
  /** The id of the last whole frame the caller was sent: where a resumed subscription starts. */
  lastId: string | undefined;
  /** The caller was sent an `event:` frame (an error, auth-expired): its stream is over. */
  final = false;
  /** Resumes since the caller was last sent a frame with an id (GATEWAY_PACED_RESUMES_IDLE_MAX). */
  idleResumes = 0;

  /** Notes `piece` (which begins or continues the frame under way) as seen. */
  saw(piece: Buffer): void {
    const have = this.head?.length ?? 0;
    if (have < FRAME_HEAD_BYTES) {
      const more = piece.subarray(0, FRAME_HEAD_BYTES - have);
      this.head = this.head === undefined ? Buffer.from(more) : Buffer.concat([this.head, more]);
    }
    this.incoming.wrote(piece);
  }

  /** Holds `piece` of the frame under way; false when it may not (it outgrew the bounds). */
  hold(piece: Buffer): boolean {
    if (this.heldBytes + piece.length > GATEWAY_PACED_FRAME_HOLD_BYTES_MAX || pacedHeldBytes + piece.length > GATEWAY_PACED_FRAME_HOLD_BYTES_TOTAL_MAX) return false;
    this.held.push(piece);
    this.heldBytes += piece.length;
    pacedHeldBytes += piece.length;
    return true;
  }

  /** The held pieces, handed over (to be written) and no longer counted. */
  take(): Buffer[] {
    const out = this.held;
    this.drop();
    return out;
  }

  drop(): void {
    pacedHeldBytes -= this.heldBytes;
    this.held = [];
    this.heldBytes = 0;
  }

  /** The frame under way ended, and went to the caller whole (or passing). */
  ended(): void {
    const head = this.head?.toString('latin1') ?? '';
    const id = ID_LINE.exec(head);
    if (id) {
      this.lastId = id[1];
      this.idleResumes = 0;
    } else if (head.startsWith('event:')) this.final = true;
    this.head = undefined;
    this.passing = false;
  }

  /** The star's side ended: begin again from the caller's last frame. */
  restart(): void {
    this.drop();
    this.head = undefined;
    this.passing = false;
    this.incoming = new FrameBoundary();
    this.idleResumes += 1;
  }
}

/**
 * The star's answer on its way to the caller, with backpressure and the read budget. A paced event
 * stream outlives its star's side: when that ends (the star's stall bound cut the paused relay, the
 * star stopped, the lease moved) while the caller stands at a frame's end, the Gateway subscribes
 * again from the last frame's id (`onResume`) and goes on relaying into the same answer, so the
 * caller's stream pauses rather than drops (spec: Events, rule 8). An `event:` frame (an error,
 * auth-expired) ends it for good, as does a resumed subscription that is not answered 200.
 */
class Relay {
  /** The star's side being relayed (a paced stream's is replaced when it resumes). */
  private up: IncomingMessage | undefined;
  private readonly gone = new WeakSet<IncomingMessage>();
  /** Paused while the caller's socket is full or its read budget is spent; resumed when both clear. */
  private holds = 0;
  private stall: NodeJS.Timeout | undefined;
  private frames: FrameBoundary | undefined;
  private heartbeat: HeldStreamHeartbeat | undefined;
  private expiry: PacedStreamExpiry | undefined;
  private paced: PacedFrames | undefined;
  /** What a budget's pause cut off a chunk, relayed when the pause ends. */
  private stash: Buffer | undefined;
  /** The star's side ended during a pause: resumed (or ended) when the pause is over. */
  private goneDuringPause: { clean: boolean } | undefined;

  /** `onResume` subscribes again, from the id given (undefined: the caller's own start), and attaches
   *  the answer; given only for a subscription. */
  constructor(
    private readonly res: ServerResponse, private readonly hooks: ForwardHooks, private readonly ownCors: boolean,
    private readonly stallMs: number, private readonly onResume: ((lastId: string | undefined) => void) | undefined,
  ) {
    res.once('close', () => {
      clearTimeout(this.stall);
      this.stopWatching();
    });
  }

  /** The caller's answer is over (or about to be): its timers stop and what was held goes. */
  private stopWatching(): void {
    this.heartbeat?.stop();
    this.expiry?.stop();
    this.paced?.drop();
  }

  /** Relays `upRes`: the answer's head and body, or (a resumed subscription) its body. */
  attach(upRes: IncomingMessage): void {
    const res = this.res;
    if (res.headersSent) {
      if (res.writableEnded || res.destroyed) { upRes.destroy(); return; }
      if (upRes.statusCode !== 200) { upRes.resume(); this.end(); return; }
      this.listen(upRes);
      return;
    }
    const status = upRes.statusCode ?? 502;
    this.hooks.onStatus?.(status);
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(upRes.headersDistinct)) {
      if (value === undefined || HOP_HEADERS.has(name) || CLUSTER_HEADERS.has(name) || STAR_IDENTITY_HEADERS.has(name)) continue;
      // Under the Gateway's own policy its CORS headers (set on `res` already) stand; a star's Vary
      // on the data plane is only ever Origin.
      if (this.ownCors && (name.startsWith('access-control-') || name === 'vary')) continue;
      headers[name] = value.length === 1 ? value[0] : value;
    }
    res.writeHead(status, headers);
    if (/^text\/event-stream/i.test(String(upRes.headers['content-type'] ?? ''))) {
      const frames = new FrameBoundary();
      this.frames = frames;
      this.heartbeat = new HeldStreamHeartbeat(res, () => this.holds > 0, frames);
      if (this.hooks.expiresAtMs !== undefined) {
        this.expiry = new PacedStreamExpiry(res, this.hooks.expiresAtMs, frames, () => this.heartbeat?.stop(), {
          flow: () => {
            const rest = this.stash;
            this.stash = undefined;
            if (rest) this.onData(rest);
            this.up?.resume();
          },
          drop: () => this.up?.destroy(),
        });
      }
      if (this.hooks.paced === true && this.onResume !== undefined && status === 200) this.paced = new PacedFrames();
    }
    this.listen(upRes);
  }

  private listen(upRes: IncomingMessage): void {
    this.up = upRes;
    if (this.holds > 0) upRes.pause();
    upRes.on('data', (chunk: Buffer) => this.onData(chunk));
    upRes.on('end', () => this.upstreamGone(upRes, true));
    upRes.on('error', () => this.upstreamGone(upRes, false));
    // Closed without its end (a reset the parser did not report as an error).
    upRes.on('close', () => this.upstreamGone(upRes, false));
  }

  /** The request to the star failed once its answer was being relayed. */
  upstreamFailed(upRes: IncomingMessage): void {
    this.upstreamGone(upRes, false);
  }

  /** Ends the caller's answer (a resumed stream that could not go on ends as any stream does). */
  end(): void {
    this.stopWatching();
    if (!this.res.writableEnded && !this.res.destroyed) endBounded(this.res);
  }

  private onData(chunk: Buffer): void {
    if (this.expiry?.relayPast(chunk)) return;
    if (this.paced !== undefined) { this.pacedData(chunk); return; }
    this.write(chunk);
    const waitMs = this.hooks.served(chunk.length);
    if (waitMs > 0) this.pauseFor(waitMs);
  }

  /** A paced stream's bytes: whole frames to the caller, the budget's pause between them. */
  private pacedData(chunk: Buffer): void {
    const p = this.paced!;
    let at = 0;
    while (at < chunk.length && !this.res.writableEnded) {
      const rest = at === 0 ? chunk : chunk.subarray(at);
      const end = p.incoming.endIn(rest);
      const piece = end < 0 ? rest : rest.subarray(0, end);
      p.saw(piece);
      at += piece.length;
      let sent = 0;
      if (p.passing) {
        this.write(piece);
        sent = piece.length;
      } else {
        if (end < 0) {
          if (p.hold(piece)) return;
          // Too long to hold: what was held and this go out now, the rest of the frame as it comes.
          p.passing = true;
        }
        this.res.cork();
        for (const b of p.take()) { this.write(b); sent += b.length; }
        this.write(piece);
        sent += piece.length;
        this.res.uncork();
      }
      if (end >= 0) p.ended();
      const waitMs = this.hooks.served(sent);
      // Held frames pause at their end; a passing one wherever its budget runs out, as before.
      if (waitMs > 0 && (end >= 0 || p.passing)) {
        if (at < chunk.length) this.stash = chunk.subarray(at);
        this.pauseFor(waitMs);
        return;
      }
    }
  }

  private write(chunk: Buffer): void {
    const res = this.res;
    if (res.writableEnded || res.destroyed) return;
    if (!res.write(chunk)) {
      this.hold();
      this.stall ??= setTimeout(this.stalled, this.stallMs);
      res.once('drain', this.drained);
    }
    this.frames?.wrote(chunk);
    this.heartbeat?.wrote();
    this.expiry?.saw(chunk);
  }

  // A caller whose socket stays full for stallMs is disconnected, star and all (spec: Events, rule 3).
  // The star cannot do it for the Gateway: its answer, paused here, no longer reads the star's socket,
  // so the star's own cut (or its end) is never seen. A pause on the read budget is not a stall.
  private readonly stalled = (): void => { this.res.destroy(); this.up?.destroy(); };
  private readonly drained = (): void => { clearTimeout(this.stall); this.stall = undefined; this.unhold(); };

  private pauseFor(ms: number): void {
    this.hold();
    setTimeout(this.unhold, ms);
  }

  private hold(): void {
    if (this.holds++ === 0) this.up?.pause();
  }

  private readonly unhold = (): void => {
    if (--this.holds > 0 || this.res.destroyed || this.res.writableEnded) return;
    const rest = this.stash;
    if (rest) {
      this.stash = undefined;
      this.pacedData(rest);
      if (this.holds > 0) return;
    }
    const gone = this.goneDuringPause;
    if (gone) {
      this.goneDuringPause = undefined;
      this.afterUpstream(gone.clean);
      return;
    }
    this.up?.resume();
  };

  private upstreamGone(upRes: IncomingMessage, clean: boolean): void {
    if (this.gone.has(upRes)) return;
    this.gone.add(upRes);
    if (upRes !== this.up) return;
    // Bytes a pause still holds back come first: they may finish a frame.
    if (this.holds > 0 && this.paced !== undefined) { this.goneDuringPause = { clean }; return; }
    this.afterUpstream(clean);
  }

  /** The star's side is over: a paced stream at a frame's end subscribes again; any other ends. */
  private afterUpstream(clean: boolean): void {
    const p = this.paced;
    const res = this.res;
    this.up = undefined;
    if (res.writableEnded || res.destroyed) return;
    if (p !== undefined && this.onResume !== undefined && !p.final && !p.passing && this.frames?.atEnd !== false
      && p.idleResumes < GATEWAY_PACED_RESUMES_IDLE_MAX) {
      p.restart();
      this.onResume(p.lastId);
      return;
    }
    this.stopWatching();
    if (clean) endBounded(res);
    else res.destroy();
  }
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

  /** `star`: lets the star's side flow past any pause (the rest of the frame under way), or drops it. */
  constructor(
    private readonly res: ServerResponse, expiresAtMs: number, private readonly frames: FrameBoundary,
    private readonly onDone: () => void, private readonly star: { flow(): void; drop(): void },
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
    this.star.flow(); // the rest of the frame under way, past any pause
  }

  private finish(): void {
    this.done = true;
    this.onDone();
    endBounded(this.res, AUTH_EXPIRED_FRAME);
    this.star.drop();
  }

  stop(): void {
    this.cancelExpiry();
  }
}
