// Subscribe: pulls one batch at a time from the core's subscription and writes it, waiting for the
// write to be flushed into HTTP/2 flow control before pulling the next (one batch in flight, as the
// SSE path). Ends on client cancel, at the credential's exp (DEADLINE_EXCEEDED), on the core's error
// (deleted or trimmed under the cursor), on a consumer stalled past SUBSCRIBE_STALL_MS, and on
// server shutdown with UNAVAILABLE: the client resumes from its cursor (an HTTP event stream simply
// ends there, but a gRPC stream that ends OK tells its client it is done, and it would not resume).

import * as grpc from '@grpc/grpc-js';
import { SSE_STALL_MS } from '../../config/limits.ts';
import type { Subscription } from '../../core/service-api.ts';
import type { SubscribeRequest__Output } from '../../gen/svc/v1/SubscribeRequest.ts';
import type { SubscribeResponse } from '../../gen/svc/v1/SubscribeResponse.ts';
import { atExpiry, authorize, CREDENTIAL_EXPIRED, decodeAfterAuth, type GrpcContext } from './context.ts';
import { addressFromWire, positionToWire, readStartFromWire, recordToWire } from './convert.ts';
import { grpcFailure, toGrpcFailure, type GrpcFailure } from './status-mapping.ts';

/** A subscriber that leaves a batch unflushed this long is cut off (the spec's SSE stall rule). */
export const SUBSCRIBE_STALL_MS = SSE_STALL_MS;

type SubscribeCall = grpc.ServerWritableStream<SubscribeRequest__Output, SubscribeResponse>;

export function handleSubscribe(ctx: GrpcContext, call: SubscribeCall): void {
  let done = false;
  let sub: Subscription | undefined;
  let unregister: () => void = () => {};

  const finish = (failure?: GrpcFailure): void => {
    if (done) return;
    done = true;
    unregister();
    sub?.close();
    if (call.cancelled) return;
    if (failure) call.emit('error', failure);
    else call.end();
  };

  call.on('cancelled', () => finish());
  unregister = ctx.live.add(() => finish(grpcFailure(grpc.status.UNAVAILABLE, 'star shutting down; resume from next_seq_num')));

  const run = async (): Promise<void> => {
    const req = call.request;
    const { bucket, key } = await decodeAfterAuth(ctx, call.metadata, () => addressFromWire(req));
    const caller = await authorize(ctx, { verb: 'Subscribe', plane: 'data', metadata: call.metadata, bucket, key });
    if (done) return;
    // No subscription outlives its credential: at exp it ends; resume with a fresh token.
    const cancelExpiry = atExpiry(caller.expMs, () => finish(grpcFailure(grpc.status.DEADLINE_EXCEEDED, CREDENTIAL_EXPIRED)));
    const unregisterLive = unregister;
    unregister = () => { cancelExpiry(); unregisterLive(); };
    const start = readStartFromWire(req);
    const opened = await ctx.service.subscribe(bucket, key, start);
    if (done) {
      opened.close();
      return;
    }
    sub = opened;
    while (!done) {
      const batch = await opened.next();
      if (done) return;
      if (batch.records.length === 0) continue;
      const last = batch.records[batch.records.length - 1];
      const msg: SubscribeResponse = {
        records: batch.records.map(recordToWire),
        tail: positionToWire(batch.tail),
        next_seq_num: last.seq_num + 1,
      };
      const flushed = await writeFlushed(call, msg, SUBSCRIBE_STALL_MS);
      if (!flushed && !done) finish(grpcFailure(grpc.status.UNAVAILABLE, 'subscriber stalled; resume from next_seq_num'));
    }
  };

  run().catch((err: unknown) => finish(toGrpcFailure(err)));
}

/** Writes one message and waits until grpc-js has handed it to the HTTP/2 stream. False on stall. */
function writeFlushed(call: SubscribeCall, msg: SubscribeResponse, stallMs: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    let settled = false;
    const settle = (ok: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      call.off('cancelled', onCancel);
      resolve(ok);
    };
    const onCancel = (): void => settle(true);
    const timer = setTimeout(() => settle(false), stallMs);
    call.once('cancelled', onCancel);
    call.write(msg, () => settle(true));
  });
}
