// The producer: batches records, pipelines batches with a bounded window, pushes back on its caller,
// and retries only what is safe.
//
//   submit(record)  waits while the records submitted and not yet acknowledged weigh more than
//                   `bufferBytesMax` (backpressure), then adds the record to the open batch and
//                   returns a ticket whose ack() resolves once the record is durable.
//   batching        a batch closes at `batchRecordsMax` records, at `batchBytesMax` bytes, or
//                   `lingerMs` after its first record, whichever comes first.
//   window          at most `inflightBatchesMax` batches are in flight at once. Over HTTP one-shot
//                   appends carry no order between concurrent requests, so without match_seq_num the
//                   window is 1 there; with match_seq_num every batch is pinned to its position, a
//                   batch that overtakes its predecessor is refused (412, nothing appended) and sent
//                   again in turn. A gRPC session keeps order, so it pipelines either way.
//   settlement      batches are settled strictly in order: a batch's records are acknowledged only
//                   after every earlier batch's. Only the batch at the head retries (with backoff);
//                   a later batch gets one attempt, and if that fails it is sent again once it is the
//                   head. While a batch is being sent again no new batch goes out, so after a session
//                   dies its batches are re-sent one by one in order, never racing each other into a
//                   new session (where a batch pinned past its predecessor would end it again).
//   retries         each batch goes through appendSafely (append.ts): definite refusals worth it are
//                   retried; ambiguous failures only under match_seq_num (read-back decides whether
//                   an earlier attempt landed), and otherwise surfaced as AmbiguousAppendError.
//   failure         the first batch that fails for good fails the producer: its records and every
//                   later batch's records that were not acknowledged are rejected (never-sent ones with
//                   kind `closed`, ambiguous: false, so a caller knows they are not in the stream), and
//                   submit/flush/close throw that first error.
//
// Browser-safe.

import { APPEND_RECORDS_MAX, BATCH_CONTENT_BYTES_MAX } from '../protocol/limits.ts';
import { appendSafely, type AppendIo, type RetryEvent } from './append.ts';
import { AmbiguousAppendError, SvcError } from './errors.ts';
import { RECORD_JSON_OVERHEAD_BYTES, recordBytes } from './http/records.ts';
import { DEFAULT_RETRY, backoffMs, sleep, type RetryPolicy } from './retry.ts';
import type { AppendAck, AppendOptions, AppendRecord, Position, ReadRecord } from './types.ts';

/** Default linger: long enough to gather a burst, short enough to be invisible to a person. */
export const LINGER_MS_DEFAULT = 5;
export const BATCH_RECORDS_MAX_DEFAULT = 1000;
/** The server's cap on records per batch. */
export const BATCH_RECORDS_MAX_LIMIT = APPEND_RECORDS_MAX;
export const BATCH_BYTES_MAX_DEFAULT = 1024 * 1024;
/** The server's cap on a batch's content. */
export const BATCH_BYTES_MAX_LIMIT = BATCH_CONTENT_BYTES_MAX;
export const INFLIGHT_BATCHES_MAX_DEFAULT = 8;
export const BUFFER_BYTES_MAX_DEFAULT = 32 * 1024 * 1024;
/** Producer retries last longer than a request's: a star restart takes seconds. */
export const PRODUCER_RETRY_DEFAULT: Readonly<RetryPolicy> = { ...DEFAULT_RETRY, attemptsMax: 30 };

/** Where batches go: HTTP one-shot appends or a gRPC session. */
export interface BatchSink {
  /** Batches sent in order land in order (a gRPC session), so pipelining needs no match_seq_num. */
  readonly ordered: boolean;
  /** One attempt; throws SvcError (ambiguous when the outcome is unknown). */
  append(records: readonly AppendRecord[], opts: AppendOptions): Promise<AppendAck>;
  readRange(start: number, count: number): Promise<ReadRecord[]>;
  /** One attempt, like append: the producer retries under its own policy. */
  checkTail(): Promise<Position>;
  close(): Promise<void>;
}

