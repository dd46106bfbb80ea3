// Original file: proto/svc/v1/data.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { AppendRequest as _svc_v1_AppendRequest, AppendRequest__Output as _svc_v1_AppendRequest__Output } from '../../svc/v1/AppendRequest.ts';
import type { AppendResponse as _svc_v1_AppendResponse, AppendResponse__Output as _svc_v1_AppendResponse__Output } from '../../svc/v1/AppendResponse.ts';
import type { AppendSessionRequest as _svc_v1_AppendSessionRequest, AppendSessionRequest__Output as _svc_v1_AppendSessionRequest__Output } from '../../svc/v1/AppendSessionRequest.ts';
import type { AppendSessionResponse as _svc_v1_AppendSessionResponse, AppendSessionResponse__Output as _svc_v1_AppendSessionResponse__Output } from '../../svc/v1/AppendSessionResponse.ts';
import type { CheckTailRequest as _svc_v1_CheckTailRequest, CheckTailRequest__Output as _svc_v1_CheckTailRequest__Output } from '../../svc/v1/CheckTailRequest.ts';
import type { CheckTailResponse as _svc_v1_CheckTailResponse, CheckTailResponse__Output as _svc_v1_CheckTailResponse__Output } from '../../svc/v1/CheckTailResponse.ts';
import type { CreateBucketRequest as _svc_v1_CreateBucketRequest, CreateBucketRequest__Output as _svc_v1_CreateBucketRequest__Output } from '../../svc/v1/CreateBucketRequest.ts';
import type { CreateBucketResponse as _svc_v1_CreateBucketResponse, CreateBucketResponse__Output as _svc_v1_CreateBucketResponse__Output } from '../../svc/v1/CreateBucketResponse.ts';
import type { CreateStreamRequest as _svc_v1_CreateStreamRequest, CreateStreamRequest__Output as _svc_v1_CreateStreamRequest__Output } from '../../svc/v1/CreateStreamRequest.ts';
import type { CreateStreamResponse as _svc_v1_CreateStreamResponse, CreateStreamResponse__Output as _svc_v1_CreateStreamResponse__Output } from '../../svc/v1/CreateStreamResponse.ts';
import type { DeleteBucketRequest as _svc_v1_DeleteBucketRequest, DeleteBucketRequest__Output as _svc_v1_DeleteBucketRequest__Output } from '../../svc/v1/DeleteBucketRequest.ts';
import type { DeleteBucketResponse as _svc_v1_DeleteBucketResponse, DeleteBucketResponse__Output as _svc_v1_DeleteBucketResponse__Output } from '../../svc/v1/DeleteBucketResponse.ts';
import type { DeleteStreamRequest as _svc_v1_DeleteStreamRequest, DeleteStreamRequest__Output as _svc_v1_DeleteStreamRequest__Output } from '../../svc/v1/DeleteStreamRequest.ts';
import type { DeleteStreamResponse as _svc_v1_DeleteStreamResponse, DeleteStreamResponse__Output as _svc_v1_DeleteStreamResponse__Output } from '../../svc/v1/DeleteStreamResponse.ts';
import type { ExchangeTokenRequest as _svc_v1_ExchangeTokenRequest, ExchangeTokenRequest__Output as _svc_v1_ExchangeTokenRequest__Output } from '../../svc/v1/ExchangeTokenRequest.ts';
import type { ExchangeTokenResponse as _svc_v1_ExchangeTokenResponse, ExchangeTokenResponse__Output as _svc_v1_ExchangeTokenResponse__Output } from '../../svc/v1/ExchangeTokenResponse.ts';
import type { FenceRequest as _svc_v1_FenceRequest, FenceRequest__Output as _svc_v1_FenceRequest__Output } from '../../svc/v1/FenceRequest.ts';
import type { FenceResponse as _svc_v1_FenceResponse, FenceResponse__Output as _svc_v1_FenceResponse__Output } from '../../svc/v1/FenceResponse.ts';
import type { GetBucketRequest as _svc_v1_GetBucketRequest, GetBucketRequest__Output as _svc_v1_GetBucketRequest__Output } from '../../svc/v1/GetBucketRequest.ts';
import type { GetBucketResponse as _svc_v1_GetBucketResponse, GetBucketResponse__Output as _svc_v1_GetBucketResponse__Output } from '../../svc/v1/GetBucketResponse.ts';
import type { GetStreamRequest as _svc_v1_GetStreamRequest, GetStreamRequest__Output as _svc_v1_GetStreamRequest__Output } from '../../svc/v1/GetStreamRequest.ts';
import type { GetStreamResponse as _svc_v1_GetStreamResponse, GetStreamResponse__Output as _svc_v1_GetStreamResponse__Output } from '../../svc/v1/GetStreamResponse.ts';
import type { ListBucketsRequest as _svc_v1_ListBucketsRequest, ListBucketsRequest__Output as _svc_v1_ListBucketsRequest__Output } from '../../svc/v1/ListBucketsRequest.ts';
import type { ListBucketsResponse as _svc_v1_ListBucketsResponse, ListBucketsResponse__Output as _svc_v1_ListBucketsResponse__Output } from '../../svc/v1/ListBucketsResponse.ts';
import type { ListStreamsRequest as _svc_v1_ListStreamsRequest, ListStreamsRequest__Output as _svc_v1_ListStreamsRequest__Output } from '../../svc/v1/ListStreamsRequest.ts';
import type { ListStreamsResponse as _svc_v1_ListStreamsResponse, ListStreamsResponse__Output as _svc_v1_ListStreamsResponse__Output } from '../../svc/v1/ListStreamsResponse.ts';
import type { ReadPlanRequest as _svc_v1_ReadPlanRequest, ReadPlanRequest__Output as _svc_v1_ReadPlanRequest__Output } from '../../svc/v1/ReadPlanRequest.ts';
import type { ReadPlanResponse as _svc_v1_ReadPlanResponse, ReadPlanResponse__Output as _svc_v1_ReadPlanResponse__Output } from '../../svc/v1/ReadPlanResponse.ts';
import type { ReadRequest as _svc_v1_ReadRequest, ReadRequest__Output as _svc_v1_ReadRequest__Output } from '../../svc/v1/ReadRequest.ts';
import type { ReadResponse as _svc_v1_ReadResponse, ReadResponse__Output as _svc_v1_ReadResponse__Output } from '../../svc/v1/ReadResponse.ts';
import type { ReconfigureStreamRequest as _svc_v1_ReconfigureStreamRequest, ReconfigureStreamRequest__Output as _svc_v1_ReconfigureStreamRequest__Output } from '../../svc/v1/ReconfigureStreamRequest.ts';
import type { ReconfigureStreamResponse as _svc_v1_ReconfigureStreamResponse, ReconfigureStreamResponse__Output as _svc_v1_ReconfigureStreamResponse__Output } from '../../svc/v1/ReconfigureStreamResponse.ts';
import type { SettleStarRequest as _svc_v1_SettleStarRequest, SettleStarRequest__Output as _svc_v1_SettleStarRequest__Output } from '../../svc/v1/SettleStarRequest.ts';
import type { SettleStarResponse as _svc_v1_SettleStarResponse, SettleStarResponse__Output as _svc_v1_SettleStarResponse__Output } from '../../svc/v1/SettleStarResponse.ts';
import type { SubscribeRequest as _svc_v1_SubscribeRequest, SubscribeRequest__Output as _svc_v1_SubscribeRequest__Output } from '../../svc/v1/SubscribeRequest.ts';
import type { SubscribeResponse as _svc_v1_SubscribeResponse, SubscribeResponse__Output as _svc_v1_SubscribeResponse__Output } from '../../svc/v1/SubscribeResponse.ts';
import type { TrimRequest as _svc_v1_TrimRequest, TrimRequest__Output as _svc_v1_TrimRequest__Output } from '../../svc/v1/TrimRequest.ts';
import type { TrimResponse as _svc_v1_TrimResponse, TrimResponse__Output as _svc_v1_TrimResponse__Output } from '../../svc/v1/TrimResponse.ts';
import type { UpdateBucketRequest as _svc_v1_UpdateBucketRequest, UpdateBucketRequest__Output as _svc_v1_UpdateBucketRequest__Output } from '../../svc/v1/UpdateBucketRequest.ts';
import type { UpdateBucketResponse as _svc_v1_UpdateBucketResponse, UpdateBucketResponse__Output as _svc_v1_UpdateBucketResponse__Output } from '../../svc/v1/UpdateBucketResponse.ts';

