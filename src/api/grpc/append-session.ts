// AppendSession: the gRPC face of a producer session (core/producer-session.ts), which holds the
// behaviour: linger coalescing, the stream's batch caps, throughput pacing, in-flight bounds, ordered
// acks, and ending on a fence, a handoff or a deletion. This file decodes the wire, authorizes, and
// maps acks and failures to gRPC.
//
// Open. The first message names the stream and the fencing token. The caller is authorized (grants,
// and the credential's svc_aux.fencing_token pin), then the token is checked against the stream as
// an append would be: on a `fenced` stream (or one with a token installed) a missing or different
// token fails the open with FAILED_PRECONDITION + FenceDetail. A missing stream is NOT_FOUND unless
// its bucket creates streams on append. A first message that is not `open`, or a second `open`, is
// INVALID_ARGUMENT.
//
// Batches. Every later message is one client batch, acknowledged by exactly one response, in order.
// A client batch over the stream's batch_max_records / batch_max_bytes is INVALID_ARGUMENT (a
// record or batch over a cap). Half-closing flushes what is coalescing; the call ends OK once
// everything is acknowledged. While the core session holds reading (in-flight bounds, pacing), the
// call is paused, so HTTP/2 flow control pushes back on the producer; an ack counts as drained once
// grpc-js has handed it to the HTTP/2 stream, so a producer that stops reading acks stalls too.
//
// Ending. The first failed batch ends the call with its status and detail (FenceDetail,
// SequenceDetail). After the acks of every batch already handed to the core, the call also ends:
//   - FAILED_PRECONDITION + FenceDetail when a Fence installs a token this session's does not admit;
//   - UNAVAILABLE, once, when a reconfigure hands the stream off; reopen and continue;
//   - NOT_FOUND when the stream is deleted;
//   - UNAVAILABLE when its lease moves to another star (a drain, a lost renewal); reopen;
//   - DEADLINE_EXCEEDED when the credential's exp passes; reopen with a fresh token;
//   - UNAVAILABLE when the star shuts down.
// Past the star's cap on open sessions (APPEND_SESSIONS_PER_STAR_MAX) a new one is RESOURCE_EXHAUSTED at once.

import * as grpc from '@grpc/grpc-js';
import { ProducerSession } from '../../core/producer-session.ts';
import type { AppendSessionRequest__Output } from '../../gen/svc/v1/AppendSessionRequest.ts';
import type { AppendSessionResponse } from '../../gen/svc/v1/AppendSessionResponse.ts';
import { notValidProtobuf, offThreadBytes, undecodable } from './append-decode.ts';
import { atExpiry, authorize, batchFromWire, CREDENTIAL_EXPIRED, type GrpcContext } from './context.ts';
import { addressFromWire, fencingTokenFromWire, positionFromWire, positionToWire, recordsFromWire } from './convert.ts';
import { grpcFailure, toGrpcFailure, type GrpcFailure } from './status-mapping.ts';

type SessionCall = grpc.ServerDuplexStream<AppendSessionRequest__Output, AppendSessionResponse>;