export interface ProducerOptions {
  lingerMs?: number;
  batchRecordsMax?: number;
  batchBytesMax?: number;
  inflightBatchesMax?: number;
  /** Backpressure: submitted but unacknowledged bytes (content plus a per-record overhead). */
  bufferBytesMax?: number;
  /** Pin every batch with match_seq_num: a number to start there, or 'tail' to read the tail first.
   *  Makes retries exact and pipelining safe; fails if another writer appends meanwhile. */
  matchSeqNum?: number | 'tail';
  fencingToken?: string;
  retry?: Partial<RetryPolicy>;
  onRetry?: (e: RetryEvent) => void;
}

export interface RecordAck {
  seq_num: number;
  /** The durable batch the record landed in. */
  batch: AppendAck;
}

export interface Ticket {
  /** Resolves once the record is durable; rejects with the batch's SvcError. */
  ack(): Promise<RecordAck>;
}

export interface ProducerStats {
  records: number;
  batches: number;
  /** Attempts that failed and were retried. */
  retries: number;
  /** Ambiguous attempts that the read-back proved had landed. */
  recovered: number;
}

interface Batch {
  records: AppendRecord[];
  weight: number;
  bytes: number;
  match?: number;
  state: { uncertain: boolean };
  /** Sent with the full retry policy (as the head), not a single pipelined attempt. */
  retried: boolean;
  /** Sent again after a failed attempt, and not yet settled. */
  resent: boolean;
  result?: Promise<AppendAck>;
  settled?: { ok: true; ack: AppendAck } | { ok: false; err: SvcError };
  done: Promise<AppendAck>;
  resolve(a: AppendAck): void;
  reject(e: SvcError): void;
}

function newBatch(): Batch {
  let resolve!: (a: AppendAck) => void;
  let reject!: (e: SvcError) => void;
  const done = new Promise<AppendAck>((res, rej) => { resolve = res; reject = rej; });
  done.catch(() => {}); // rejections reach whoever asks for a ticket's ack; never unhandled
  return { records: [], weight: 0, bytes: 0, state: { uncertain: false }, retried: false, resent: false, done, resolve, reject };
}

export class Producer {
  readonly stats: ProducerStats = { records: 0, batches: 0, retries: 0, recovered: 0 };
  /** The ack of the latest batch acknowledged (its tail is the stream's tail as of then). */
  lastAck: AppendAck | undefined;
  private readonly lingerMs: number;
  private readonly batchRecordsMax: number;
  private readonly batchBytesMax: number;
  private readonly window: number;
  private readonly bufferBytesMax: number;
  private readonly retry: RetryPolicy;
  private open: Batch | undefined;
  private lingerTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly queued: Batch[] = [];
  private readonly inflight: Batch[] = [];
  private bufferedWeight = 0;
  private readonly roomWaiters: (() => void)[] = [];
  private nextMatch: number | undefined;
  private matchReady: Promise<void> | undefined;
  private failure: SvcError | undefined;
  private closed = false;
  private settling = false;
  /** A batch is being sent again: hold new batches back until the in-flight ones are settled. */
  private recovering = false;
  private readonly io: AppendIo;

  constructor(private readonly sink: BatchSink, private readonly opts: ProducerOptions = {}) {
    this.lingerMs = opts.lingerMs ?? LINGER_MS_DEFAULT;
    this.batchRecordsMax = Math.min(opts.batchRecordsMax ?? BATCH_RECORDS_MAX_DEFAULT, BATCH_RECORDS_MAX_LIMIT);
    this.batchBytesMax = Math.min(opts.batchBytesMax ?? BATCH_BYTES_MAX_DEFAULT, BATCH_BYTES_MAX_LIMIT);
    const pinned = opts.matchSeqNum !== undefined;
    this.window = sink.ordered || pinned ? Math.max(1, opts.inflightBatchesMax ?? INFLIGHT_BATCHES_MAX_DEFAULT) : 1;
    this.bufferBytesMax = opts.bufferBytesMax ?? BUFFER_BYTES_MAX_DEFAULT;
    this.retry = { ...PRODUCER_RETRY_DEFAULT, ...(opts.retry ?? {}) };
    if (typeof opts.matchSeqNum === 'number') this.nextMatch = opts.matchSeqNum;
    this.io = { attempt: (records, o) => sink.append(records, o), readRange: (s, n) => sink.readRange(s, n) };
    if (this.lingerMs < 0 || this.batchRecordsMax < 1 || this.batchBytesMax < 1 || this.bufferBytesMax < 1) {
      throw new RangeError('producer options: lingerMs >= 0, batchRecordsMax, batchBytesMax and bufferBytesMax >= 1');
    }
  }

