// A live subscription over SSE that resumes by itself.
//
// It reads GET …/records/subscribe with a streaming fetch (EventSource cannot send Authorization),
// yields each batch frame, and keeps the frame id as its cursor. When the connection drops, the star
// restarts or shuts down (the stream simply ends), the server answers 503/429, or nothing at all
// arrives for `heartbeatSilenceMs` (the server sends `: hb` every 15 s, so a silent connection is a
// dead one), it reconnects with `Last-Event-ID: <cursor>`: nothing skipped, nothing repeated. Each
// batch is also checked to start exactly at the cursor, so a gap or a repeat is an error, never data.
// On `event: auth-expired` or a 401 it asks the token provider for a fresh token and reconnects.
// `event: error` (the stream was trimmed under the cursor or deleted) ends it with an SvcError.
//
// Browser-safe: fetch, ReadableStream, AbortController.

import type { RecordPage } from '../protocol/records.ts';
import { SvcError, kindOfStatus } from './errors.ts';
import { decodeRecordsAnswer } from './http/records.ts';
import { errorFromAnswer, noAnswerError, type HttpTransport } from './http/transport.ts';
import { backoffMs, sleep, type RetryPolicy } from './retry.ts';
import { SseParser, type SseFrame } from './sse.ts';
import type { Position } from './types.ts';

/** The server's heartbeat is 15 s; three missed ones mean the connection is dead. */
export const HEARTBEAT_SILENCE_MS_DEFAULT = 45_000;
/** Failed connects in a row (no batch in between) before the subscription gives up. */
export const RECONNECT_ATTEMPTS_MAX_DEFAULT = 40;
/** Backoff between reconnects. */
export const RECONNECT_BACKOFF: Readonly<RetryPolicy> = { attemptsMax: RECONNECT_ATTEMPTS_MAX_DEFAULT, backoffMsMin: 50, backoffMsMax: 2_000 };
/** Deadline of the connect itself (until the answer's headers arrive). */
const CONNECT_TIMEOUT_MS = 30_000;

/** One batch: its records, and as `tail` the position after its last record. */
export interface SubscriptionBatch extends RecordPage {
  /** The cursor: the sequence number the next batch starts at. */
  next: number;
}

export type SubscriptionEvent =
  | { type: 'connected'; cursor: number | undefined }
  | { type: 'reconnecting'; reason: 'ended' | 'silence' | 'auth-expired' | 'error'; error?: SvcError; delayMs: number; cursor: number | undefined };

export interface SubscribeOptions {
  /** Where to start: a sequence number, a time, or an offset before the tail (resolved once). */
  start: { seqNum: number } | { timestampMs: number } | { tailOffset: number };
  heartbeatSilenceMs?: number;
  /** Failed connects in a row before giving up. */
  reconnectAttemptsMax?: number;
  signal?: AbortSignal;
  /** Told about every (re)connection, for logs and tests. */
  onEvent?: (e: SubscriptionEvent) => void;
}

/** What the subscription needs from the client: the transport and the stream's paths. */
export interface SubscriptionTarget {
  transport: HttpTransport;
  /** `/v1/streams/{bucket}/{key}` */
  streamPath: string;
  checkTail(signal?: AbortSignal): Promise<Position>;
  /** Where a start `offset` records before the tail is (a read from tail_offset, clamped): past the
   *  retained history it is the earliest retained record, never a trimmed one, which a subscription
   *  could not start at (410). */
  offsetStart(offset: number, signal?: AbortSignal): Promise<number>;
}

type Outcome = { kind: 'ended' } | { kind: 'silence' } | { kind: 'auth-expired' };

export class Subscription implements AsyncIterable<SubscriptionBatch> {
  /** The next sequence number to deliver (undefined until known for a time start). */
  cursor: number | undefined;
  private readonly ctrl = new AbortController();
  private started = false;

  constructor(private readonly target: SubscriptionTarget, private readonly opts: SubscribeOptions) {
    if ('seqNum' in opts.start) this.cursor = opts.start.seqNum;
    if (opts.signal) {
      if (opts.signal.aborted) this.ctrl.abort(opts.signal.reason);
      else opts.signal.addEventListener('abort', () => this.ctrl.abort(opts.signal!.reason), { once: true });
    }
  }

