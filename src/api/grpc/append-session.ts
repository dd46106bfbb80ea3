// AppendSession: a pipelined producer session. The first message opens it (address, fencing token);
// each later message is one batch, handed to StreamService.append as soon as it arrives, so several
// batches are in flight at once. Acks are written strictly in batch order. Flow control: while the
// unacknowledged batches weigh more than APPEND_SESSION_INFLIGHT_BYTES_MAX (or number more than
// APPEND_SESSION_INFLIGHT_BATCHES_MAX) the session stops reading the client stream (pause), which
// lets HTTP/2 flow control push back on the producer; it resumes once acks drain below the bound.
// An ack counts as drained only once it is flushed, so a producer that stops reading acks stalls too.
//
// Ordering relies on StreamService.append admitting calls in the order they are made (the sequencer
// runs on the main thread). The one exception seen in the core is an append that first auto-creates
// its stream (create_stream_on_append): it is admitted after appends made later. So the session's first
// batch goes alone, and the rest are handed over only once it is acknowledged (the stream then exists);
// from there on, batches are pipelined. The first failed batch ends the session with its status (and details);
// batches after it may have been appended: producers use match_seq_num to make retries exact.

import * as grpc from '@grpc/grpc-js';
import type { AppendAck } from '../../core/types.ts';
import type { AppendSessionRequest__Output } from '../../gen/svc/v1/AppendSessionRequest.ts';
import type { AppendSessionResponse } from '../../gen/svc/v1/AppendSessionResponse.ts';
import { authorize, type GrpcContext } from './context.ts';
import { bucketFromWire, fencingTokenFromWire, keyFromWire, positionToWire, recordsFromWire, u64FromWire } from './convert.ts';
import { grpcFailure, toGrpcFailure, type GrpcFailure } from './status-mapping.ts';

/** Unacknowledged content one session may hold before it stops reading its client. */
export const APPEND_SESSION_INFLIGHT_BYTES_MAX = 32 * 1024 * 1024;
/** Unacknowledged batches one session may hold before it stops reading its client. */
export const APPEND_SESSION_INFLIGHT_BATCHES_MAX = 1024;
/** Accounting weight of a record beyond its content, so batches of empty records still count. */
export const APPEND_SESSION_RECORD_OVERHEAD_BYTES = 16;

type SessionCall = grpc.ServerDuplexStream<AppendSessionRequest__Output, AppendSessionResponse>;

interface Pending {
  ack: Promise<AppendAck>;
  bytes: number;
}

interface Target {
  bucket: string;
  key: string;
  fencing_token?: string;
}

export function handleAppendSession(ctx: GrpcContext, call: SessionCall): void {
  let target: Target | undefined;
  let done = false;
  let clientEnded = false;
  let shuttingDown = false;
  let pumping = false;
  let paused = false;
  let inflightBytes = 0;
  const queue: Pending[] = [];
  /** Until the first batch is acknowledged, later batches wait on it before reaching the core. */
  let firstAck: Promise<unknown> | undefined;
  let batches = 0;

  const fail = (failure: GrpcFailure): void => {
    if (done) return;
    done = true;
    unregister();
    if (!call.cancelled) call.emit('error', failure);
  };

  const finishOk = (): void => {
    if (done) return;
    done = true;
    unregister();
    if (!call.cancelled) call.end();
  };

  const setPaused = (): void => {
    const over = inflightBytes > APPEND_SESSION_INFLIGHT_BYTES_MAX || queue.length >= APPEND_SESSION_INFLIGHT_BATCHES_MAX;
    if (over && !paused) {
      paused = true;
      call.pause();
    } else if (!over && paused && !shuttingDown) {
      paused = false;
      call.resume();
    }
  };

  const settleIfIdle = (): void => {
    if (pumping || queue.length > 0 || done) return;
    if (shuttingDown) fail(grpcFailure(grpc.status.UNAVAILABLE, 'star shutting down; reopen the session'));
    else if (clientEnded) finishOk();
  };

  const pump = async (): Promise<void> => {
    if (pumping) return;
    pumping = true;
    try {
      while (queue.length > 0 && !done) {
        const head = queue[0];
        const ack = await head.ack;
        if (done) return;
        await writeAck(call, { start: positionToWire(ack.start), end: positionToWire(ack.end), tail: positionToWire(ack.tail) });
        queue.shift();
        inflightBytes -= head.bytes;
        setPaused();
      }
    } catch (err) {
      fail(toGrpcFailure(err));
    } finally {
      pumping = false;
    }
    settleIfIdle();
  };

  const open = (msg: AppendSessionRequest__Output): void => {
    if (msg.request !== 'open' || !msg.open) throw grpcFailure(grpc.status.INVALID_ARGUMENT, 'the first message must be `open`');
    const o = msg.open;
    const t: Target = { bucket: bucketFromWire(o.bucket), key: keyFromWire(o.key) };
    if (o.fencing_token !== undefined) t.fencing_token = fencingTokenFromWire(o.fencing_token);
    target = t;
    // Read nothing more until the caller is authorized for this address.
    call.pause();
    authorize(ctx, { verb: 'AppendSession', plane: 'data', metadata: call.metadata, bucket: t.bucket, key: t.key })
      .then(() => { if (!done && !paused && !shuttingDown) call.resume(); })
      .catch((err: unknown) => fail(toGrpcFailure(err)));
  };

  const batch = (t: Target, msg: AppendSessionRequest__Output): void => {
    if (msg.request !== 'batch' || !msg.batch) throw grpcFailure(grpc.status.INVALID_ARGUMENT, 'only the first message may be `open`');
    const b = msg.batch;
    const { records, bytes } = recordsFromWire(b.records);
    const input = {
      records,
      ...(b.match_seq_num !== undefined ? { match_seq_num: u64FromWire(b.match_seq_num, 'match_seq_num') } : {}),
      ...(t.fencing_token !== undefined ? { fencing_token: t.fencing_token } : {}),
    };
    const send = (): Promise<AppendAck> => ctx.service.append(t.bucket, t.key, input);
    // Chained callbacks run in registration order, so the waiting batches still reach the core in order.
    const ack = batches++ === 0 ? send() : firstAck ? firstAck.then(send) : send();
    if (batches === 1) {
      firstAck = ack.then(() => { firstAck = undefined; }, () => { firstAck = undefined; });
    }
    ack.catch(() => {}); // observed by pump, in order; never an unhandled rejection
    const weight = bytes + records.length * APPEND_SESSION_RECORD_OVERHEAD_BYTES;
    queue.push({ ack, bytes: weight });
    inflightBytes += weight;
    setPaused();
    void pump();
  };

  call.on('data', (msg: AppendSessionRequest__Output) => {
    if (done || shuttingDown) return;
    try {
      if (target === undefined) open(msg);
      else batch(target, msg);
    } catch (err) {
      fail(isFailure(err) ? err : toGrpcFailure(err));
    }
  });
  call.on('end', () => {
    clientEnded = true;
    settleIfIdle();
  });
  call.on('cancelled', () => {
    done = true;
    unregister();
  });
  const unregister = ctx.live.add(() => {
    shuttingDown = true;
    call.pause();
    settleIfIdle();
  });
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
