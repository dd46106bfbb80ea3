// ProducerSession: a pipelined producer on one stream, with no transport in it. The gRPC
// AppendSession (api/grpc/append-session.ts) is an adapter over it: it decodes messages, authorizes
// the caller, and maps acks and failures to its wire; what follows is decided here, on the Clock
// and Timers ports, so a virtual clock drives it in tests as it drives the Star.
//
// Open. The session names a stream and a fencing token. Once the transport has admitted the caller,
// the token is checked against the stream as an append would be: on a `fenced` stream (or one with
// a token installed) a missing or different token fails the open with fence_mismatch. A missing
// stream is not_found unless its bucket creates streams on append.
//
// Batches. Every client batch is acknowledged by exactly one ack, in order. A client batch over the
// stream's batch_max_records / batch_max_bytes is refused (invalid_argument), with the core's own
// checkBatchCaps. With batch_max_delay_ms = 0 (the default) each client batch is one durable batch,
// handed to the core as soon as it arrives, so many are in flight at once. With a delay, client
// batches arriving within it are coalesced into one durable batch (a producer-side "linger", as
// Kafka's linger.ms or S2's batching), flushed when the next would pass either cap (or the
// service's own APPEND_RECORDS_MAX / BATCH_CONTENT_BYTES_MAX), when the delay since the group's
// first batch runs out, when a batch carries match_seq_num (it starts a group of its own: its match
// is the group's), or when the client finishes. Coalesced batches are acked one by one, with exact
// positions. throughput_max_bytes_per_second paces the session: a token bucket (the core's pace(),
// one second of burst) over record content; while it is in deficit the session stops reading, so
// the transport's flow control pushes back on the producer instead of anything being refused. (The
// core paces each append on the stream's own bucket as well, as it does for HTTP appends.)
//
// Flow control. While unacknowledged batches weigh more than APPEND_SESSION_INFLIGHT_BYTES_MAX (or
// number APPEND_SESSION_INFLIGHT_BATCHES_MAX) the session stops reading the client. An ack counts as
// drained once the transport has taken it (sink.ack resolved), so a producer that stops reading acks
// stalls too.
//
// Ending. The first failed batch ends the session with its error, and no batch after it is appended
// (the core refuses every later batch of the session's AppendChain, even one already handed to it and
// waiting for a lease or its turn under a cap), so the producer's order has no hole: it reopens and
// sends again from the first unacknowledged batch. The session also ends, after delivering the
// acks of every batch already handed to the core, when:
//   - a Fence installs a token this session's token does not admit: fence_mismatch with the token;
//   - a reconfigure hands the stream off (class, policy, timestamping, batching or throughput changed):
//     unavailable, once; reopen and continue (the new session runs under the new config);
//   - the stream is deleted: not_found;
//   - the transport ends it (end(): a credential's expiry, shutdown), with the transport's reason.
// Batches not yet handed to the core (coalescing, or waiting behind an auto-creating first batch)
// are dropped then: they were never appended. A batch refused as bad (refuse(): a message the
// transport cannot decode, or one over the stream's caps) ends the session the same way, except that
// every batch before it, still coalescing or waiting behind the creating batch, is appended and
// acked first: they were valid, and the producer is owed their acks.
//
// Ordering relies on StreamService.append admitting calls in the order they are made. The one
// exception is an append that first auto-creates its stream; so while the stream does not exist the
// first durable batch goes alone and the rest follow once it is acknowledged.

import {
  APPEND_RECORDS_MAX, APPEND_SESSION_DELAY_MS_MAX, APPEND_SESSION_INFLIGHT_BATCHES_MAX, APPEND_SESSION_INFLIGHT_BYTES_MAX,
  APPEND_SESSION_RECORD_OVERHEAD_BYTES, BATCH_CONTENT_BYTES_MAX, READ_BYTES_MAX, READ_RECORDS_MAX,
} from '../config/limits.ts';
import { ServiceError } from './errors.ts';
import type { Clock, Timers } from './ports.ts';
import { checkBatchCaps, checkFence, pace, type PaceState } from './sequencer.ts';
import type { StreamService } from './service-api.ts';
import { streamDefaultsOf, type AppendAck, type AppendChain, type AppendInput, type EncodedBatch, type RecordInput, type StreamConfig } from './types.ts';

export interface ProducerSessionDeps {
  service: StreamService;
  clock: Clock;
  timers: Timers;
}

/** How a session ended: `finished` once the client finished and every batch was acknowledged;
 *  `failed` with the first failed batch's error, the event that ended it (a ServiceError), or the
 *  reason the transport passed to end() / refuse(). */
