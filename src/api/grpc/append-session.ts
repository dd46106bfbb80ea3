// AppendSession: a pipelined producer session on one stream.
//
// Open. The first message names the stream and the fencing token. The caller is authorized (grants,
// and the credential's svc_aux.fencing_token pin), then the token is checked against the stream as
// an append would be: on a `fenced` stream (or one with a token installed) a missing or different
// token fails the open with FAILED_PRECONDITION + FenceDetail. A missing stream is NOT_FOUND unless
// its bucket creates streams on append.
//
// Batches. Every later message is one client batch, acknowledged by exactly one response, in order.
// A client batch over the stream's batch_max_records / batch_max_bytes is INVALID_ARGUMENT (a
// record or batch over a cap). With batch_max_delay_ms = 0 (the default) each client batch is one
// durable batch, handed to the core as soon as it arrives, so many are in flight at once. With a
// delay, client batches arriving within it are coalesced into one durable batch (a producer-side
// "linger", as Kafka's linger.ms or S2's batching), flushed when the next would pass either cap (or
// the service's own 65,536 records / 100 MiB), when the delay since the group's first batch runs
// out, when a batch carries match_seq_num (it starts a group of its own: its match is the group's),
// or when the client half-closes. Coalesced batches are acked one by one, with exact positions.
// throughput_max_bytes_per_second paces the session: a token bucket (one second of burst) over
// record content; while it is in deficit the session stops reading, so HTTP/2 flow control pushes
// back on the producer instead of anything being refused.
//
// Flow control. While unacknowledged batches weigh more than APPEND_SESSION_INFLIGHT_BYTES_MAX (or
// number APPEND_SESSION_INFLIGHT_BATCHES_MAX) the session stops reading the client. An ack counts as
// drained once it is flushed, so a producer that stops reading acks stalls too.
//
// Ending. The first failed batch ends the session with its status and detail; batches after it may
// have been appended (use match_seq_num to make retries exact). The session also ends, after writing
// the acks of every batch already handed to the core, when:
//   - a Fence installs a token this session's token does not admit: FAILED_PRECONDITION + FenceDetail;
//   - a reconfigure hands the stream off (class, policy, timestamping, batching or throughput changed):
//     UNAVAILABLE, once; reopen and continue (the new session runs under the new config);
//   - the stream is deleted: NOT_FOUND;
//   - the credential's exp passes: DEADLINE_EXCEEDED; reopen with a fresh token;
//   - the star shuts down: UNAVAILABLE.
// Batches not yet handed to the core (coalescing, or waiting behind an auto-creating first batch)
// are dropped then: they were never appended.
//
// Ordering relies on StreamService.append admitting calls in the order they are made. The one
// exception is an append that first auto-creates its stream; so while the stream does not exist the
// first durable batch goes alone and the rest follow once it is acknowledged.

import * as grpc from '@grpc/grpc-js';
import { APPEND_RECORDS_MAX, BATCH_CONTENT_BYTES_MAX, READ_BYTES_MAX, READ_RECORDS_MAX } from '../../config/limits.ts';
import { ServiceError } from '../../core/errors.ts';
import { checkBatchCaps, checkFence, pace, type PaceState } from '../../core/sequencer.ts';
import { streamDefaultsOf, type AppendAck, type RecordInput, type StreamConfig } from '../../core/types.ts';
import type { AppendSessionRequest__Output } from '../../gen/svc/v1/AppendSessionRequest.ts';
import type { AppendSessionResponse } from '../../gen/svc/v1/AppendSessionResponse.ts';
import { atExpiry, authorize, CREDENTIAL_EXPIRED, type GrpcContext } from './context.ts';
import { addressFromWire, fencingTokenFromWire, positionToWire, recordsFromWire, u64FromWire } from './convert.ts';
import { grpcFailure, toGrpcFailure, type GrpcFailure } from './status-mapping.ts';

/** Unacknowledged content one session may hold before it stops reading its client. */
export const APPEND_SESSION_INFLIGHT_BYTES_MAX = 32 * 1024 * 1024;
/** Unacknowledged batches one session may hold before it stops reading its client. */
export const APPEND_SESSION_INFLIGHT_BATCHES_MAX = 1024;
/** Accounting weight of a record beyond its content, so batches of empty records still count. */
export const APPEND_SESSION_RECORD_OVERHEAD_BYTES = 16;
/** Longest linger honoured (a larger batch_max_delay_ms is clamped to it). */
export const APPEND_SESSION_DELAY_MS_MAX = 60_000;