  /** Ends the subscription: the iterator finishes and the connection closes. */
  close(): void {
    this.ctrl.abort(new SvcError('aborted', 'subscription closed'));
  }

  [Symbol.asyncIterator](): AsyncIterator<SubscriptionBatch> {
    if (this.started) throw new TypeError('a Subscription is iterated once');
    this.started = true;
    return this.run();
  }

  private async *run(): AsyncGenerator<SubscriptionBatch> {
    const signal = this.ctrl.signal;
    const attemptsMax = this.opts.reconnectAttemptsMax ?? RECONNECT_ATTEMPTS_MAX_DEFAULT;
    const start = this.opts.start;
    if ('tailOffset' in start) this.cursor = await this.target.offsetStart(start.tailOffset, signal);
    let failures = 0;
    let refresh = false;
    try {
      while (!signal.aborted) {
        let outcome: Outcome | undefined;
        let error: SvcError | undefined;
        const before = this.cursor;
        let progressed = false;
        try {
          for await (const item of this.connect(refresh)) {
            if ('outcome' in item) { outcome = item.outcome; break; }
            progressed = true;
            failures = 0;
            yield item.batch;
          }
        } catch (err) {
          if (signal.aborted) return;
          if (!(err instanceof SvcError)) throw err;
          if (!err.retryable && err.kind !== 'unauthenticated') throw err;
          if (err.kind === 'unauthenticated') {
            if (refresh || !this.target.transport.canRefreshToken) throw err; // a fresh token was refused too
          }
          error = err;
        }
        if (signal.aborted) return; // closed: the connection's end is not a drop to tell of
        refresh = outcome?.kind === 'auth-expired' || error?.kind === 'unauthenticated';
        if (!progressed) failures++;
        if (failures >= attemptsMax) {
          throw error ?? new SvcError('unavailable', `subscription: ${failures} connections in a row delivered nothing`);
        }
        // A clean end after progress (a star shutting down) reconnects at once; failures back off.
        const delayMs = failures === 0 ? 0 : backoffMs(RECONNECT_BACKOFF, failures, error?.retryAfterMs);
        const reason = outcome?.kind ?? 'error';
        this.opts.onEvent?.({ type: 'reconnecting', reason, ...(error ? { error } : {}), delayMs, cursor: this.cursor ?? before });
        if (delayMs > 0) await sleep(delayMs, signal);
      }
    } catch (err) {
      if (signal.aborted && err instanceof SvcError && err.kind === 'aborted') return;
      throw err;
    }
  }