  /** Weight (content bytes plus a per-record overhead) submitted and not yet acknowledged: kept at or
   *  under bufferBytesMax, except for one record larger than it alone. */
  get bufferedBytes(): number {
    return this.bufferedWeight;
  }

  /** Batches sent and not yet settled: at most the window. */
  get inflightBatches(): number {
    return this.inflight.length;
  }

  /** The error that stopped the producer, if any. */
  get error(): SvcError | undefined {
    return this.failure;
  }

  /** Adds a record, after waiting for room (backpressure). The ticket's ack() resolves once durable. */
  async submit(record: AppendRecord): Promise<Ticket> {
    const bytes = recordBytes(record);
    const weight = bytes + RECORD_JSON_OVERHEAD_BYTES;
    // A record alone over the buffer still goes (it waits for an empty buffer), or nothing could.
    while (this.bufferedWeight > 0 && this.bufferedWeight + weight > this.bufferBytesMax && !this.failure) {
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
    }
    if (this.failure) throw this.failure;
    if (this.closed) throw new SvcError('closed', 'the producer is closed');
    let b = this.open;
    if (b && (b.records.length >= this.batchRecordsMax || (b.bytes + bytes > this.batchBytesMax && b.records.length > 0))) {
      this.closeOpen();
      b = undefined;
    }
    if (!b) {
      b = newBatch();
      this.open = b;
      if (this.lingerMs > 0) this.lingerTimer = setTimeout(() => { this.lingerTimer = undefined; this.closeOpen(); }, this.lingerMs);
    }
    const index = b.records.length;
    b.records.push(record);
    b.bytes += bytes;
    b.weight += weight;
    this.bufferedWeight += weight;
    this.stats.records++;
    const batch = b;
    if (this.lingerMs === 0 || b.records.length >= this.batchRecordsMax || b.bytes >= this.batchBytesMax) this.closeOpen();
    return { ack: () => batch.done.then((a) => ({ seq_num: a.start.seq_num + index, batch: a })) };
  }

  /** submit, then wait for durability. */
  async append(record: AppendRecord): Promise<RecordAck> {
    return (await this.submit(record)).ack();
  }

  /** Sends the open batch now and waits until everything submitted so far is durable. */
  async flush(): Promise<void> {
    this.closeOpen();
    const pending = [...this.queued, ...this.inflight].map((b) => b.done);
    await Promise.allSettled(pending);
    if (this.failure) throw this.failure;
  }

  /** Flushes, then refuses further records and closes the sink. */
  async close(): Promise<void> {
    try {
      await this.flush();
    } finally {
      this.closed = true;
      await this.sink.close();
    }
  }

  private closeOpen(): void {
    if (this.lingerTimer !== undefined) { clearTimeout(this.lingerTimer); this.lingerTimer = undefined; }
    const b = this.open;
    this.open = undefined;
    if (!b || b.records.length === 0) return;
    this.queued.push(b);
    this.pump();
  }