type SessionCall = grpc.ServerDuplexStream<AppendSessionRequest__Output, AppendSessionResponse>;

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
  records: RecordInput[];
  bytes: number;
  weight: number;
  match?: number;
  group?: Group;
  /** Records before this entry in its group. */
  offset: number;
}

/** Why a group never reached the core: the session was ending. */
const NOT_SENT = Symbol('not sent');

export function handleAppendSession(ctx: GrpcContext, call: SessionCall): void {
  const svc = ctx.service;
  let bucket = '';
  let key = '';
  let token: string | undefined;
  let opened = false;
  let authorizing = false;
  let done = false;
  let clientEnded = false;
  let stopping: GrpcFailure | undefined;
  let pumping = false;
  let paused = false;
  let inflightBytes = 0;
  const queue: Entry[] = [];
  let config: StreamConfig | undefined;
  /** False until the stream exists (a bucket creating streams on append) and is watched. */
  let streamExists = false;
  /** While the stream is being created: the last durable batch handed over, which the next waits on. */
  let gate: Promise<void> | undefined;
  let open: Group | undefined;
  let lingerTimer: ReturnType<typeof setTimeout> | undefined;
  let paceTimer: ReturnType<typeof setTimeout> | undefined;
  let paceUntilMs = 0;
  let paced: PaceState | undefined;
  const cleanups: (() => void)[] = [];

  const cleanup = (): void => {
    if (lingerTimer) clearTimeout(lingerTimer);
    if (paceTimer) clearTimeout(paceTimer);
    for (const c of cleanups.splice(0)) c();
  };

  const fail = (failure: GrpcFailure): void => {
    if (done) return;
    done = true;
    cleanup();
    if (!call.cancelled) call.emit('error', failure);
  };

  const finishOk = (): void => {
    if (done) return;
    done = true;
    cleanup();
    if (!call.cancelled) call.end();
  };

  /** Reads the client only when nothing holds it back. */
  const updateFlow = (): void => {
    if (done) return;
    const now = Date.now();
    const pacing = paceUntilMs > now;
    const over = inflightBytes > APPEND_SESSION_INFLIGHT_BYTES_MAX || queue.length >= APPEND_SESSION_INFLIGHT_BATCHES_MAX;
    const hold = over || pacing || authorizing || stopping !== undefined;
    if (hold && !paused) {
      paused = true;
      call.pause();
    } else if (!hold && paused) {
      paused = false;
      call.resume();
    }
    if (pacing && !paceTimer) {
      paceTimer = setTimeout(() => { paceTimer = undefined; updateFlow(); }, paceUntilMs - now);
    }
  };

  const settleIfIdle = (): void => {
    if (pumping || done) return;
    if (queue.length > 0) return;
    if (stopping) fail(stopping);
    else if (clientEnded && !open) finishOk();
  };

  /** Ends the session once every batch already handed to the core is acknowledged. */
  const stop = (failure: GrpcFailure): void => {
    if (done || stopping) return;
    stopping = failure;
    if (lingerTimer) { clearTimeout(lingerTimer); lingerTimer = undefined; }
    if (open) { open.ack = Promise.reject(NOT_SENT); open.ack.catch(() => {}); open = undefined; }
    updateFlow();
    void pump();
    settleIfIdle();
  };

  const ackOf = async (e: Entry): Promise<AppendAck> => {
    const g = e.group!;
    const ack = await g.ack!;
    if (g.entries.length === 1) return ack;
    const first = ack.start.seq_num + e.offset;
    const end = first + e.records.length;
    const stamps = await (g.stamps ??= readStamps(ack));
    const startTs = stamps ? stamps[e.offset] : (e.offset === 0 ? ack.start.timestamp_ms : ack.end.timestamp_ms);
    const endTs = stamps ? stamps[e.offset + e.records.length - 1] : ack.end.timestamp_ms;
    return { start: { seq_num: first, timestamp_ms: startTs }, end: { seq_num: end, timestamp_ms: endTs }, tail: ack.tail };
  };

  /** The committed timestamps of a coalesced group's records; undefined if they cannot be read
   *  back (trimmed or deleted at once): the acks then carry the group's bounds. */
  const readStamps = async (ack: AppendAck): Promise<number[] | undefined> => {
    const out: number[] = [];
    const end = ack.end.seq_num;
    try {
      while (ack.start.seq_num + out.length < end) {
        const page = await svc.read(bucket, key, {
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
  };

  const pump = async (): Promise<void> => {
    if (pumping) return;
    pumping = true;
    try {
      while (queue.length > 0 && !done) {
        const head = queue[0];
        if (!head.group?.ack) break; // still coalescing: flushed by its timer, a cap, or half-close
        let ack: AppendAck;
        try {
          ack = await ackOf(head);
        } catch (err) {
          if (err === NOT_SENT) { queue.length = 0; break; }
          throw err;
        }
        if (done) return;
        await writeAck(call, { start: positionToWire(ack.start), end: positionToWire(ack.end), tail: positionToWire(ack.tail) });
        queue.shift();
        inflightBytes -= head.weight;
        updateFlow();
      }
    } catch (err) {
      fail(toGrpcFailure(err));
    } finally {
      pumping = false;
    }
    settleIfIdle();
  };

  /** Hands a group to the core (behind the gate while the stream is being auto-created). */
  const send = (g: Group): void => {
    const records = g.entries.length === 1 ? g.entries[0].records : g.entries.flatMap((e) => e.records);
    const input = {
      records,
      ...(g.match !== undefined ? { match_seq_num: g.match } : {}),
      ...(token !== undefined ? { fencing_token: token } : {}),
    };
    const go = (): Promise<AppendAck> => (stopping ? Promise.reject(NOT_SENT) : svc.append(bucket, key, input));
    if (gate || !streamExists) {
      // The stream is being auto-created by the first batch: send one at a time until it exists.
      const prev = gate ?? Promise.resolve();
      g.ack = prev.then(go);
      const mine: Promise<void> = g.ack.then(() => { if (!streamExists) onStreamExists(); }, () => {});
      gate = mine;
      void mine.then(() => { if (gate === mine) gate = undefined; });
    } else {
      g.ack = go();
    }
    g.ack.catch(() => {}); // observed by pump, in order; never an unhandled rejection
    void pump();
  };

  const flush = (): void => {
    if (lingerTimer) { clearTimeout(lingerTimer); lingerTimer = undefined; }
    const g = open;
    open = undefined;
    if (g) send(g);
  };

  /** Watches the stream and refreshes its config; runs at open, or after the creating batch. */
  const watchStream = async (): Promise<void> => {
    const info = await svc.getStream(bucket, key);
    if (done) return;
    config = info;
    streamExists = true;
    const unwatch = svc.watch(bucket, key, (ev) => {
      if (done) return;
      if (ev.kind === 'deleted') {
        stop(toGrpcFailure(new ServiceError('not_found', `stream ${bucket}/${key} was deleted`)));
      } else if (ev.kind === 'reconfigured') {
        config = { ...config!, ...ev.config };
        if (ev.handoff) stop(grpcFailure(grpc.status.UNAVAILABLE, 'the stream was reconfigured and handed off: reopen the session'));
      } else {
        try {
          checkFence(ev.fencing_token, config!.producer_policy, token);
        } catch (err) {
          stop(toGrpcFailure(err)); // superseded: FAILED_PRECONDITION + FenceDetail with the new token
        }
      }
    });
    cleanups.push(unwatch);
  };

  const onStreamExists = (): void => {
    if (done) return;
    watchStream().catch((err: unknown) => stop(toGrpcFailure(err)));
  };

  const onOpen = (msg: AppendSessionRequest__Output): void => {
    if (msg.request !== 'open' || !msg.open) throw grpcFailure(grpc.status.INVALID_ARGUMENT, 'the first message must be `open`');
    const o = msg.open;
    ({ bucket, key } = addressFromWire(o));
    if (o.fencing_token !== undefined) token = fencingTokenFromWire(o.fencing_token);
    opened = true;
    // Read nothing more until the caller is authorized and the stream admits this token.
    authorizing = true;
    updateFlow();
    authorize(ctx, {
      verb: 'AppendSession', plane: 'data', metadata: call.metadata, bucket, key, ...(token !== undefined ? { fencing_token: token } : {}),
    }).then(async (caller) => {
      if (done) return;
      cleanups.push(atExpiry(caller.expMs, () => stop(grpcFailure(grpc.status.DEADLINE_EXCEEDED, CREDENTIAL_EXPIRED))));
      let info;
      try {
        info = await svc.getStream(bucket, key);
      } catch (err) {
        if (!(err instanceof ServiceError && err.code === 'not_found')) throw err;
        const b = await svc.getBucket(bucket); // NOT_FOUND for a missing bucket
        if (!b.create_stream_on_append) throw err;
        // Created by the first batch, from the bucket's defaults.
        config = streamDefaultsOf(b);
      }
      if (info) {
        checkFence(info.fencing_token, info.producer_policy, token);
        await watchStream();
      }
      authorizing = false;
      updateFlow();
    }).catch((err: unknown) => fail(toGrpcFailure(err)));
  };

  /** Paces reading to throughput_max_bytes_per_second (the core's token bucket, one second of
   *  burst): the session stops reading rather than queueing batches the core would hold back. */
  const paceSession = (bytes: number): void => {
    const rate = config?.throughput_max_bytes_per_second ?? 0;
    if (rate <= 0) return;
    const now = Date.now();
    const p = pace(paced, rate, now, bytes);
    paced = p.next;
    if (p.waitMs > 0) paceUntilMs = now + p.waitMs;
  };

  const onBatch = (msg: AppendSessionRequest__Output): void => {
    if (msg.request !== 'batch' || !msg.batch) throw grpcFailure(grpc.status.INVALID_ARGUMENT, 'only the first message may be `open`');
    const b = msg.batch;
    const { records, bytes } = recordsFromWire(b.records);
    const cfg = config!;
    checkBatchCaps(cfg, records.length, bytes);
    const e: Entry = { records, bytes, weight: bytes + records.length * APPEND_SESSION_RECORD_OVERHEAD_BYTES, offset: 0 };
    if (b.match_seq_num !== undefined) e.match = u64FromWire(b.match_seq_num, 'match_seq_num');
    queue.push(e);
    inflightBytes += e.weight;
    paceSession(bytes);

    const delayMs = Math.min(cfg.batch_max_delay_ms, APPEND_SESSION_DELAY_MS_MAX);
    const recordsCap = cfg.batch_max_records > 0 ? cfg.batch_max_records : APPEND_RECORDS_MAX;
    const bytesCap = cfg.batch_max_bytes > 0 ? Math.min(cfg.batch_max_bytes, BATCH_CONTENT_BYTES_MAX) : BATCH_CONTENT_BYTES_MAX;
    // A full group, or a batch that brings its own match_seq_num, closes the open group first.
    if (open && (e.match !== undefined || open.records + records.length > recordsCap || open.bytes + bytes > bytesCap)) flush();
    if (!open) {
      open = { entries: [], records: 0, bytes: 0 };
      if (e.match !== undefined) open.match = e.match;
    }
    e.group = open;
    e.offset = open.records;
    open.entries.push(e);
    open.records += records.length;
    open.bytes += bytes;
    if (delayMs <= 0 || open.records >= recordsCap || open.bytes >= bytesCap) flush();
    else if (!lingerTimer) lingerTimer = setTimeout(() => { lingerTimer = undefined; flush(); }, delayMs);
    updateFlow();
  };

  call.on('data', (msg: AppendSessionRequest__Output) => {
    if (done || stopping) return;
    try {
      if (!opened) onOpen(msg);
      else onBatch(msg);
    } catch (err) {
      // A refused batch ends the session after the acks of every batch before it.
      const failure = isFailure(err) ? err : toGrpcFailure(err);
      if (!opened || authorizing) fail(failure);
      else {
        flush();
        stop(failure);
      }
    }
  });
  call.on('end', () => {
    clientEnded = true;
    if (!stopping) flush();
    settleIfIdle();
  });
  call.on('cancelled', () => {
    done = true;
    cleanup();
  });
  cleanups.push(ctx.live.add(() => stop(grpcFailure(grpc.status.UNAVAILABLE, 'star shutting down; reopen the session'))));
}

function isFailure(v: unknown): v is GrpcFailure {
  return typeof v === 'object' && v !== null && 'code' in v && 'metadata' in v && v.metadata instanceof grpc.Metadata;
}

/** Writes one ack and waits until it is handed to the HTTP/2 stream (or the call is cancelled). */
function writeAck(call: SessionCall, msg: AppendSessionResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const onCancel = (): void => resolve();
    call.once('cancelled', onCancel);
    call.write(msg, () => {
      call.off('cancelled', onCancel);
      resolve();
    });
  });
}