  /** One connection: yields batches, then how it ended; throws SvcError when it failed. */
  private async *connect(refresh: boolean): AsyncGenerator<{ batch: SubscriptionBatch } | { outcome: Outcome }> {
    const { transport, streamPath } = this.target;
    const conn = new AbortController();
    const onAbort = (): void => conn.abort(this.ctrl.signal.reason);
    this.ctrl.signal.addEventListener('abort', onAbort, { once: true });
    const silenceMs = this.opts.heartbeatSilenceMs ?? HEARTBEAT_SILENCE_MS_DEFAULT;
    let silent = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = (ms: number): void => {
      if (timer !== undefined) clearTimeout(timer);
      timer = setTimeout(() => { silent = true; conn.abort(new SvcError('timeout', 'heartbeat silence')); }, ms);
    };
    const disarm = (): void => { if (timer !== undefined) clearTimeout(timer); timer = undefined; };
    const path = `${streamPath}/records/subscribe`;
    try {
      const headers: Record<string, string> = { accept: 'text/event-stream', ...(await transport.authHeaders(refresh)) };
      const query: Record<string, number | undefined> = {};
      const start = this.opts.start;
      if (this.cursor !== undefined) headers['last-event-id'] = String(this.cursor);
      else if ('timestampMs' in start) query.timestamp_ms = start.timestampMs;
      arm(Math.max(silenceMs, CONNECT_TIMEOUT_MS));
      let res: Response;
      try {
        res = await transport.fetchRaw(transport.url(path, query), { method: 'GET', headers, signal: conn.signal }, false, this.ctrl.signal);
      } catch (err) {
        if (silent) throw new SvcError('timeout', 'subscribe: no answer to the connect', { cause: err });
        throw err;
      }
      if (!res.ok) {
        const text = await res.text().catch(() => '');
        let parsed: unknown;
        try { parsed = JSON.parse(text); } catch { parsed = undefined; }
        throw errorFromAnswer({ method: 'GET', path }, res.status, res.headers, parsed, text, false);
      }
      if (!res.body) throw new SvcError('protocol', 'subscribe: the answer has no body');
      this.opts.onEvent?.({ type: 'connected', cursor: this.cursor });
      const reader = res.body.getReader();
      const parser = new SseParser();
      arm(silenceMs);
      try {
        for (;;) {
          let chunk: Awaited<ReturnType<typeof reader.read>>;
          try {
            chunk = await reader.read();
          } catch (err) {
            if (this.ctrl.signal.aborted) return;
            if (silent) { yield { outcome: { kind: 'silence' } }; return; }
            throw noAnswerError(err, false, this.ctrl.signal);
          }
          if (chunk.done) { yield { outcome: { kind: 'ended' } }; return; }
          arm(silenceMs);
          const out = { frames: [] as SseFrame[], comments: 0 };
          parser.push(chunk.value, out);
          for (const f of out.frames) {
            if (f.event === 'auth-expired') { yield { outcome: { kind: 'auth-expired' } }; return; }
            if (f.event === 'error') throw await this.streamError(f.data);
            if (f.event !== 'message') continue;
            const batch = this.accept(f);
            if (!batch) continue;
            disarm(); // the consumer's pace is not the connection's silence
            yield { batch };
            arm(silenceMs);
          }
        }
      } finally {
        reader.cancel().catch(() => {});
      }
    } finally {
      disarm();
      this.ctrl.signal.removeEventListener('abort', onAbort);
      conn.abort();
    }
  }

  /** Checks a batch frame against the cursor; drops records already delivered. */
  private accept(f: SseFrame): SubscriptionBatch | undefined {
    let parsed: unknown;
    try { parsed = JSON.parse(f.data); } catch { throw new SvcError('protocol', 'subscribe: a batch frame is not JSON'); }
    const { records, tail } = decodeRecordsAnswer(parsed, 'subscribe batch');
    const next = Number(f.id);
    if (f.id === undefined || !Number.isSafeInteger(next)) throw new SvcError('protocol', 'subscribe: a batch frame has no numeric id');
    let fresh = records;
    if (this.cursor !== undefined) {
      fresh = records.filter((r) => r.seq_num >= this.cursor!);
      if (fresh.length > 0 && fresh[0].seq_num !== this.cursor) {
        throw new SvcError('protocol', `subscribe: expected seq_num ${this.cursor} next, got ${fresh[0].seq_num}`);
      }
    }
    for (let i = 1; i < fresh.length; i++) {
      if (fresh[i].seq_num !== fresh[i - 1].seq_num + 1) throw new SvcError('protocol', `subscribe: a gap inside a batch at ${fresh[i].seq_num}`);
    }
    if (fresh.length === 0) return undefined;
    this.cursor = next;
    return { records: fresh, tail, next };
  }

  /** `event: error`: the stream was deleted (not_found) or trimmed under the cursor (trimmed); the
   *  frame says why in words only, so the tail is asked to tell the two apart. */
  private async streamError(data: string): Promise<SvcError> {
    let reason = data;
    try {
      const o = JSON.parse(data) as { error?: unknown };
      if (typeof o.error === 'string') reason = o.error;
    } catch { /* keep the raw text */ }
    let kind = kindOfStatus(410, {});
    try {
      await this.target.checkTail(this.ctrl.signal);
    } catch (err) {
      if (err instanceof SvcError && err.kind === 'not_found') kind = 'not_found';
    }
    return new SvcError(kind, `subscription ended by the server: ${reason}`);
  }
}
