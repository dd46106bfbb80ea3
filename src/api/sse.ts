// The SSE pump: one subscription's event stream. A subscriber has one batch in flight: its frame is
// written, and the next only after the socket took it (or drained). Each committed batch's frame is
// encoded once per encoding and the same bytes go to every subscriber that receives that batch.
//
// Why a scheduler (sse-fanout.ts): at 4096 subscribers on one stream, a tail move woke 4096 promise
// chains in one microtask burst, and each wrote its own socket (the profile: 70 % of the busy main
// thread in the uWS write, the rest promise and microtask churn); producers' appends waited behind
// the whole burst. Now a pump with something to write is queued, and each event-loop turn serves at
// most SSE_SOCKETS_PER_TURN_MAX sockets, synchronously (poll(), no promise per batch), then yields,
// so appends are read and acked between slices. A subscriber that is behind by several batches by its
// turn gets them all in one corked write (one syscall), so the cost per batch falls as load rises.
// A caught-up pump joins its stream's cohort (sse-cohort.ts), which waits at the tail once for all
// of its members and writes each new batch to them in the same bounded slices; a pump leaves it when
// its socket fills or its stream ends, and serves itself until it is caught up again.
// Heartbeats every 15 s; a consumer that has not drained for 60 s is cut off.
//
// uWS's own publish/subscribe (one buffer to many sockets natively) does not fit: in uWS.js 20.30
// topics exist only on WebSockets (WebSocket.subscribe, App.publish); an HttpResponse, which an
// event stream is, cannot join one. So the bytes are shared, and each socket still gets its write.

import { SSE_COALESCE_BYTES_MAX, SSE_HEARTBEAT_MS, SSE_STALL_MS } from '../config/limits.ts';
import { asServiceError } from '../core/errors.ts';
import type { Subscription, SubscriptionBatch } from '../core/service-api.ts';
import { atWallClock } from '../core/wall-timer.ts';
import { awaitDrain, type SseRound, type SseSink } from './exchange.ts';
import { cohortFor, type Cohort, type CohortMember } from './sse-cohort.ts';
import { encodeBatchFrame, fanOut, type Runnable } from './sse-fanout.ts';

/** The last frame of a stream whose credential expired (spec: Events). */
export const AUTH_EXPIRED_FRAME = 'event: auth-expired\ndata: {}\n\n';

export const SSE_HEADERS: [string, string][] = [
  ['Content-Type', 'text/event-stream'],
  ['Cache-Control', 'no-cache'],
  ['X-Accel-Buffering', 'no'],
];

export interface SsePumpOptions {
  heartbeatMs?: number;
  stallMs?: number;
  /** Ends the stream with `event: auth-expired` at this wall-clock time (the token's exp). */
  expiresAtMs?: number;
  onEnd?: () => void;
}

/**
 * One subscription's event stream, as the fan-out runs it. A class, not closures: the fan-out touches
 * every caught-up subscriber on every batch, and its state here is in one object (a closure-based pump
 * was an object plus its context, two heap objects a delivery, each a likely cache miss at 16,384
 * subscribers). The bound functions are made once per pump, never per write.
 */
class SsePump implements Runnable, CohortMember {
  queued = false;
  /** The cohort it is in while caught up (sse-cohort.ts), and its place and cursor there. */
  private cohort: Cohort | undefined;
  cohortAt = -1;
  /** The socket the cohort writes its rounds to, where the engine has one (CohortMember). */
  readonly round: SseRound | undefined;
  /** deliver()'s frames, how many were written, and whether the socket still has room (`corkedFrames`). */
  private batchFrames: readonly Buffer[] = [];
  delivered = 0;
  private room = true;
  private ended = false;
  /** Set while the socket is full (awaitDrain's cancel): the consumer is cut off once it has not
   *  drained for stallMs. */
  private drainWait: (() => void) | undefined;
  /** A heartbeat is owed: written on the pump's next turn. */
  private hbDue = false;
  /** A next() is pending (the slow path): poll() must not run meanwhile. */
  private slowPending = false;
  private cancelExpiry: (() => void) | undefined;
  /** The heartbeat's timer (a timeout re-armed each time: see onHeartbeat) and its period. */
  private hb: ReturnType<typeof setTimeout>;
  private readonly heartbeatMs: number;
  /** When it last joined a cohort (performance.now()). */
  private cohortSinceMs = 0;
  private readonly stallMs: number;
  /** writeFrames' input and the socket's verdict, for `corked` (res.cork takes no arguments). */
  private first: SubscriptionBatch | undefined;
  private ok = true;

