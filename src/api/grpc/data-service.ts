// DataService's unary verbs: each decodes its request, asks the auth hook, calls the StreamService
// and encodes the answer. AppendSession, Subscribe and ReadPlan live in their own files.

import { GRPC_READ_BYTES_DEFAULT } from '../../config/limits.ts';
import { ServiceError } from '../../core/errors.ts';
import type { DataServiceHandlers } from '../../gen/svc/v1/DataService.ts';
import { handleAppendSession } from './append-session.ts';
import { authorize, batchFromWire, decodeAfterAuth, unary, type GrpcContext, type UnaryCallState } from './context.ts';
import {
  addressFromWire, bucketCreateFromWire, bucketConfigFromWire, bucketFromWire, bucketInfoToWire, fencingTokenFromWire,
  newBucketFromWire, pageLimit, positionToWire, readStartFromWire, recordToWire,
  streamConfigFromWire, streamCreateFromWire, streamCursorFromWire, streamCursorToWire,
  positionFromWire, streamInfoToWire, timeSelectorFromWire,
} from './convert.ts';
import { handleReadPlan } from './read-plan.ts';
import { handleSubscribe } from './subscribe.ts';

interface Addressed {
  bucket: string;
  key: Buffer;
}

/** Decodes (bucket, key), runs the auth hook for a stream-level verb and arms the call's deadline
 *  at the credential's exp ('arm'), or answers the exp for the caller to carry ('carry'), see
 *  below. `fencingToken`: the token a pinned verb presents. */
async function streamAddress(
  ctx: GrpcContext, verb: string, req: Addressed, call: UnaryCallState, fencingToken?: string, deadline: 'arm' | 'carry' = 'arm',
): Promise<{ bucket: string; key: string; expMs: number | undefined }> {
  const { bucket, key } = await decodeAfterAuth(ctx, call.metadata, () => addressFromWire(req));
  const caller = await authorize(ctx, {
    verb, plane: 'data', metadata: call.metadata, bucket, key, ...(fencingToken !== undefined ? { fencing_token: fencingToken } : {}),
  });
  // 'carry': the caller takes the exp into the core itself (Append: AppendInput.deadlineMs), as
  // answering DEADLINE_EXCEEDED at exp while a batch already sequenced commits after it would invite
  // a retry that writes it twice.
  if (deadline === 'arm') call.deadlineAt(caller.expMs);
  return { bucket, key, expMs: caller.expMs };
}

/** Decodes the bucket and runs the auth hook for a bucket-level verb. */
async function bucketAddress(ctx: GrpcContext, verb: string, name: string, call: UnaryCallState): Promise<string> {
  const bucket = await decodeAfterAuth(ctx, call.metadata, () => bucketFromWire(name));
  call.deadlineAt((await authorize(ctx, { verb, plane: 'data', metadata: call.metadata, bucket })).expMs);
  return bucket;
}