export interface DataServiceClient extends grpc.Client {
  /**
   * Appends one batch durably. Answers once the batch is committed.
   */
  Append(argument: _svc_v1_AppendRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_AppendResponse__Output>): grpc.ClientUnaryCall;
  Append(argument: _svc_v1_AppendRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_AppendResponse__Output>): grpc.ClientUnaryCall;
  Append(argument: _svc_v1_AppendRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_AppendResponse__Output>): grpc.ClientUnaryCall;
  Append(argument: _svc_v1_AppendRequest, callback: grpc.requestCallback<_svc_v1_AppendResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Appends one batch durably. Answers once the batch is committed.
   */
  append(argument: _svc_v1_AppendRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_AppendResponse__Output>): grpc.ClientUnaryCall;
  append(argument: _svc_v1_AppendRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_AppendResponse__Output>): grpc.ClientUnaryCall;
  append(argument: _svc_v1_AppendRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_AppendResponse__Output>): grpc.ClientUnaryCall;
  append(argument: _svc_v1_AppendRequest, callback: grpc.requestCallback<_svc_v1_AppendResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * A producer session on one stream. The first request opens it (address and fencing token); each
   * later request is one client batch, answered by one ack, in order.
   * 
   * Open: the caller needs the append grant, and a credential pinning svc_aux.fencing_token must
   * present exactly that token (else PERMISSION_DENIED). On a `fenced` stream, or one with a token
   * installed, a missing or different token fails the open with FAILED_PRECONDITION + FenceDetail.
   * A missing stream is NOT_FOUND unless its bucket creates streams on append (the first batch
   * creates it; later batches follow once it exists). A star holds at most 16,384 open sessions:
   * past that the open is RESOURCE_EXHAUSTED (retry shortly). In a cluster the open makes the star
   * the stream's leader, as an append does, or answers NOT_OWNER with the leader's address.
   * 
   * Pipelining: send batches without waiting for acks. While unacknowledged batches weigh more than
   * 32 MiB or number 1024, the server stops reading (HTTP/2 flow control pushes back); a producer
   * that stops reading acks is stalled the same way.
   * 
   * Stream config, as a producer library would apply it:
   * batch_max_records / batch_max_bytes (0 = unbounded): a client batch over either is
   * INVALID_ARGUMENT; they also cap coalesced durable batches.
   * batch_max_delay_ms (0 = none): client batches arriving within the delay are coalesced into one
   * durable batch (linger), flushed when the next would pass a cap, when the delay since the
   * group's first batch runs out, when a batch carries match_seq_num (it starts its own group),
   * or at half-close. Each client batch is still acked with its own exact positions.
   * throughput_max_bytes_per_second (0 = unbounded): the session reads at most this much record
   * content per second (token bucket, one second of burst); past it the server simply reads
   * slower, so the producer sees back-pressure, not errors.
   * 
   * Ending: the first failed batch ends the session with its status, after the acks of the batches
   * before it; no batch sent after it is appended (the server refuses every later batch of the
   * session, even one it had already taken), so the producer's order has no hole: reopen and send
   * again from the first unacknowledged batch. Whether the failed batch itself was appended is as its
   * status says (UNAVAILABLE may leave it in doubt; match_seq_num makes retries exact). A session cut
   * without a status (a lost connection) leaves every unacknowledged batch in doubt. The server also
   * ends the session, after acking every batch it handed to the
   * sequencer (batches still lingering are dropped, never appended), when:
   * a Fence installs a token this session's token does not admit: FAILED_PRECONDITION + FenceDetail;
   * a reconfigure hands the stream off (class, producer policy, timestamping, batching or
   * throughput changed): UNAVAILABLE, once; reopen to continue under the new config;
   * the stream is deleted: NOT_FOUND;
   * the stream's lease moves to another star (a drain, a lost renewal): UNAVAILABLE; reopen, and
   * follow the NOT_OWNER the reopen may answer;
   * the token's exp passes: DEADLINE_EXCEEDED; reopen with a fresh token;
   * the star shuts down: UNAVAILABLE; reopen.
   */
  AppendSession(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_svc_v1_AppendSessionRequest, _svc_v1_AppendSessionResponse__Output>;
  AppendSession(options?: grpc.CallOptions): grpc.ClientDuplexStream<_svc_v1_AppendSessionRequest, _svc_v1_AppendSessionResponse__Output>;
  /**
   * A producer session on one stream. The first request opens it (address and fencing token); each
   * later request is one client batch, answered by one ack, in order.
   * 
   * Open: the caller needs the append grant, and a credential pinning svc_aux.fencing_token must
   * present exactly that token (else PERMISSION_DENIED). On a `fenced` stream, or one with a token
   * installed, a missing or different token fails the open with FAILED_PRECONDITION + FenceDetail.
   * A missing stream is NOT_FOUND unless its bucket creates streams on append (the first batch
   * creates it; later batches follow once it exists). A star holds at most 16,384 open sessions:
   * past that the open is RESOURCE_EXHAUSTED (retry shortly). In a cluster the open makes the star
   * the stream's leader, as an append does, or answers NOT_OWNER with the leader's address.
   * 
   * Pipelining: send batches without waiting for acks. While unacknowledged batches weigh more than
   * 32 MiB or number 1024, the server stops reading (HTTP/2 flow control pushes back); a producer
   * that stops reading acks is stalled the same way.
   * 
   * Stream config, as a producer library would apply it:
   * batch_max_records / batch_max_bytes (0 = unbounded): a client batch over either is
   * INVALID_ARGUMENT; they also cap coalesced durable batches.
   * batch_max_delay_ms (0 = none): client batches arriving within the delay are coalesced into one
   * durable batch (linger), flushed when the next would pass a cap, when the delay since the
   * group's first batch runs out, when a batch carries match_seq_num (it starts its own group),
   * or at half-close. Each client batch is still acked with its own exact positions.
   * throughput_max_bytes_per_second (0 = unbounded): the session reads at most this much record
   * content per second (token bucket, one second of burst); past it the server simply reads
   * slower, so the producer sees back-pressure, not errors.
   * 
   * Ending: the first failed batch ends the session with its status, after the acks of the batches
   * before it; no batch sent after it is appended (the server refuses every later batch of the
   * session, even one it had already taken), so the producer's order has no hole: reopen and send
   * again from the first unacknowledged batch. Whether the failed batch itself was appended is as its
   * status says (UNAVAILABLE may leave it in doubt; match_seq_num makes retries exact). A session cut
   * without a status (a lost connection) leaves every unacknowledged batch in doubt. The server also
   * ends the session, after acking every batch it handed to the
   * sequencer (batches still lingering are dropped, never appended), when:
   * a Fence installs a token this session's token does not admit: FAILED_PRECONDITION + FenceDetail;
   * a reconfigure hands the stream off (class, producer policy, timestamping, batching or
   * throughput changed): UNAVAILABLE, once; reopen to continue under the new config;
   * the stream is deleted: NOT_FOUND;
   * the stream's lease moves to another star (a drain, a lost renewal): UNAVAILABLE; reopen, and
   * follow the NOT_OWNER the reopen may answer;
   * the token's exp passes: DEADLINE_EXCEEDED; reopen with a fresh token;
   * the star shuts down: UNAVAILABLE; reopen.
   */
  appendSession(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_svc_v1_AppendSessionRequest, _svc_v1_AppendSessionResponse__Output>;
  appendSession(options?: grpc.CallOptions): grpc.ClientDuplexStream<_svc_v1_AppendSessionRequest, _svc_v1_AppendSessionResponse__Output>;
  
  /**
   * The committed tail.
   */
  CheckTail(argument: _svc_v1_CheckTailRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_CheckTailResponse__Output>): grpc.ClientUnaryCall;
  CheckTail(argument: _svc_v1_CheckTailRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_CheckTailResponse__Output>): grpc.ClientUnaryCall;
  CheckTail(argument: _svc_v1_CheckTailRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_CheckTailResponse__Output>): grpc.ClientUnaryCall;
  CheckTail(argument: _svc_v1_CheckTailRequest, callback: grpc.requestCallback<_svc_v1_CheckTailResponse__Output>): grpc.ClientUnaryCall;
  /**
   * The committed tail.
   */
  checkTail(argument: _svc_v1_CheckTailRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_CheckTailResponse__Output>): grpc.ClientUnaryCall;
  checkTail(argument: _svc_v1_CheckTailRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_CheckTailResponse__Output>): grpc.ClientUnaryCall;
  checkTail(argument: _svc_v1_CheckTailRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_CheckTailResponse__Output>): grpc.ClientUnaryCall;
  checkTail(argument: _svc_v1_CheckTailRequest, callback: grpc.requestCallback<_svc_v1_CheckTailResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Creates a bucket. A taken name is ALREADY_EXISTS.
   */
  CreateBucket(argument: _svc_v1_CreateBucketRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_CreateBucketResponse__Output>): grpc.ClientUnaryCall;
  CreateBucket(argument: _svc_v1_CreateBucketRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_CreateBucketResponse__Output>): grpc.ClientUnaryCall;
  CreateBucket(argument: _svc_v1_CreateBucketRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_CreateBucketResponse__Output>): grpc.ClientUnaryCall;
  CreateBucket(argument: _svc_v1_CreateBucketRequest, callback: grpc.requestCallback<_svc_v1_CreateBucketResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Creates a bucket. A taken name is ALREADY_EXISTS.
   */
  createBucket(argument: _svc_v1_CreateBucketRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_CreateBucketResponse__Output>): grpc.ClientUnaryCall;
  createBucket(argument: _svc_v1_CreateBucketRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_CreateBucketResponse__Output>): grpc.ClientUnaryCall;
  createBucket(argument: _svc_v1_CreateBucketRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_CreateBucketResponse__Output>): grpc.ClientUnaryCall;
  createBucket(argument: _svc_v1_CreateBucketRequest, callback: grpc.requestCallback<_svc_v1_CreateBucketResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Creates a stream. Retrying with the same creation_token converges on the existing stream.
   */
  CreateStream(argument: _svc_v1_CreateStreamRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_CreateStreamResponse__Output>): grpc.ClientUnaryCall;
  CreateStream(argument: _svc_v1_CreateStreamRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_CreateStreamResponse__Output>): grpc.ClientUnaryCall;
  CreateStream(argument: _svc_v1_CreateStreamRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_CreateStreamResponse__Output>): grpc.ClientUnaryCall;
  CreateStream(argument: _svc_v1_CreateStreamRequest, callback: grpc.requestCallback<_svc_v1_CreateStreamResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Creates a stream. Retrying with the same creation_token converges on the existing stream.
   */
  createStream(argument: _svc_v1_CreateStreamRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_CreateStreamResponse__Output>): grpc.ClientUnaryCall;
  createStream(argument: _svc_v1_CreateStreamRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_CreateStreamResponse__Output>): grpc.ClientUnaryCall;
  createStream(argument: _svc_v1_CreateStreamRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_CreateStreamResponse__Output>): grpc.ClientUnaryCall;
  createStream(argument: _svc_v1_CreateStreamRequest, callback: grpc.requestCallback<_svc_v1_CreateStreamResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Deletes an empty bucket. A bucket that still holds streams is ALREADY_EXISTS (HTTP 409).
   */
  DeleteBucket(argument: _svc_v1_DeleteBucketRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_DeleteBucketResponse__Output>): grpc.ClientUnaryCall;
  DeleteBucket(argument: _svc_v1_DeleteBucketRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_DeleteBucketResponse__Output>): grpc.ClientUnaryCall;
  DeleteBucket(argument: _svc_v1_DeleteBucketRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_DeleteBucketResponse__Output>): grpc.ClientUnaryCall;
  DeleteBucket(argument: _svc_v1_DeleteBucketRequest, callback: grpc.requestCallback<_svc_v1_DeleteBucketResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Deletes an empty bucket. A bucket that still holds streams is ALREADY_EXISTS (HTTP 409).
   */
  deleteBucket(argument: _svc_v1_DeleteBucketRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_DeleteBucketResponse__Output>): grpc.ClientUnaryCall;
  deleteBucket(argument: _svc_v1_DeleteBucketRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_DeleteBucketResponse__Output>): grpc.ClientUnaryCall;
  deleteBucket(argument: _svc_v1_DeleteBucketRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_DeleteBucketResponse__Output>): grpc.ClientUnaryCall;
  deleteBucket(argument: _svc_v1_DeleteBucketRequest, callback: grpc.requestCallback<_svc_v1_DeleteBucketResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Deletes a stream. Idempotent on a deleted stream; NOT_FOUND for one that never existed.
   */
  DeleteStream(argument: _svc_v1_DeleteStreamRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_DeleteStreamResponse__Output>): grpc.ClientUnaryCall;
  DeleteStream(argument: _svc_v1_DeleteStreamRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_DeleteStreamResponse__Output>): grpc.ClientUnaryCall;
  DeleteStream(argument: _svc_v1_DeleteStreamRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_DeleteStreamResponse__Output>): grpc.ClientUnaryCall;
  DeleteStream(argument: _svc_v1_DeleteStreamRequest, callback: grpc.requestCallback<_svc_v1_DeleteStreamResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Deletes a stream. Idempotent on a deleted stream; NOT_FOUND for one that never existed.
   */
  deleteStream(argument: _svc_v1_DeleteStreamRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_DeleteStreamResponse__Output>): grpc.ClientUnaryCall;
  deleteStream(argument: _svc_v1_DeleteStreamRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_DeleteStreamResponse__Output>): grpc.ClientUnaryCall;
  deleteStream(argument: _svc_v1_DeleteStreamRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_DeleteStreamResponse__Output>): grpc.ClientUnaryCall;
  deleteStream(argument: _svc_v1_DeleteStreamRequest, callback: grpc.requestCallback<_svc_v1_DeleteStreamResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Exchanges an api-key credential for a short-lived scoped token (no bearer needed).
   */
  ExchangeToken(argument: _svc_v1_ExchangeTokenRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ExchangeTokenResponse__Output>): grpc.ClientUnaryCall;
  ExchangeToken(argument: _svc_v1_ExchangeTokenRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ExchangeTokenResponse__Output>): grpc.ClientUnaryCall;
  ExchangeToken(argument: _svc_v1_ExchangeTokenRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ExchangeTokenResponse__Output>): grpc.ClientUnaryCall;
  ExchangeToken(argument: _svc_v1_ExchangeTokenRequest, callback: grpc.requestCallback<_svc_v1_ExchangeTokenResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Exchanges an api-key credential for a short-lived scoped token (no bearer needed).
   */
  exchangeToken(argument: _svc_v1_ExchangeTokenRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ExchangeTokenResponse__Output>): grpc.ClientUnaryCall;
  exchangeToken(argument: _svc_v1_ExchangeTokenRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ExchangeTokenResponse__Output>): grpc.ClientUnaryCall;
  exchangeToken(argument: _svc_v1_ExchangeTokenRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ExchangeTokenResponse__Output>): grpc.ClientUnaryCall;
  exchangeToken(argument: _svc_v1_ExchangeTokenRequest, callback: grpc.requestCallback<_svc_v1_ExchangeTokenResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Installs, replaces or (with an empty token) clears the stream's fencing token.
   */
  Fence(argument: _svc_v1_FenceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_FenceResponse__Output>): grpc.ClientUnaryCall;
  Fence(argument: _svc_v1_FenceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_FenceResponse__Output>): grpc.ClientUnaryCall;
  Fence(argument: _svc_v1_FenceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_FenceResponse__Output>): grpc.ClientUnaryCall;
  Fence(argument: _svc_v1_FenceRequest, callback: grpc.requestCallback<_svc_v1_FenceResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Installs, replaces or (with an empty token) clears the stream's fencing token.
   */
  fence(argument: _svc_v1_FenceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_FenceResponse__Output>): grpc.ClientUnaryCall;
  fence(argument: _svc_v1_FenceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_FenceResponse__Output>): grpc.ClientUnaryCall;
  fence(argument: _svc_v1_FenceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_FenceResponse__Output>): grpc.ClientUnaryCall;
  fence(argument: _svc_v1_FenceRequest, callback: grpc.requestCallback<_svc_v1_FenceResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * A bucket's descriptor.
   */
  GetBucket(argument: _svc_v1_GetBucketRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_GetBucketResponse__Output>): grpc.ClientUnaryCall;
  GetBucket(argument: _svc_v1_GetBucketRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_GetBucketResponse__Output>): grpc.ClientUnaryCall;
  GetBucket(argument: _svc_v1_GetBucketRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_GetBucketResponse__Output>): grpc.ClientUnaryCall;
  GetBucket(argument: _svc_v1_GetBucketRequest, callback: grpc.requestCallback<_svc_v1_GetBucketResponse__Output>): grpc.ClientUnaryCall;
  /**
   * A bucket's descriptor.
   */
  getBucket(argument: _svc_v1_GetBucketRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_GetBucketResponse__Output>): grpc.ClientUnaryCall;
  getBucket(argument: _svc_v1_GetBucketRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_GetBucketResponse__Output>): grpc.ClientUnaryCall;
  getBucket(argument: _svc_v1_GetBucketRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_GetBucketResponse__Output>): grpc.ClientUnaryCall;
  getBucket(argument: _svc_v1_GetBucketRequest, callback: grpc.requestCallback<_svc_v1_GetBucketResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * A stream's descriptor with its fencing token.
   */
  GetStream(argument: _svc_v1_GetStreamRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_GetStreamResponse__Output>): grpc.ClientUnaryCall;
  GetStream(argument: _svc_v1_GetStreamRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_GetStreamResponse__Output>): grpc.ClientUnaryCall;
  GetStream(argument: _svc_v1_GetStreamRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_GetStreamResponse__Output>): grpc.ClientUnaryCall;
  GetStream(argument: _svc_v1_GetStreamRequest, callback: grpc.requestCallback<_svc_v1_GetStreamResponse__Output>): grpc.ClientUnaryCall;
  /**
   * A stream's descriptor with its fencing token.
   */
  getStream(argument: _svc_v1_GetStreamRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_GetStreamResponse__Output>): grpc.ClientUnaryCall;
  getStream(argument: _svc_v1_GetStreamRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_GetStreamResponse__Output>): grpc.ClientUnaryCall;
  getStream(argument: _svc_v1_GetStreamRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_GetStreamResponse__Output>): grpc.ClientUnaryCall;
  getStream(argument: _svc_v1_GetStreamRequest, callback: grpc.requestCallback<_svc_v1_GetStreamResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Pages the buckets in name order.
   */
  ListBuckets(argument: _svc_v1_ListBucketsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListBucketsResponse__Output>): grpc.ClientUnaryCall;
  ListBuckets(argument: _svc_v1_ListBucketsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ListBucketsResponse__Output>): grpc.ClientUnaryCall;
  ListBuckets(argument: _svc_v1_ListBucketsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListBucketsResponse__Output>): grpc.ClientUnaryCall;
  ListBuckets(argument: _svc_v1_ListBucketsRequest, callback: grpc.requestCallback<_svc_v1_ListBucketsResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Pages the buckets in name order.
   */
  listBuckets(argument: _svc_v1_ListBucketsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListBucketsResponse__Output>): grpc.ClientUnaryCall;
  listBuckets(argument: _svc_v1_ListBucketsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ListBucketsResponse__Output>): grpc.ClientUnaryCall;
  listBuckets(argument: _svc_v1_ListBucketsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListBucketsResponse__Output>): grpc.ClientUnaryCall;
  listBuckets(argument: _svc_v1_ListBucketsRequest, callback: grpc.requestCallback<_svc_v1_ListBucketsResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Pages one bucket's streams in stable order.
   */
  ListStreams(argument: _svc_v1_ListStreamsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListStreamsResponse__Output>): grpc.ClientUnaryCall;
  ListStreams(argument: _svc_v1_ListStreamsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ListStreamsResponse__Output>): grpc.ClientUnaryCall;
  ListStreams(argument: _svc_v1_ListStreamsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListStreamsResponse__Output>): grpc.ClientUnaryCall;
  ListStreams(argument: _svc_v1_ListStreamsRequest, callback: grpc.requestCallback<_svc_v1_ListStreamsResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Pages one bucket's streams in stable order.
   */
  listStreams(argument: _svc_v1_ListStreamsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListStreamsResponse__Output>): grpc.ClientUnaryCall;
  listStreams(argument: _svc_v1_ListStreamsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ListStreamsResponse__Output>): grpc.ClientUnaryCall;
  listStreams(argument: _svc_v1_ListStreamsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListStreamsResponse__Output>): grpc.ClientUnaryCall;
  listStreams(argument: _svc_v1_ListStreamsRequest, callback: grpc.requestCallback<_svc_v1_ListStreamsResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Reads one page of committed records from a start. Never waits for new records.
   */
  Read(argument: _svc_v1_ReadRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  Read(argument: _svc_v1_ReadRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  Read(argument: _svc_v1_ReadRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  Read(argument: _svc_v1_ReadRequest, callback: grpc.requestCallback<_svc_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Reads one page of committed records from a start. Never waits for new records.
   */
  read(argument: _svc_v1_ReadRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  read(argument: _svc_v1_ReadRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  read(argument: _svc_v1_ReadRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  read(argument: _svc_v1_ReadRequest, callback: grpc.requestCallback<_svc_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Vends the settled objects that hold a range, so a consumer can fetch history directly from
   * object storage. Entries tile; re-plan from vended_until when `more` is set or the plan expires.
   * At most 256 entries per plan. Each object is its record frames (payload_bytes), then a footer
   * index at [footer_offset, footer_offset + footer_length): fetch the footer, then the frames.
   * Presigned URLs (the default) are signed by the star and, on the fs backend, served by its data
   * bridge: GET {url} with an optional `Range: bytes=a-b` (206 + Content-Range); a bad signature or
   * an expired URL is 403. Raw entries name the storage bucket (on fs: the objects directory) and
   * object key; they are vended only by a star configured `--readplan-vending raw`.
   */
  ReadPlan(argument: _svc_v1_ReadPlanRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ReadPlanResponse__Output>): grpc.ClientUnaryCall;
  ReadPlan(argument: _svc_v1_ReadPlanRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ReadPlanResponse__Output>): grpc.ClientUnaryCall;
  ReadPlan(argument: _svc_v1_ReadPlanRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ReadPlanResponse__Output>): grpc.ClientUnaryCall;
  ReadPlan(argument: _svc_v1_ReadPlanRequest, callback: grpc.requestCallback<_svc_v1_ReadPlanResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Vends the settled objects that hold a range, so a consumer can fetch history directly from
   * object storage. Entries tile; re-plan from vended_until when `more` is set or the plan expires.
   * At most 256 entries per plan. Each object is its record frames (payload_bytes), then a footer
   * index at [footer_offset, footer_offset + footer_length): fetch the footer, then the frames.
   * Presigned URLs (the default) are signed by the star and, on the fs backend, served by its data
   * bridge: GET {url} with an optional `Range: bytes=a-b` (206 + Content-Range); a bad signature or
   * an expired URL is 403. Raw entries name the storage bucket (on fs: the objects directory) and
   * object key; they are vended only by a star configured `--readplan-vending raw`.
   */
  readPlan(argument: _svc_v1_ReadPlanRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ReadPlanResponse__Output>): grpc.ClientUnaryCall;
  readPlan(argument: _svc_v1_ReadPlanRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ReadPlanResponse__Output>): grpc.ClientUnaryCall;
  readPlan(argument: _svc_v1_ReadPlanRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ReadPlanResponse__Output>): grpc.ClientUnaryCall;
  readPlan(argument: _svc_v1_ReadPlanRequest, callback: grpc.requestCallback<_svc_v1_ReadPlanResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Changes only the config fields that are set.
   */
  ReconfigureStream(argument: _svc_v1_ReconfigureStreamRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ReconfigureStreamResponse__Output>): grpc.ClientUnaryCall;
  ReconfigureStream(argument: _svc_v1_ReconfigureStreamRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ReconfigureStreamResponse__Output>): grpc.ClientUnaryCall;
  ReconfigureStream(argument: _svc_v1_ReconfigureStreamRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ReconfigureStreamResponse__Output>): grpc.ClientUnaryCall;
  ReconfigureStream(argument: _svc_v1_ReconfigureStreamRequest, callback: grpc.requestCallback<_svc_v1_ReconfigureStreamResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Changes only the config fields that are set.
   */
  reconfigureStream(argument: _svc_v1_ReconfigureStreamRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ReconfigureStreamResponse__Output>): grpc.ClientUnaryCall;
  reconfigureStream(argument: _svc_v1_ReconfigureStreamRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ReconfigureStreamResponse__Output>): grpc.ClientUnaryCall;
  reconfigureStream(argument: _svc_v1_ReconfigureStreamRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ReconfigureStreamResponse__Output>): grpc.ClientUnaryCall;
  reconfigureStream(argument: _svc_v1_ReconfigureStreamRequest, callback: grpc.requestCallback<_svc_v1_ReconfigureStreamResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Star-initiated: asks this star to settle (seal its WAL into segments) now.
   */
  SettleStar(argument: _svc_v1_SettleStarRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_SettleStarResponse__Output>): grpc.ClientUnaryCall;
  SettleStar(argument: _svc_v1_SettleStarRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_SettleStarResponse__Output>): grpc.ClientUnaryCall;
  SettleStar(argument: _svc_v1_SettleStarRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_SettleStarResponse__Output>): grpc.ClientUnaryCall;
  SettleStar(argument: _svc_v1_SettleStarRequest, callback: grpc.requestCallback<_svc_v1_SettleStarResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Star-initiated: asks this star to settle (seal its WAL into segments) now.
   */
  settleStar(argument: _svc_v1_SettleStarRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_SettleStarResponse__Output>): grpc.ClientUnaryCall;
  settleStar(argument: _svc_v1_SettleStarRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_SettleStarResponse__Output>): grpc.ClientUnaryCall;
  settleStar(argument: _svc_v1_SettleStarRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_SettleStarResponse__Output>): grpc.ClientUnaryCall;
  settleStar(argument: _svc_v1_SettleStarRequest, callback: grpc.requestCallback<_svc_v1_SettleStarResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Live, ordered delivery from a start, pending at the tail. Each response is one non-empty
   * batch; resume after a disconnect from the last response's next_seq_num: nothing is skipped or
   * repeated. Ends with an error when the stream is deleted or trimmed under the cursor.
   */
  Subscribe(argument: _svc_v1_SubscribeRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_svc_v1_SubscribeResponse__Output>;
  Subscribe(argument: _svc_v1_SubscribeRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_svc_v1_SubscribeResponse__Output>;
  /**
   * Live, ordered delivery from a start, pending at the tail. Each response is one non-empty
   * batch; resume after a disconnect from the last response's next_seq_num: nothing is skipped or
   * repeated. Ends with an error when the stream is deleted or trimmed under the cursor.
   */
  subscribe(argument: _svc_v1_SubscribeRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_svc_v1_SubscribeResponse__Output>;
  subscribe(argument: _svc_v1_SubscribeRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_svc_v1_SubscribeResponse__Output>;
  
  /**
   * Advances the trim watermark (never lowers it).
   */
  Trim(argument: _svc_v1_TrimRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_TrimResponse__Output>): grpc.ClientUnaryCall;
  Trim(argument: _svc_v1_TrimRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_TrimResponse__Output>): grpc.ClientUnaryCall;
  Trim(argument: _svc_v1_TrimRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_TrimResponse__Output>): grpc.ClientUnaryCall;
  Trim(argument: _svc_v1_TrimRequest, callback: grpc.requestCallback<_svc_v1_TrimResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Advances the trim watermark (never lowers it).
   */
  trim(argument: _svc_v1_TrimRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_TrimResponse__Output>): grpc.ClientUnaryCall;
  trim(argument: _svc_v1_TrimRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_TrimResponse__Output>): grpc.ClientUnaryCall;
  trim(argument: _svc_v1_TrimRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_TrimResponse__Output>): grpc.ClientUnaryCall;
  trim(argument: _svc_v1_TrimRequest, callback: grpc.requestCallback<_svc_v1_TrimResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Replaces a bucket's configuration whole.
   */
  UpdateBucket(argument: _svc_v1_UpdateBucketRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_UpdateBucketResponse__Output>): grpc.ClientUnaryCall;
  UpdateBucket(argument: _svc_v1_UpdateBucketRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_UpdateBucketResponse__Output>): grpc.ClientUnaryCall;
  UpdateBucket(argument: _svc_v1_UpdateBucketRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_UpdateBucketResponse__Output>): grpc.ClientUnaryCall;
  UpdateBucket(argument: _svc_v1_UpdateBucketRequest, callback: grpc.requestCallback<_svc_v1_UpdateBucketResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Replaces a bucket's configuration whole.
   */
  updateBucket(argument: _svc_v1_UpdateBucketRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_UpdateBucketResponse__Output>): grpc.ClientUnaryCall;
  updateBucket(argument: _svc_v1_UpdateBucketRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_UpdateBucketResponse__Output>): grpc.ClientUnaryCall;
  updateBucket(argument: _svc_v1_UpdateBucketRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_UpdateBucketResponse__Output>): grpc.ClientUnaryCall;
  updateBucket(argument: _svc_v1_UpdateBucketRequest, callback: grpc.requestCallback<_svc_v1_UpdateBucketResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface DataServiceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Appends one batch durably. Answers once the batch is committed.
   */
  Append: grpc.handleUnaryCall<_svc_v1_AppendRequest__Output, _svc_v1_AppendResponse>;
  
  /**
   * A producer session on one stream. The first request opens it (address and fencing token); each
   * later request is one client batch, answered by one ack, in order.
   * 
   * Open: the caller needs the append grant, and a credential pinning svc_aux.fencing_token must
   * present exactly that token (else PERMISSION_DENIED). On a `fenced` stream, or one with a token
   * installed, a missing or different token fails the open with FAILED_PRECONDITION + FenceDetail.
   * A missing stream is NOT_FOUND unless its bucket creates streams on append (the first batch
   * creates it; later batches follow once it exists). A star holds at most 16,384 open sessions:
   * past that the open is RESOURCE_EXHAUSTED (retry shortly). In a cluster the open makes the star
   * the stream's leader, as an append does, or answers NOT_OWNER with the leader's address.
   * 
   * Pipelining: send batches without waiting for acks. While unacknowledged batches weigh more than
   * 32 MiB or number 1024, the server stops reading (HTTP/2 flow control pushes back); a producer
   * that stops reading acks is stalled the same way.
   * 
   * Stream config, as a producer library would apply it:
   * batch_max_records / batch_max_bytes (0 = unbounded): a client batch over either is
   * INVALID_ARGUMENT; they also cap coalesced durable batches.
   * batch_max_delay_ms (0 = none): client batches arriving within the delay are coalesced into one
   * durable batch (linger), flushed when the next would pass a cap, when the delay since the
   * group's first batch runs out, when a batch carries match_seq_num (it starts its own group),
   * or at half-close. Each client batch is still acked with its own exact positions.
   * throughput_max_bytes_per_second (0 = unbounded): the session reads at most this much record
   * content per second (token bucket, one second of burst); past it the server simply reads
   * slower, so the producer sees back-pressure, not errors.
   * 
   * Ending: the first failed batch ends the session with its status, after the acks of the batches
   * before it; no batch sent after it is appended (the server refuses every later batch of the
   * session, even one it had already taken), so the producer's order has no hole: reopen and send
   * again from the first unacknowledged batch. Whether the failed batch itself was appended is as its
   * status says (UNAVAILABLE may leave it in doubt; match_seq_num makes retries exact). A session cut
   * without a status (a lost connection) leaves every unacknowledged batch in doubt. The server also
   * ends the session, after acking every batch it handed to the
   * sequencer (batches still lingering are dropped, never appended), when:
   * a Fence installs a token this session's token does not admit: FAILED_PRECONDITION + FenceDetail;
   * a reconfigure hands the stream off (class, producer policy, timestamping, batching or
   * throughput changed): UNAVAILABLE, once; reopen to continue under the new config;
   * the stream is deleted: NOT_FOUND;
   * the stream's lease moves to another star (a drain, a lost renewal): UNAVAILABLE; reopen, and
   * follow the NOT_OWNER the reopen may answer;
   * the token's exp passes: DEADLINE_EXCEEDED; reopen with a fresh token;
   * the star shuts down: UNAVAILABLE; reopen.
   */
  AppendSession: grpc.handleBidiStreamingCall<_svc_v1_AppendSessionRequest__Output, _svc_v1_AppendSessionResponse>;
  
  /**
   * The committed tail.
   */
  CheckTail: grpc.handleUnaryCall<_svc_v1_CheckTailRequest__Output, _svc_v1_CheckTailResponse>;
  
  /**
   * Creates a bucket. A taken name is ALREADY_EXISTS.
   */
  CreateBucket: grpc.handleUnaryCall<_svc_v1_CreateBucketRequest__Output, _svc_v1_CreateBucketResponse>;
  
  /**
   * Creates a stream. Retrying with the same creation_token converges on the existing stream.
   */
  CreateStream: grpc.handleUnaryCall<_svc_v1_CreateStreamRequest__Output, _svc_v1_CreateStreamResponse>;
  
  /**
   * Deletes an empty bucket. A bucket that still holds streams is ALREADY_EXISTS (HTTP 409).
   */
  DeleteBucket: grpc.handleUnaryCall<_svc_v1_DeleteBucketRequest__Output, _svc_v1_DeleteBucketResponse>;
  
  /**
   * Deletes a stream. Idempotent on a deleted stream; NOT_FOUND for one that never existed.
   */
  DeleteStream: grpc.handleUnaryCall<_svc_v1_DeleteStreamRequest__Output, _svc_v1_DeleteStreamResponse>;
  
  /**
   * Exchanges an api-key credential for a short-lived scoped token (no bearer needed).
   */
  ExchangeToken: grpc.handleUnaryCall<_svc_v1_ExchangeTokenRequest__Output, _svc_v1_ExchangeTokenResponse>;
  
  /**
   * Installs, replaces or (with an empty token) clears the stream's fencing token.
   */
  Fence: grpc.handleUnaryCall<_svc_v1_FenceRequest__Output, _svc_v1_FenceResponse>;
  
  /**
   * A bucket's descriptor.
   */
  GetBucket: grpc.handleUnaryCall<_svc_v1_GetBucketRequest__Output, _svc_v1_GetBucketResponse>;
  
  /**
   * A stream's descriptor with its fencing token.
   */
  GetStream: grpc.handleUnaryCall<_svc_v1_GetStreamRequest__Output, _svc_v1_GetStreamResponse>;
  
  /**
   * Pages the buckets in name order.
   */
  ListBuckets: grpc.handleUnaryCall<_svc_v1_ListBucketsRequest__Output, _svc_v1_ListBucketsResponse>;
  
  /**
   * Pages one bucket's streams in stable order.
   */
  ListStreams: grpc.handleUnaryCall<_svc_v1_ListStreamsRequest__Output, _svc_v1_ListStreamsResponse>;
  
  /**
   * Reads one page of committed records from a start. Never waits for new records.
   */
  Read: grpc.handleUnaryCall<_svc_v1_ReadRequest__Output, _svc_v1_ReadResponse>;
  
  /**
   * Vends the settled objects that hold a range, so a consumer can fetch history directly from
   * object storage. Entries tile; re-plan from vended_until when `more` is set or the plan expires.
   * At most 256 entries per plan. Each object is its record frames (payload_bytes), then a footer
   * index at [footer_offset, footer_offset + footer_length): fetch the footer, then the frames.
   * Presigned URLs (the default) are signed by the star and, on the fs backend, served by its data
   * bridge: GET {url} with an optional `Range: bytes=a-b` (206 + Content-Range); a bad signature or
   * an expired URL is 403. Raw entries name the storage bucket (on fs: the objects directory) and
   * object key; they are vended only by a star configured `--readplan-vending raw`.
   */
  ReadPlan: grpc.handleUnaryCall<_svc_v1_ReadPlanRequest__Output, _svc_v1_ReadPlanResponse>;
  
  /**
   * Changes only the config fields that are set.
   */
  ReconfigureStream: grpc.handleUnaryCall<_svc_v1_ReconfigureStreamRequest__Output, _svc_v1_ReconfigureStreamResponse>;
  
  /**
   * Star-initiated: asks this star to settle (seal its WAL into segments) now.
   */
  SettleStar: grpc.handleUnaryCall<_svc_v1_SettleStarRequest__Output, _svc_v1_SettleStarResponse>;
  
  /**
   * Live, ordered delivery from a start, pending at the tail. Each response is one non-empty
   * batch; resume after a disconnect from the last response's next_seq_num: nothing is skipped or
   * repeated. Ends with an error when the stream is deleted or trimmed under the cursor.
   */
  Subscribe: grpc.handleServerStreamingCall<_svc_v1_SubscribeRequest__Output, _svc_v1_SubscribeResponse>;
  
  /**
   * Advances the trim watermark (never lowers it).
   */
  Trim: grpc.handleUnaryCall<_svc_v1_TrimRequest__Output, _svc_v1_TrimResponse>;
  
  /**
   * Replaces a bucket's configuration whole.
   */
  UpdateBucket: grpc.handleUnaryCall<_svc_v1_UpdateBucketRequest__Output, _svc_v1_UpdateBucketResponse>;
  
}

export interface DataServiceDefinition extends grpc.ServiceDefinition {
  Append: MethodDefinition<_svc_v1_AppendRequest, _svc_v1_AppendResponse, _svc_v1_AppendRequest__Output, _svc_v1_AppendResponse__Output>
  AppendSession: MethodDefinition<_svc_v1_AppendSessionRequest, _svc_v1_AppendSessionResponse, _svc_v1_AppendSessionRequest__Output, _svc_v1_AppendSessionResponse__Output>
  CheckTail: MethodDefinition<_svc_v1_CheckTailRequest, _svc_v1_CheckTailResponse, _svc_v1_CheckTailRequest__Output, _svc_v1_CheckTailResponse__Output>
  CreateBucket: MethodDefinition<_svc_v1_CreateBucketRequest, _svc_v1_CreateBucketResponse, _svc_v1_CreateBucketRequest__Output, _svc_v1_CreateBucketResponse__Output>
  CreateStream: MethodDefinition<_svc_v1_CreateStreamRequest, _svc_v1_CreateStreamResponse, _svc_v1_CreateStreamRequest__Output, _svc_v1_CreateStreamResponse__Output>
  DeleteBucket: MethodDefinition<_svc_v1_DeleteBucketRequest, _svc_v1_DeleteBucketResponse, _svc_v1_DeleteBucketRequest__Output, _svc_v1_DeleteBucketResponse__Output>
  DeleteStream: MethodDefinition<_svc_v1_DeleteStreamRequest, _svc_v1_DeleteStreamResponse, _svc_v1_DeleteStreamRequest__Output, _svc_v1_DeleteStreamResponse__Output>
  ExchangeToken: MethodDefinition<_svc_v1_ExchangeTokenRequest, _svc_v1_ExchangeTokenResponse, _svc_v1_ExchangeTokenRequest__Output, _svc_v1_ExchangeTokenResponse__Output>
  Fence: MethodDefinition<_svc_v1_FenceRequest, _svc_v1_FenceResponse, _svc_v1_FenceRequest__Output, _svc_v1_FenceResponse__Output>
  GetBucket: MethodDefinition<_svc_v1_GetBucketRequest, _svc_v1_GetBucketResponse, _svc_v1_GetBucketRequest__Output, _svc_v1_GetBucketResponse__Output>
  GetStream: MethodDefinition<_svc_v1_GetStreamRequest, _svc_v1_GetStreamResponse, _svc_v1_GetStreamRequest__Output, _svc_v1_GetStreamResponse__Output>
  ListBuckets: MethodDefinition<_svc_v1_ListBucketsRequest, _svc_v1_ListBucketsResponse, _svc_v1_ListBucketsRequest__Output, _svc_v1_ListBucketsResponse__Output>
  ListStreams: MethodDefinition<_svc_v1_ListStreamsRequest, _svc_v1_ListStreamsResponse, _svc_v1_ListStreamsRequest__Output, _svc_v1_ListStreamsResponse__Output>
  Read: MethodDefinition<_svc_v1_ReadRequest, _svc_v1_ReadResponse, _svc_v1_ReadRequest__Output, _svc_v1_ReadResponse__Output>
  ReadPlan: MethodDefinition<_svc_v1_ReadPlanRequest, _svc_v1_ReadPlanResponse, _svc_v1_ReadPlanRequest__Output, _svc_v1_ReadPlanResponse__Output>
  ReconfigureStream: MethodDefinition<_svc_v1_ReconfigureStreamRequest, _svc_v1_ReconfigureStreamResponse, _svc_v1_ReconfigureStreamRequest__Output, _svc_v1_ReconfigureStreamResponse__Output>
  SettleStar: MethodDefinition<_svc_v1_SettleStarRequest, _svc_v1_SettleStarResponse, _svc_v1_SettleStarRequest__Output, _svc_v1_SettleStarResponse__Output>
  Subscribe: MethodDefinition<_svc_v1_SubscribeRequest, _svc_v1_SubscribeResponse, _svc_v1_SubscribeRequest__Output, _svc_v1_SubscribeResponse__Output>
  Trim: MethodDefinition<_svc_v1_TrimRequest, _svc_v1_TrimResponse, _svc_v1_TrimRequest__Output, _svc_v1_TrimResponse__Output>
  UpdateBucket: MethodDefinition<_svc_v1_UpdateBucketRequest, _svc_v1_UpdateBucketResponse, _svc_v1_UpdateBucketRequest__Output, _svc_v1_UpdateBucketResponse__Output>
}
