// An answer relayed from a star to a Gateway caller (forward.ts step 4): the head with the star's
// cluster and identity headers left out, then the body, paused while the caller's socket is full or
// its read budget (read_Bps) is spent. An event stream gets heartbeats while paused, and under a read
// budget goes out in whole frames, ends at the token's exp, and is subscribed again from its last
// frame when the star's side ends under the pause, so the caller's stream pauses rather than drops.

import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { endBounded } from '../api/end-bounded.ts';
import { AUTH_EXPIRED_FRAME } from '../api/sse.ts';
import { atWallClock } from '../core/wall-timer.ts';
import { GATEWAY_PACED_FRAME_HOLD_BYTES_MAX, GATEWAY_PACED_FRAME_HOLD_BYTES_TOTAL_MAX, GATEWAY_PACED_RESUMES_IDLE_MAX, SSE_HEARTBEAT_MS } from '../config/limits.ts';
import { CLUSTER_HEADERS, HOP_HEADERS, STAR_IDENTITY_HEADERS } from './hop-headers.ts';

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
export class Relay {
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
  /** When the star's side last sent anything (or was attached). */
  private heardMs = 0;
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
    this.heardMs = Date.now();
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

  /** Gives up `upRes`, still the star's side being relayed, when nothing came from it since `sinceMs`
   *  (its star failed its health probes since then: stopped, wedged or cut off, it would hold the
   *  caller's stream open and silent for as long as it stays so). It ends as the star's own end of
   *  the stream would: a paced stream at a frame's end resumes at another star, any other ends and
   *  its caller resumes with its cursor, as after a star's hop gives up a leader that stopped
   *  heartbeating. True when given up. */
  abandonIfSilent(upRes: IncomingMessage, sinceMs: number): boolean {
    if (upRes !== this.up || this.heardMs >= sinceMs) return false;
    this.upstreamGone(upRes, true);
    upRes.destroy();
    return true;
  }

  /** Ends the caller's answer (a resumed stream that could not go on ends as any stream does). */
  end(): void {
    this.stopWatching();
    if (!this.res.writableEnded && !this.res.destroyed) endBounded(this.res);
  }

  private onData(chunk: Buffer): void {
    this.heardMs = Date.now();
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