export type ProducerSessionEnd = { kind: 'finished' } | { kind: 'failed'; reason: unknown };

/** What the transport does for a session. No callback is made after `ended`, nor after abort(). */
export interface ProducerSessionSink {
  /** Delivers one ack, in order. Resolves once the transport has taken it (written to its stream):
   *  only then does the batch stop counting against the in-flight bounds. */
  ack(ack: AppendAck): Promise<void>;
  /** Stop / start reading client batches; called only on a change. */
  pause(): void;
  resume(): void;
  /** Called once. */
  ended(end: ProducerSessionEnd): void;
}

/** One durable batch: one or more client batches, appended with one core call. */
interface Group {
  entries: Entry[];
  records: number;
  bytes: number;
  match?: number;
  /** Set once handed over (or refused before it was). */
  ack?: Promise<AppendAck>;
  /** Coalesced groups: the timestamp of every record, read back once, for exact per-batch acks. */
  stamps?: Promise<number[] | undefined>;
}

/** One client batch. */
interface Entry {
  /** Its records, decoded; or, a batch a parse worker encoded, none and `encoded`. */
  records: RecordInput[];
  encoded?: EncodedBatch;
  /** How many records it holds. */
  count: number;
  bytes: number;
  weight: number;
  match?: number;
  group?: Group;
  /** Records before this entry in its group. */
  offset: number;
}

/** Why a group never reached the core: the session was ending. */
const NOT_SENT = Symbol('not sent');

type Phase = 'new' | 'opening' | 'open' | 'done';

export class ProducerSession {
  private phase: Phase = 'new';
  private bucket = '';
  private key = '';
  private token: string | undefined;
  private clientFinished = false;
  /** Set once the session is ending: the reason it ends with, after the acks already owed, and
   *  whether batches waiting behind the stream's creation are dropped (an end) or still sent (a
   *  refused batch: the ones before it were valid). */
  private stopping: { reason: unknown; dropWaiting: boolean } | undefined;
  private pumping = false;
  private paused = false;
  private inflightBytes = 0;
  /** Client batches not yet acknowledged, in order. */
  private readonly queue: Entry[] = [];
  private config: StreamConfig | undefined;
  /** False until the stream exists (a bucket creating streams on append) and is watched. */
  private streamExists = false;
  /** While the stream is being created: the last durable batch handed over, which the next waits on. */
  private gate: Promise<void> | undefined;
  /** The group still coalescing (absent without a linger). */
  private filling: Group | undefined;
  private lingerTimer: { cancel(): void } | undefined;
  private paceTimer: { cancel(): void } | undefined;
  /** Reading stays held until then (0: not pacing). */
  private paceUntilMs = 0;
  private paced: PaceState | undefined;
  /** Set once the stream is being watched (once per session: a second watcher would leak). */
  private watching = false;
  private unwatch: (() => void) | undefined;

  /** Every batch carries it: once one is refused, the core appends no later one (AppendChain). */
  private readonly chain: AppendChain = { broken: false };

  /** The caller's credential expires then: every batch carries it as its deadline (AppendInput). */
  private deadlineMs: number | undefined;

  constructor(private readonly d: ProducerSessionDeps, private readonly sink: ProducerSessionSink) {}

  /** The caller's exp, once authorized: a batch not sequenced by then is refused, never written. */
  setDeadline(ms: number | undefined): void { this.deadlineMs = ms; }

  /** True once the session has ended (or was aborted): further calls do nothing. */
  get ended(): boolean { return this.phase === 'done'; }

  /** True once the session is ending or has ended: batches offered now are dropped unread. */
  get ending(): boolean { return this.phase === 'done' || this.stopping !== undefined; }

  /**
   * Opens the session on a stream. Reading is held until `admit` (the transport's authorization)
   * resolves and the stream admits `token`; a failure of either ends the session at once.
   */
  start(bucket: string, key: string, token: string | undefined, admit: () => Promise<void>): void {
    if (this.phase !== 'new') return;
    this.bucket = bucket;
    this.key = key;
    this.token = token;
    this.phase = 'opening';
    this.updateFlow();
    let admitted: Promise<void>;
    try {
      admitted = admit();
    } catch (err) {
      this.fail(err);
      return;
    }
    admitted.then(() => this.openStream()).then(() => {
      if (this.phase !== 'opening') return;
      this.phase = 'open';
      this.updateFlow();
      this.settleIfIdle(); // a client that finished while the session was opening
    }).catch((err: unknown) => this.fail(err));
  }