  constructor(private readonly sink: SseSink, private readonly sub: Subscription, private readonly base64: boolean, private readonly opts: SsePumpOptions) {
    this.stallMs = opts.stallMs ?? SSE_STALL_MS;
    this.round = sink.round;
    // The heartbeat is written on the pump's turn, so thousands of subscribers' timers firing
    // together are served in bounded slices like any other write.
    this.heartbeatMs = opts.heartbeatMs ?? SSE_HEARTBEAT_MS;
    this.hb = setTimeout(this.onHeartbeat, this.heartbeatMs);
    if (opts.expiresAtMs !== undefined) this.cancelExpiry = atWallClock(opts.expiresAtMs, () => this.finish(AUTH_EXPIRED_FRAME));
    sink.onClose(() => this.finish());
  }

  /** Ends the stream (with `tail` written first, if given). A stalled consumer is cut by awaitDrain,
   *  which drops the connection and brings the pump here (cutOff). */
  finish(tail?: string): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.hb);
    this.cancelExpiry?.();
    this.drainWait?.();
    if (this.cohort) { this.cohort.leave(this); this.cohort = undefined; }
    this.sub.close();
    const sink = this.sink;
    if (!sink.closed) {
      if (tail) sink.write(tail);
      sink.end();
    }
    this.opts.onEnd?.();
  }

  run(): void {
    if (this.ended || this.sink.closed) return;
    if (this.cohort) {
      // In a cohort only a heartbeat is its own to write (the cohort writes the frames); one that
      // finds the socket full takes it out, as a frame would.
      if (this.hbDue) {
        this.hbDue = false;
        const room = this.sink.write(': hb\n\n');
        // The write may have ended the stream (finish() takes the pump out of its cohort).
        if (!room && this.cohort && !this.ended) this.released(this.cohort.leave(this)!, true);
      }
      return;
    }
    if (this.slowPending || this.drainWait !== undefined) {
      // Queued by a heartbeat while a read is pending (or the socket filled since): only the
      // heartbeat, never a second reader of the subscription.
      if (this.hbDue && this.drainWait === undefined) { this.hbDue = false; this.sink.write(': hb\n\n'); }
      return;
    }
    const sub = this.sub;
    const b = sub.poll?.();
    if (b) this.writeFrames(b);
    else if (this.hbDue) this.writeFrames(undefined);
    else if (sub.atTail && sub.onReady && sub.atTail()) this.waitAtTail();
    else void this.slow();
  }

  /** Caught up: joins its stream's cohort, or (a subscription that cannot be shared) parks alone. */
  private waitAtTail(): void {
    const sub = this.sub;
    const c = cohortFor(sub, this.base64);
    if (c === undefined || !c.join(this, sub.cursor)) { sub.onReady!(this.ready); return; }
    this.cohort = c;
    this.cohortSinceMs = performance.now();
  }

  /** The heartbeat is for a quiet stream (proxies' idle timeouts; the Gateway's relay sends one only
   *  after a quiet period too). A subscriber in its stream's cohort since before the cohort's last
   *  round got that round's bytes: while rounds come within the period it owes no heartbeat, and the
   *  timer is set for a period after that round. At 16,384 subscribers of busy streams, a heartbeat
   *  each every 15 s was 16,384 more socket writes a period in one burst (each a `sendto`), the
   *  rounds waiting behind them. Every other subscriber gets one each period, as before. */
  private readonly onHeartbeat = (): void => {
    const c = this.cohort;
    const lastRoundMs = c?.lastRoundMs ?? 0;
    if (c !== undefined && lastRoundMs > this.cohortSinceMs) {
      const quietMs = performance.now() - lastRoundMs;
      if (quietMs < this.heartbeatMs) {
        this.hb = setTimeout(this.onHeartbeat, this.heartbeatMs - quietMs);
        return;
      }
    }
    this.hb = setTimeout(this.onHeartbeat, this.heartbeatMs);
    if (this.drainWait === undefined) { this.hbDue = true; fanOut.enqueue(this); }
  };

  /** A cohort's round: its frames, written corked; false when the socket filled (CohortMember). */
  deliver(frames: readonly Buffer[]): boolean {
    this.delivered = 0;
    if (this.sink.closed) return false;
    this.batchFrames = frames;
    this.room = true;
    this.sink.cork(this.corkedFrames);
    this.batchFrames = [];
    return this.room;
  }

  private readonly corkedFrames = (): void => {
    const sink = this.sink;
    const frames = this.batchFrames;
    for (let i = 0; i < frames.length; i++) {
      this.delivered = i + 1;
      if (!sink.write(frames[i])) { this.room = false; return; }
    }
  };

  /** The cohort let it go at `seq` (CohortMember): it serves itself from there. */
  released(seq: number, full: boolean): void {
    this.cohort = undefined;
    this.sub.advanceTo!(seq);
    if (this.ended || this.sink.closed) return;
    if (full) {
      this.sink.filled?.(); // a round written past the sink found the socket full
      this.stalled();
    }
    else fanOut.enqueue(this);
  }

  /** The socket is full: cut exactly stallMs after the write that found it so, unless it drains. */
  private stalled(): void {
    this.drainWait = awaitDrain(this.sink, this.stallMs, this.drained, this.cutOff);
  }

  /** One callback for every wait at the tail (no closure per batch). */
  private readonly ready = (): void => fanOut.enqueue(this);

  /** The corked part of writeFrames: frames already committed go out together in one corked write,
   *  up to SSE_COALESCE_BYTES_MAX. */
  private readonly corked = (): void => {
    const sink = this.sink;
    if (this.hbDue) { this.hbDue = false; sink.write(': hb\n\n'); }
    let bytes = 0;
    let b = this.first ?? this.sub.poll?.();
    this.first = undefined;
    while (b) {
      const f = encodeBatchFrame(b, this.base64);
      this.ok = sink.write(f);
      bytes += f.length;
      if (!this.ok || bytes >= SSE_COALESCE_BYTES_MAX) break;
      b = this.sub.poll?.();
    }
  };

  private writeFrames(b: SubscriptionBatch | undefined): void {
    this.first = b;
    this.ok = true;
    this.sink.cork(this.corked);
    if (!this.ok) { this.stalled(); return; }
    const sub = this.sub;
    if (sub.atTail && sub.onReady && sub.atTail()) this.waitAtTail();
    else fanOut.enqueue(this); // more at hand, a history read, or an error for next() to raise
  }

  /** Cut off at the stall bound: the connection is gone; end the pump now (the sink's close would
   *  too, but on node:http only a tick later). */
  private readonly cutOff = (): void => { this.drainWait = undefined; this.finish(); };

  private readonly drained = (): void => {
    this.drainWait = undefined;
    fanOut.enqueue(this);
  };

  /** The slow path: a read from history or settled segments, a generic Subscription, or an error. */
  private async slow(): Promise<void> {
    let batch: SubscriptionBatch;
    this.slowPending = true;
    try {
      batch = await this.sub.next();
    } catch (err) {
      const e = asServiceError(err);
      // A break the caller converges from by reconnecting with its cursor (the lease moved to
      // another star, the star drains) simply ends the stream, as a shutdown does (spec: Events,
      // rule 5: no error frame for a mid-stream break). The error frame is for an end that a
      // reconnect would meet again: the stream trimmed under the cursor or deleted (rule 6).
      this.finish(e.retryable ? undefined : `event: error\ndata: ${JSON.stringify(e.toBody())}\n\n`);
      return;
    } finally {
      this.slowPending = false;
    }
    if (this.ended || this.sink.closed) return;
    this.writeFrames(batch);
  }
}

/** Runs one subscription's event stream; the answer ends it cleanly (a stopping star). */
export function pumpSse(sink: SseSink, sub: Subscription, base64: boolean, opts: SsePumpOptions = {}): () => void {
  const pump = new SsePump(sink, sub, base64, opts);
  fanOut.enqueue(pump);
  return () => pump.finish();
}