export function handleAppendSession(ctx: GrpcContext, call: SessionCall): void {
  const cleanups: (() => void)[] = [];
  const cleanup = (): void => { for (const c of cleanups.splice(0)) c(); };
  // Aborted when the session ends or its call is cancelled: batches still queued for a parse worker
  // leave the queue, and none of them is appended.
  const over = new AbortController();
  cleanups.push(() => over.abort());
  const session = new ProducerSession({ service: ctx.service, clock: ctx.clock, timers: ctx.timers }, {
    ack: (ack) => writeAck(call, { start: positionToWire(ack.start), end: positionToWire(ack.end), tail: positionToWire(ack.tail) }),
    pause: () => { flow.session = true; applyFlow(); },
    resume: () => { flow.session = false; applyFlow(); },
    ended: (end) => {
      cleanup();
      if (call.cancelled) return;
      if (end.kind === 'finished') call.end();
      else call.emit('error', isFailure(end.reason) ? end.reason : toGrpcFailure(end.reason));
    },
  });
  let opened = false;
  // Reading is held while the core session asks it (in-flight bounds, pacing) and while a batch is
  // on a parse worker (the messages after it wait for it, in order, unread).
  const flow = { session: false, decoding: false };
  function applyFlow(): void {
    if (flow.session || flow.decoding) call.pause();
    else call.resume();
  }
  /** The newest message waiting for a parse worker, or behind one that is. */
  let behind: Promise<void> | undefined;

  const onOpen = (msg: AppendSessionRequest__Output): void => {
    if (msg.request !== 'open' || !msg.open) throw grpcFailure(grpc.status.INVALID_ARGUMENT, 'the first message must be `open`');
    const o = msg.open;
    const { bucket, key } = addressFromWire(o);
    const token = o.fencing_token !== undefined ? fencingTokenFromWire(o.fencing_token) : undefined;
    opened = true;
    // The session reads nothing more until the caller is authorized and the stream admits the token.
    session.start(bucket, key, token, async () => {
      const caller = await authorize(ctx, {
        verb: 'AppendSession', plane: 'data', metadata: call.metadata, bucket, key, ...(token !== undefined ? { fencing_token: token } : {}),
      });
      if (session.ended) return;
      session.setDeadline(caller.expMs);
      // The slot is taken once the caller is authorized, so callers without a grant cannot hold the
      // star's sessions; an ended session gives it back (cleanup runs on every ending).
      const release = ctx.live.takeSessionSlot();
      if (!release) throw grpcFailure(grpc.status.RESOURCE_EXHAUSTED, 'producer sessions per star at cap; retry shortly');
      cleanups.push(release);
      cleanups.push(atExpiry(caller.expMs, () => session.end(grpcFailure(grpc.status.DEADLINE_EXCEEDED, CREDENTIAL_EXPIRED))));
    });
  };

  /** A batch: offered now, or (left whole by append-decode.ts) once a parse worker has encoded it. */
  const onBatch = (msg: AppendSessionRequest__Output): Promise<void> | undefined => {
    if (msg.request === 'open') throw grpcFailure(grpc.status.INVALID_ARGUMENT, 'only the first message may be `open`');
    if (msg.request !== 'batch' || !msg.batch) throw grpcFailure(grpc.status.INVALID_ARGUMENT, 'a message after `open` must carry a `batch`');
    const b = msg.batch;
    const match = b.match_seq_num !== undefined ? positionFromWire(b.match_seq_num, 'match_seq_num') : undefined;
    if (offThreadBytes(b) === undefined) {
      const { records, bytes } = recordsFromWire(b.records);
      session.offer(records, bytes, match);
      return undefined;
    }
    return batchFromWire(ctx, b, b.records, 'session', () => over.signal).then(({ records, encoded, bytes }) => {
      if (!session.ending) session.offer(records, bytes, match, encoded);
    });
  };

  // A refused message ends the session after the acks of every batch before it.
  const onMessage = (msg: AppendSessionRequest__Output): Promise<void> | undefined => {
    if (session.ending) return undefined; // a message read before reading paused: dropped, never decoded
    try {
      const bad = undecodable(msg);
      if (bad !== undefined) throw notValidProtobuf('session', bad);
      if (!opened) {
        onOpen(msg);
        return undefined;
      }
      return onBatch(msg)?.catch((err: unknown) => session.refuse(err));
    } catch (err) {
      session.refuse(err);
      return undefined;
    }
  };

  call.on('data', (msg: AppendSessionRequest__Output) => {
    if (behind === undefined) {
      const decoding = onMessage(msg);
      if (decoding === undefined) return;
      behind = decoding;
    } else {
      behind = behind.then(() => onMessage(msg));
    }
    const mine = behind;
    flow.decoding = true;
    applyFlow();
    void mine.then(() => {
      if (behind !== mine) return;
      behind = undefined;
      flow.decoding = false;
      applyFlow();
    });
  });
  call.on('end', () => {
    if (behind === undefined) session.finish();
    else void behind.then(() => session.finish());
  });
  call.on('cancelled', () => {
    session.abort();
    cleanup();
  });
  cleanups.push(ctx.live.add(() => session.end(grpcFailure(grpc.status.UNAVAILABLE, 'star shutting down; reopen the session'))));
}

function isFailure(v: unknown): v is GrpcFailure {
  return typeof v === 'object' && v !== null && 'code' in v && 'metadata' in v && v.metadata instanceof grpc.Metadata;
}

/** Writes one ack and resolves once it is handed to the HTTP/2 stream (or the call is cancelled). */
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