  /** One client batch, with its records' content bytes. A batch over the stream's caps ends the
   *  session after the acks of every batch before it. A batch a parse worker encoded (`encoded`,
   *  `records` empty) is appended as its own durable batch: frames are not merged, and a batch that
   *  large (GRPC_WORKER_DECODE_BYTES_MIN) gains little from company. */
  offer(records: RecordInput[], bytes: number, match: number | undefined, encoded?: EncodedBatch): void {
    if (this.phase === 'done' || this.stopping) return;
    if (this.phase !== 'open') {
      this.fail(new ServiceError('invalid_argument', 'a batch arrived before the session was open'));
      return;
    }
    const cfg = this.config!;
    const count = encoded ? encoded.recordOffsets.length : records.length;
    try {
      checkBatchCaps(cfg, count, bytes);
    } catch (err) {
      this.refuse(err);
      return;
    }
    const e: Entry = { records, count, bytes, weight: bytes + count * APPEND_SESSION_RECORD_OVERHEAD_BYTES, offset: 0 };
    if (match !== undefined) e.match = match;
    if (encoded) e.encoded = encoded;
    this.queue.push(e);
    this.inflightBytes += e.weight;
    this.paceReading(bytes);

    const delayMs = Math.min(cfg.batch_max_delay_ms, APPEND_SESSION_DELAY_MS_MAX);
    const recordsCap = cfg.batch_max_records > 0 ? cfg.batch_max_records : APPEND_RECORDS_MAX;
    const bytesCap = cfg.batch_max_bytes > 0 ? Math.min(cfg.batch_max_bytes, BATCH_CONTENT_BYTES_MAX) : BATCH_CONTENT_BYTES_MAX;
    let g = this.filling;
    // A full group, or a batch that brings its own match_seq_num or frame, closes the filling group first.
    if (g && (match !== undefined || encoded || g.records + count > recordsCap || g.bytes + bytes > bytesCap)) {
      this.flush();
      g = undefined;
    }
    if (!g) {
      g = { entries: [], records: 0, bytes: 0 };
      if (match !== undefined) g.match = match;
      this.filling = g;
    }
    e.group = g;
    e.offset = g.records;
    g.entries.push(e);
    g.records += count;
    g.bytes += bytes;
    if (delayMs <= 0 || encoded || g.records >= recordsCap || g.bytes >= bytesCap) this.flush();
    else if (!this.lingerTimer) this.lingerTimer = this.d.timers.setTimeout(() => { this.lingerTimer = undefined; this.flush(); }, delayMs);
    this.updateFlow();
  }

  /** The client finished (half-closed): what is coalescing goes now; the session ends once acked. */
  finish(): void {
    if (this.phase === 'done') return;
    if (this.phase === 'new') { this.finishOk(); return; } // never opened: nothing was asked
    this.clientFinished = true;
    if (!this.stopping) this.flush();
    this.settleIfIdle();
  }

  /** A client message the transport refused: batches before it are sent, then the session ends with
   *  `reason` after their acks. Before the session is open it ends at once. */
  refuse(reason: unknown): void {
    if (this.phase === 'done' || this.stopping) return;
    if (this.phase !== 'open') {
      this.fail(reason);
      return;
    }
    this.flush();
    this.stop(reason, false);
  }

  /** Ends the session with `reason` once every batch already handed to the core is acknowledged;
   *  batches not yet handed over are dropped (never appended). */
  end(reason: unknown): void {
    this.stop(reason);
  }

  /** The transport is gone: stops at once, with no further callback. */
  abort(): void {
    if (this.phase === 'done') return;
    this.phase = 'done';
    this.cleanup();
  }

  // ---------------------------------------------------------------- ending

  private cleanup(): void {
    this.lingerTimer?.cancel();
    this.lingerTimer = undefined;
    this.paceTimer?.cancel();
    this.paceTimer = undefined;
    this.unwatch?.();
    this.unwatch = undefined;
  }

  private fail(reason: unknown): void {
    if (this.phase === 'done') return;
    this.phase = 'done';
    this.cleanup();
    // A batch refused because its stream was deleted under it ends the session as the deletion does
    // (data.proto: NOT_FOUND), not with the append's own refusal (a retryable 503 for a lone append).
    const why = reason instanceof ServiceError && reason.code === 'stream_deleted'
      ? new ServiceError('not_found', `stream ${this.bucket}/${this.key} was deleted`) : reason;
    this.sink.ended({ kind: 'failed', reason: why });
  }