  /** The tail that pins the first batch (`matchSeqNum: 'tail'`), read under the producer's retry
   *  policy: a read is safe to repeat, so a star that is restarting does not end the producer. */
  private async tailRetried(): Promise<Position> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.sink.checkTail();
      } catch (err) {
        const e = err instanceof SvcError ? err : new SvcError('unknown', String(err), { cause: err });
        if (!e.retryable || attempt >= this.retry.attemptsMax) throw e;
        const delayMs = backoffMs(this.retry, attempt, e.retryAfterMs);
        this.stats.retries++;
        this.opts.onRetry?.({ error: e, attempt, delayMs });
        await sleep(delayMs);
      }
    }
  }

  /** Sends queued batches while the window has room. */
  private pump(): void {
    if (this.failure) return;
    if (this.opts.matchSeqNum === 'tail' && this.nextMatch === undefined) {
      this.matchReady ??= this.tailRetried().then(
        (t) => { this.nextMatch ??= t.seq_num; this.pump(); },
        (err: unknown) => {
          // A stream that does not exist yet starts at 0 (its bucket may create it on the first
          // append; if not, that append says not_found).
          if (err instanceof SvcError && err.kind === 'not_found') { this.nextMatch ??= 0; this.pump(); return; }
          this.fail(err instanceof SvcError ? err : new SvcError('unknown', String(err), { cause: err }));
        },
      );
      return;
    }
    if (this.recovering) return;
    while (this.queued.length > 0 && this.inflight.length < this.window) {
      const b = this.queued.shift()!;
      if (this.nextMatch !== undefined) {
        b.match = this.nextMatch;
        this.nextMatch += b.records.length;
      }
      const head = this.inflight.length === 0;
      this.inflight.push(b);
      this.stats.batches++;
      this.send(b, head);
    }
  }

  /** One attempt, or (`retry`: the head) attempts per the retry policy. */
  private send(b: Batch, retry: boolean): void {
    b.settled = undefined;
    b.retried ||= retry;
    b.result = appendSafely(this.io, b.records, {
      retry: retry ? this.retry : { ...this.retry, attemptsMax: 1 },
      state: b.state,
      ...(b.match !== undefined ? { matchSeqNum: b.match } : {}),
      ...(this.opts.fencingToken !== undefined ? { fencingToken: this.opts.fencingToken } : {}),
      onRetry: (e) => { this.stats.retries++; this.opts.onRetry?.(e); },
    }).then((r) => {
      if (r.recovered) this.stats.recovered++;
      return r.ack;
    });
    b.result.then(
      (ack) => { b.settled = { ok: true, ack }; this.settle(); },
      (err: unknown) => { b.settled = { ok: false, err: err instanceof SvcError ? err : new SvcError('unknown', String(err), { cause: err }) }; this.settle(); },
    );
  }

  /** Settles in-flight batches in order, from the head. */
  private settle(): void {
    if (this.settling) return;
    this.settling = true;
    try {
      while (this.inflight.length > 0) {
        const head = this.inflight[0];
        const s = head.settled;
        if (!s) break;
        if (s.ok) {
          this.inflight.shift();
          this.release(head);
          this.lastAck = s.ack;
          head.resolve(s.ack);
          continue;
        }
        const err = s.err;
        // Overtook a predecessor (HTTP under match_seq_num): nothing appended; now it is its turn.
        const early = err.kind === 'seq_mismatch' && head.match !== undefined && err.tail !== undefined && err.tail.seq_num < head.match;
        // Had one pipelined attempt only, and a retry is safe: now it retries as the head.
        const safeRetry = !head.retried && !(err instanceof AmbiguousAppendError) && (err.ambiguous ? head.match !== undefined : err.retryable);
        if (!this.failure && (early || safeRetry)) {
          head.resent = true;
          this.stats.retries++;
          this.send(head, true);
          break;
        }
        this.inflight.shift();
        this.release(head);
        head.reject(err);
        this.fail(err);
      }
    } finally {
      this.settling = false;
    }
    this.recovering = this.inflight.some((b) => (b.resent && b.settled === undefined) || (b.settled !== undefined && !b.settled.ok));
    this.pump();
  }

  private release(b: Batch): void {
    this.bufferedWeight -= b.weight;
    const waiters = this.roomWaiters.splice(0);
    for (const w of waiters) w();
  }

  /** Stops the producer at its first lasting failure (see the file comment). */
  private fail(err: SvcError): void {
    if (this.failure) return;
    this.failure = err;
    if (this.lingerTimer !== undefined) { clearTimeout(this.lingerTimer); this.lingerTimer = undefined; }
    const notSent = [...this.queued.splice(0), ...(this.open ? [this.open] : [])];
    this.open = undefined;
    for (const b of notSent) {
      this.release(b);
      b.reject(new SvcError('closed', `not sent: an earlier batch failed (${err.message})`, { cause: err }));
    }
    // In-flight batches settle by themselves (settle() keeps rejecting or acknowledging them in order).
    const waiters = this.roomWaiters.splice(0);
    for (const w of waiters) w();
  }
}
