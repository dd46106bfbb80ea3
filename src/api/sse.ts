// The SSE pump: pull one batch, write its frame, wait for the socket to drain, pull the next (one
// batch in flight per subscriber). Each committed batch's frame is encoded once and shared by every
// subscriber that receives the same batch object. Heartbeats every 15 s; a consumer that has not
// drained for 60 s is cut off.

import { SSE_HEARTBEAT_MS, SSE_STALL_MS } from '../config/limits.ts';
import { asServiceError } from '../core/errors.ts';
import type { Subscription, SubscriptionBatch } from '../core/service-api.ts';
import type { SseSink } from './exchange.ts';
import { encodeRecord } from './wire.ts';

const frames = [new WeakMap<SubscriptionBatch, Buffer>(), new WeakMap<SubscriptionBatch, Buffer>()];

export function encodeBatchFrame(b: SubscriptionBatch, base64: boolean): Buffer {
  const cache = frames[base64 ? 1 : 0];
  let f = cache.get(b);
  if (!f) {
    const data = JSON.stringify({ records: b.records.map((r) => encodeRecord(r, base64)), tail: b.tail });
    f = Buffer.from(`id: ${b.tail.seq_num}\ndata: ${data}\n\n`, 'utf8');
    cache.set(b, f);
  }
  return f;
}

/** The longest delay a Node timer takes. */
const TIMER_MS_MAX = 2 ** 31 - 1;

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

export function pumpSse(sink: SseSink, sub: Subscription, base64: boolean, opts: SsePumpOptions = {}): void {
  let ended = false;
  let stalledSince = 0;
  let expiry: ReturnType<typeof setTimeout> | undefined;
  const finish = (tail?: string, hard = false): void => {
    if (ended) return;
    ended = true;
    clearInterval(hb);
    if (expiry) clearTimeout(expiry);
    sub.close();
    if (!sink.closed) {
      if (hard) sink.destroy();
      else {
        if (tail) sink.write(tail);
        sink.end();
      }
    }
    opts.onEnd?.();
  };
  const hbMs = opts.heartbeatMs ?? SSE_HEARTBEAT_MS;
  const stallMs = opts.stallMs ?? SSE_STALL_MS;
  const hb = setInterval(() => {
    if (stalledSince && Date.now() - stalledSince >= stallMs) { finish(undefined, true); return; }
    if (!stalledSince) sink.write(': hb\n\n');
  }, Math.min(hbMs, stallMs));
  // Timers hold at most 2^31-1 ms (about 24.8 days): a later exp re-arms until it is in reach.
  const armExpiry = (at: number): void => {
    const left = at - Date.now();
    expiry = left > TIMER_MS_MAX
      ? setTimeout(() => armExpiry(at), TIMER_MS_MAX)
      : setTimeout(() => finish('event: auth-expired\ndata: {}\n\n'), Math.max(0, left));
  };
  if (opts.expiresAtMs !== undefined) armExpiry(opts.expiresAtMs);
  sink.onClose(() => finish());

  const loop = async (): Promise<void> => {
    while (!ended) {
      let batch: SubscriptionBatch;
      try {
        batch = await sub.next();
      } catch (err) {
        const e = asServiceError(err);
        finish(`event: error\ndata: ${JSON.stringify(e.toBody())}\n\n`);
        return;
      }
      if (ended || sink.closed) return;
      if (!sink.write(encodeBatchFrame(batch, base64))) {
        stalledSince = Date.now();
        await new Promise<void>((resolve) => sink.onWritable(resolve));
        stalledSince = 0;
      }
    }
  };
  void loop();
}