  private finishOk(): void {
    if (this.phase === 'done') return;
    this.phase = 'done';
    this.cleanup();
    this.sink.ended({ kind: 'finished' });
  }

  private settleIfIdle(): void {
    if (this.pumping || this.phase === 'done') return;
    if (this.queue.length > 0) return;
    if (this.stopping) this.fail(this.stopping.reason);
    else if (this.clientFinished && !this.filling && this.phase === 'open') this.finishOk();
  }

  private stop(reason: unknown, dropWaiting = true): void {
    if (this.phase === 'done' || this.stopping) return;
    this.stopping = { reason, dropWaiting };
    this.lingerTimer?.cancel();
    this.lingerTimer = undefined;
    if (this.filling) {
      this.filling.ack = Promise.reject(NOT_SENT);
      this.filling.ack.catch(() => {});
      this.filling = undefined;
    }
    this.updateFlow();
    void this.pump();
    this.settleIfIdle();
  }

  // ---------------------------------------------------------------- flow

  /** Reads the client only when nothing holds it back. */
  private updateFlow(): void {
    if (this.phase === 'done') return;
    // The clock is read only while pacing, so an unpaced session costs no clock read per batch.
    const now = this.paceUntilMs > 0 ? this.d.clock.nowMs() : 0;
    const pacing = this.paceUntilMs > now;
    if (!pacing) this.paceUntilMs = 0;
    const over = this.inflightBytes > APPEND_SESSION_INFLIGHT_BYTES_MAX || this.queue.length >= APPEND_SESSION_INFLIGHT_BATCHES_MAX;
    const hold = over || pacing || this.phase !== 'open' || this.stopping !== undefined;
    if (hold && !this.paused) {
      this.paused = true;
      this.sink.pause();
    } else if (!hold && this.paused) {
      this.paused = false;
      this.sink.resume();
    }
    if (pacing && !this.paceTimer) {
      this.paceTimer = this.d.timers.setTimeout(() => { this.paceTimer = undefined; this.updateFlow(); }, this.paceUntilMs - now);
    }
  }

  /** Paces reading to throughput_max_bytes_per_second: the session stops reading rather than
   *  queueing batches the core would hold back. */
  private paceReading(bytes: number): void {
    const rate = this.config?.throughput_max_bytes_per_second ?? 0;
    if (rate <= 0) return;
    const now = this.d.clock.nowMs();
    const p = pace(this.paced, rate, now, bytes);
    this.paced = p.next;
    if (p.waitMs > 0) this.paceUntilMs = now + p.waitMs;
  }

  // ---------------------------------------------------------------- acks

  private async ackOf(e: Entry): Promise<AppendAck> {
    const g = e.group!;
    const ack = await g.ack!;
    if (g.entries.length === 1) return ack;
    const first = ack.start.seq_num + e.offset;
    const end = first + e.count;
    const stamps = await (g.stamps ??= this.readStamps(ack));
    const startTs = stamps ? stamps[e.offset] : (e.offset === 0 ? ack.start.timestamp_ms : ack.end.timestamp_ms);
    const endTs = stamps ? stamps[e.offset + e.count - 1] : ack.end.timestamp_ms;
    return { start: { seq_num: first, timestamp_ms: startTs }, end: { seq_num: end, timestamp_ms: endTs }, tail: ack.tail };
  }

  /** The committed timestamps of a coalesced group's records; undefined if they cannot be read
   *  back (trimmed or deleted at once): the acks then carry the group's bounds. */
  private async readStamps(ack: AppendAck): Promise<number[] | undefined> {
    const out: number[] = [];
    const end = ack.end.seq_num;
    try {
      while (ack.start.seq_num + out.length < end) {
        const page = await this.d.service.read(this.bucket, this.key, {
          start: { kind: 'seq_num', value: ack.start.seq_num + out.length },
          limit: Math.min(READ_RECORDS_MAX, end - ack.start.seq_num - out.length),
          maxBytes: READ_BYTES_MAX,
          clamp: false,
        });
        if (page.records.length === 0) return undefined;
        for (const r of page.records) if (r.seq_num < end) out.push(r.timestamp_ms);
      }
      return out;
    } catch {
      return undefined;
    }
  }