export function dataServiceHandlers(ctx: GrpcContext): DataServiceHandlers {
  const svc = ctx.service;
  return {
    Append: unary(async (req, _md, c) => {
      const token = req.fencing_token !== undefined ? fencingTokenFromWire(req.fencing_token) : undefined;
      const { bucket, key, expMs } = await streamAddress(ctx, 'Append', req, c, token, 'carry');
      const { records, encoded } = await batchFromWire(ctx, req, req.records, 'append', () => c.signal);
      const ack = await svc.append(bucket, key, {
        records,
        ...(encoded ? { encoded } : {}),
        ...(req.match_seq_num !== undefined ? { match_seq_num: positionFromWire(req.match_seq_num, 'match_seq_num') } : {}),
        ...(token !== undefined ? { fencing_token: token } : {}),
        ...(expMs !== undefined ? { deadlineMs: expMs } : {}),
      });
      return { start: positionToWire(ack.start), end: positionToWire(ack.end), tail: positionToWire(ack.tail) };
    }),

    AppendSession: (call) => handleAppendSession(ctx, call),

    Fence: unary(async (req, _md, c) => {
      const token = fencingTokenFromWire(req.fencing_token);
      const { bucket, key } = await streamAddress(ctx, 'Fence', req, c, token);
      const tail = await svc.fence(bucket, key, token);
      return { tail: positionToWire(tail) };
    }),

    Read: unary(async (req, _md, c) => {
      const { bucket, key } = await streamAddress(ctx, 'Read', req, c);
      const result = await svc.read(bucket, key, {
        start: readStartFromWire(req),
        // limit 0 takes the star's maximum; max_bytes 0 a page a stock client can receive
        // (GRPC_READ_BYTES_DEFAULT). The star clamps to --max-read-records / --max-read-bytes.
        limit: req.limit,
        maxBytes: req.max_bytes > 0 ? req.max_bytes : GRPC_READ_BYTES_DEFAULT,
        clamp: req.clamp,
        ...(req.until_ms !== undefined ? { untilMs: timeSelectorFromWire(req.until_ms) } : {}),
      });
      return { records: result.records.map(recordToWire), tail: positionToWire(result.tail) };
    }),

    Subscribe: (call) => handleSubscribe(ctx, call),

    CheckTail: unary(async (req, _md, c) => {
      const { bucket, key } = await streamAddress(ctx, 'CheckTail', req, c);
      return { tail: positionToWire(await svc.readTail(bucket, key)) };
    }),

    GetStream: unary(async (req, _md, c) => {
      const { bucket, key } = await streamAddress(ctx, 'GetStream', req, c);
      const s = await svc.getStream(bucket, key);
      return { info: streamInfoToWire(s), fencing_token: s.fencing_token };
    }),

    GetBucket: unary(async (req, _md, c) => {
      const bucket = await bucketAddress(ctx, 'GetBucket', req.bucket, c);
      return { info: bucketInfoToWire(await svc.getBucket(bucket)) };
    }),

    ReadPlan: unary(async (req, _md, c) => {
      const { bucket, key } = await streamAddress(ctx, 'ReadPlan', req, c);
      return handleReadPlan(ctx, bucket, key, req);
    }),

    ListStreams: unary(async (req, _md, c) => {
      const bucket = await bucketAddress(ctx, 'ListStreams', req.bucket, c);
      const page = await svc.listStreams(bucket, streamCursorFromWire(req.start_after), pageLimit(req.limit));
      return { streams: page.items.map(streamInfoToWire), next: streamCursorToWire(page.next) };
    }),

    ListBuckets: unary(async (req, _md, c) => {
      c.deadlineAt((await authorize(ctx, { verb: 'ListBuckets', plane: 'data', metadata: c.metadata })).expMs);
      const page = await svc.listBuckets(req.start_after, pageLimit(req.limit));
      return { buckets: page.items.map(bucketInfoToWire), next: page.next };
    }),

    CreateStream: unary(async (req, _md, c) => {
      const { bucket, key } = await streamAddress(ctx, 'CreateStream', req, c);
      const s = await svc.createStream(bucket, key, streamCreateFromWire(req.config, req.creation_token));
      return { info: streamInfoToWire(s) };
    }),

    CreateBucket: unary(async (req, _md, c) => {
      const bucket = await bucketAddress(ctx, 'CreateBucket', req.bucket, c);
      newBucketFromWire(bucket);
      const b = await svc.createBucket(bucket, bucketCreateFromWire(req.config, req.creation_token));
      return { info: bucketInfoToWire(b) };
    }),

    UpdateBucket: unary(async (req, _md, c) => {
      const bucket = await bucketAddress(ctx, 'UpdateBucket', req.bucket, c);
      const b = await svc.updateBucket(bucket, bucketConfigFromWire(req.config));
      return { info: bucketInfoToWire(b) };
    }),

    DeleteStream: unary(async (req, _md, c) => {
      const { bucket, key } = await streamAddress(ctx, 'DeleteStream', req, c);
      await svc.deleteStream(bucket, key);
      return {};
    }),

    DeleteBucket: unary(async (req, _md, c) => {
      const bucket = await bucketAddress(ctx, 'DeleteBucket', req.bucket, c);
      await svc.deleteBucket(bucket);
      return {};
    }),

    ReconfigureStream: unary(async (req, _md, c) => {
      const { bucket, key } = await streamAddress(ctx, 'ReconfigureStream', req, c);
      const s = await svc.reconfigureStream(bucket, key, streamConfigFromWire(req.config));
      return { info: streamInfoToWire(s) };
    }),

    Trim: unary(async (req, _md, c) => {
      const { bucket, key } = await streamAddress(ctx, 'Trim', req, c);
      if (req.point === 'seq_num' && req.seq_num !== undefined) {
        await svc.trim(bucket, key, { seq_num: positionFromWire(req.seq_num, 'seq_num') });
      } else if (req.point === 'timestamp_ms' && req.timestamp_ms !== undefined) {
        await svc.trim(bucket, key, { timestamp_ms: positionFromWire(req.timestamp_ms, 'timestamp_ms') });
      }
      else throw new ServiceError('invalid_argument', 'exactly one of seq_num or timestamp_ms is required');
      return {};
    }),

    // Authenticated by the (key id, secret) pair itself: no authorize call.
    ExchangeToken: unary(async (req) => {
      const exchange = ctx.auth?.exchangeToken;
      if (!exchange) throw new ServiceError('unimplemented', 'token exchange is not configured on this star');
      if (req.narrowing !== 'bucket' && req.narrowing !== 'scope') {
        throw new ServiceError('invalid_argument', 'exactly one of bucket or scope is required');
      }
      const issued = await exchange({
        key_id: req.key_id,
        secret: req.secret,
        // 0 is proto3's unset: the default TTL.
        ...(req.ttl_seconds > 0 ? { ttl_seconds: req.ttl_seconds } : {}),
        ...(req.narrowing === 'bucket' ? { bucket: req.bucket ?? '' } : { scope: req.scope ?? '' }),
      });
      return { token: issued.token, expires_at_unix_ms: issued.expires_at_unix_ms };
    }),

    SettleStar: unary(async (req, _md, c) => {
      c.deadlineAt((await authorize(ctx, { verb: 'SettleStar', plane: 'node', metadata: c.metadata })).expMs);
      if (req.star_id !== '' && req.star_id !== ctx.star.id) {
        throw new ServiceError('not_found', `no star ${req.star_id} in this cluster`);
      }
      if (ctx.star.settle) await ctx.star.settle();
      return { star_id: ctx.star.id };
    }),
  };
}