  /** Delivers acks in order, one at a time, each once the transport took the one before. */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.queue.length > 0 && this.phase !== 'done') {
        const head = this.queue[0];
        if (!head.group?.ack) break; // still coalescing: flushed by its timer, a cap, or finish()
        let ack: AppendAck;
        try {
          ack = await this.ackOf(head);
        } catch (err) {
          if (err === NOT_SENT) { this.queue.length = 0; break; }
          throw err;
        }
        if (this.ended) return; // aborted, or failed, while the ack was awaited
        await this.sink.ack(ack);
        this.queue.shift();
        this.inflightBytes -= head.weight;
        this.updateFlow();
      }
    } catch (err) {
      this.fail(err); // the first failed batch ends the session with its error
    } finally {
      this.pumping = false;
    }
    this.settleIfIdle();
  }

  // ---------------------------------------------------------------- handing batches to the core

  /** Hands a group to the core (behind the gate while the stream is being auto-created). */
  private send(g: Group): void {
    const records = g.entries.length === 1 ? g.entries[0].records : g.entries.flatMap((e) => e.records);
    const input: AppendInput = { records, chain: this.chain };
    const encoded = g.entries[0].encoded; // alone in its group (offer)
    if (encoded) input.encoded = encoded;
    if (g.match !== undefined) input.match_seq_num = g.match;
    if (this.token !== undefined) input.fencing_token = this.token;
    if (this.deadlineMs !== undefined) input.deadlineMs = this.deadlineMs;
    const go = (): Promise<AppendAck> => (this.stopping?.dropWaiting ? Promise.reject(NOT_SENT) : this.d.service.append(this.bucket, this.key, input));
    if (this.gate || !this.streamExists) {
      // The stream is being auto-created by the first batch: send one at a time until it exists.
      const prev = this.gate ?? Promise.resolve();
      g.ack = prev.then(go);
      const mine: Promise<void> = g.ack.then(() => { if (!this.streamExists) this.onStreamExists(); }, () => {});
      this.gate = mine;
      void mine.then(() => { if (this.gate === mine) this.gate = undefined; });
    } else {
      g.ack = go();
    }
    // Observed by pump, in order (never an unhandled rejection); a refusal breaks the chain here too,
    // for refusals the star does not see (a lease it could not take, a hop).
    g.ack.catch((err: unknown) => { if (err !== NOT_SENT) this.chain.broken = true; });
    void this.pump();
  }

  private flush(): void {
    this.lingerTimer?.cancel();
    this.lingerTimer = undefined;
    const g = this.filling;
    this.filling = undefined;
    if (g) this.send(g);
  }

  // ---------------------------------------------------------------- the stream

  /** At open: the stream's config, and that it admits the token; or, when it does not exist yet and
   *  its bucket creates streams on append, the bucket's defaults (the first batch creates it). */
  private async openStream(): Promise<void> {
    if (this.phase !== 'opening') return;
    const svc = this.d.service;
    let info;
    try {
      info = await svc.leadStream(this.bucket, this.key);
    } catch (err) {
      if (!(err instanceof ServiceError && err.code === 'not_found')) throw err;
      const b = await svc.getBucket(this.bucket); // not_found for a missing bucket
      if (!b.create_stream_on_append) throw err;
      this.config = streamDefaultsOf(b);
    }
    if (info) {
      checkFence(info.fencing_token, info.producer_policy, this.token);
      await this.watchStream();
    }
  }

  /** Watches the stream and refreshes its config; runs at open, or after the creating batch. */
  private async watchStream(): Promise<void> {
    if (this.watching) return;
    this.watching = true;
    const svc = this.d.service;
    const info = await svc.leadStream(this.bucket, this.key);
    if (this.phase === 'done') return;
    this.config = info;
    this.streamExists = true;
    this.unwatch = svc.watch(this.bucket, this.key, (ev) => {
      if (this.phase === 'done') return;
      if (ev.kind === 'deleted') {
        this.stop(new ServiceError('not_found', `stream ${this.bucket}/${this.key} was deleted`));
      } else if (ev.kind === 'moved') {
        this.stop(new ServiceError('unavailable', `stream ${this.bucket}/${this.key} moved to another star; reopen the session`));
      } else if (ev.kind === 'reconfigured') {
        this.config = { ...this.config!, ...ev.config };
        if (ev.handoff) this.stop(new ServiceError('unavailable', 'the stream was reconfigured and handed off: reopen the session'));
      } else {
        try {
          checkFence(ev.fencing_token, this.config!.producer_policy, this.token);
        } catch (err) {
          this.stop(err); // superseded: fence_mismatch with the new token
        }
      }
    });
  }

  private onStreamExists(): void {
    if (this.phase === 'done') return;
    this.watchStream().catch((err: unknown) => this.stop(err));
  }
}
