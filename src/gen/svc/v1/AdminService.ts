// Original file: proto/svc/v1/admin.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { CreateCredentialRequest as _svc_v1_CreateCredentialRequest, CreateCredentialRequest__Output as _svc_v1_CreateCredentialRequest__Output } from '../../svc/v1/CreateCredentialRequest.ts';
import type { CreateCredentialResponse as _svc_v1_CreateCredentialResponse, CreateCredentialResponse__Output as _svc_v1_CreateCredentialResponse__Output } from '../../svc/v1/CreateCredentialResponse.ts';
import type { DecommissionRequest as _svc_v1_DecommissionRequest, DecommissionRequest__Output as _svc_v1_DecommissionRequest__Output } from '../../svc/v1/DecommissionRequest.ts';
import type { DecommissionResponse as _svc_v1_DecommissionResponse, DecommissionResponse__Output as _svc_v1_DecommissionResponse__Output } from '../../svc/v1/DecommissionResponse.ts';
import type { DrainRequest as _svc_v1_DrainRequest, DrainRequest__Output as _svc_v1_DrainRequest__Output } from '../../svc/v1/DrainRequest.ts';
import type { DrainResponse as _svc_v1_DrainResponse, DrainResponse__Output as _svc_v1_DrainResponse__Output } from '../../svc/v1/DrainResponse.ts';
import type { GetClusterOverviewRequest as _svc_v1_GetClusterOverviewRequest, GetClusterOverviewRequest__Output as _svc_v1_GetClusterOverviewRequest__Output } from '../../svc/v1/GetClusterOverviewRequest.ts';
import type { GetClusterOverviewResponse as _svc_v1_GetClusterOverviewResponse, GetClusterOverviewResponse__Output as _svc_v1_GetClusterOverviewResponse__Output } from '../../svc/v1/GetClusterOverviewResponse.ts';
import type { GetStreamDetailRequest as _svc_v1_GetStreamDetailRequest, GetStreamDetailRequest__Output as _svc_v1_GetStreamDetailRequest__Output } from '../../svc/v1/GetStreamDetailRequest.ts';
import type { GetStreamDetailResponse as _svc_v1_GetStreamDetailResponse, GetStreamDetailResponse__Output as _svc_v1_GetStreamDetailResponse__Output } from '../../svc/v1/GetStreamDetailResponse.ts';
import type { GetStreamLiveStatsRequest as _svc_v1_GetStreamLiveStatsRequest, GetStreamLiveStatsRequest__Output as _svc_v1_GetStreamLiveStatsRequest__Output } from '../../svc/v1/GetStreamLiveStatsRequest.ts';
import type { GetStreamLiveStatsResponse as _svc_v1_GetStreamLiveStatsResponse, GetStreamLiveStatsResponse__Output as _svc_v1_GetStreamLiveStatsResponse__Output } from '../../svc/v1/GetStreamLiveStatsResponse.ts';
import type { HealthRequest as _svc_v1_HealthRequest, HealthRequest__Output as _svc_v1_HealthRequest__Output } from '../../svc/v1/HealthRequest.ts';
import type { HealthResponse as _svc_v1_HealthResponse, HealthResponse__Output as _svc_v1_HealthResponse__Output } from '../../svc/v1/HealthResponse.ts';
import type { ListAuditQueuesRequest as _svc_v1_ListAuditQueuesRequest, ListAuditQueuesRequest__Output as _svc_v1_ListAuditQueuesRequest__Output } from '../../svc/v1/ListAuditQueuesRequest.ts';
import type { ListAuditQueuesResponse as _svc_v1_ListAuditQueuesResponse, ListAuditQueuesResponse__Output as _svc_v1_ListAuditQueuesResponse__Output } from '../../svc/v1/ListAuditQueuesResponse.ts';
import type { ListBucketSummariesRequest as _svc_v1_ListBucketSummariesRequest, ListBucketSummariesRequest__Output as _svc_v1_ListBucketSummariesRequest__Output } from '../../svc/v1/ListBucketSummariesRequest.ts';
import type { ListBucketSummariesResponse as _svc_v1_ListBucketSummariesResponse, ListBucketSummariesResponse__Output as _svc_v1_ListBucketSummariesResponse__Output } from '../../svc/v1/ListBucketSummariesResponse.ts';
import type { ListCredentialsRequest as _svc_v1_ListCredentialsRequest, ListCredentialsRequest__Output as _svc_v1_ListCredentialsRequest__Output } from '../../svc/v1/ListCredentialsRequest.ts';
import type { ListCredentialsResponse as _svc_v1_ListCredentialsResponse, ListCredentialsResponse__Output as _svc_v1_ListCredentialsResponse__Output } from '../../svc/v1/ListCredentialsResponse.ts';
import type { ListStarsRequest as _svc_v1_ListStarsRequest, ListStarsRequest__Output as _svc_v1_ListStarsRequest__Output } from '../../svc/v1/ListStarsRequest.ts';
import type { ListStarsResponse as _svc_v1_ListStarsResponse, ListStarsResponse__Output as _svc_v1_ListStarsResponse__Output } from '../../svc/v1/ListStarsResponse.ts';
import type { ListStreamSummariesRequest as _svc_v1_ListStreamSummariesRequest, ListStreamSummariesRequest__Output as _svc_v1_ListStreamSummariesRequest__Output } from '../../svc/v1/ListStreamSummariesRequest.ts';
import type { ListStreamSummariesResponse as _svc_v1_ListStreamSummariesResponse, ListStreamSummariesResponse__Output as _svc_v1_ListStreamSummariesResponse__Output } from '../../svc/v1/ListStreamSummariesResponse.ts';
import type { PeekAuditQueueRequest as _svc_v1_PeekAuditQueueRequest, PeekAuditQueueRequest__Output as _svc_v1_PeekAuditQueueRequest__Output } from '../../svc/v1/PeekAuditQueueRequest.ts';
import type { PeekAuditQueueResponse as _svc_v1_PeekAuditQueueResponse, PeekAuditQueueResponse__Output as _svc_v1_PeekAuditQueueResponse__Output } from '../../svc/v1/PeekAuditQueueResponse.ts';
import type { ReadStreamRecordsRequest as _svc_v1_ReadStreamRecordsRequest, ReadStreamRecordsRequest__Output as _svc_v1_ReadStreamRecordsRequest__Output } from '../../svc/v1/ReadStreamRecordsRequest.ts';
import type { ReadStreamRecordsResponse as _svc_v1_ReadStreamRecordsResponse, ReadStreamRecordsResponse__Output as _svc_v1_ReadStreamRecordsResponse__Output } from '../../svc/v1/ReadStreamRecordsResponse.ts';
import type { RevokeCredentialRequest as _svc_v1_RevokeCredentialRequest, RevokeCredentialRequest__Output as _svc_v1_RevokeCredentialRequest__Output } from '../../svc/v1/RevokeCredentialRequest.ts';
import type { RevokeCredentialResponse as _svc_v1_RevokeCredentialResponse, RevokeCredentialResponse__Output as _svc_v1_RevokeCredentialResponse__Output } from '../../svc/v1/RevokeCredentialResponse.ts';

export interface AdminServiceClient extends grpc.Client {
  /**
   * Registers an api-key credential; the secret is shown once, in this response.
   */
  CreateCredential(argument: _svc_v1_CreateCredentialRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_CreateCredentialResponse__Output>): grpc.ClientUnaryCall;
  CreateCredential(argument: _svc_v1_CreateCredentialRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_CreateCredentialResponse__Output>): grpc.ClientUnaryCall;
  CreateCredential(argument: _svc_v1_CreateCredentialRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_CreateCredentialResponse__Output>): grpc.ClientUnaryCall;
  CreateCredential(argument: _svc_v1_CreateCredentialRequest, callback: grpc.requestCallback<_svc_v1_CreateCredentialResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Registers an api-key credential; the secret is shown once, in this response.
   */
  createCredential(argument: _svc_v1_CreateCredentialRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_CreateCredentialResponse__Output>): grpc.ClientUnaryCall;
  createCredential(argument: _svc_v1_CreateCredentialRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_CreateCredentialResponse__Output>): grpc.ClientUnaryCall;
  createCredential(argument: _svc_v1_CreateCredentialRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_CreateCredentialResponse__Output>): grpc.ClientUnaryCall;
  createCredential(argument: _svc_v1_CreateCredentialRequest, callback: grpc.requestCallback<_svc_v1_CreateCredentialResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Drains a star and removes it from the membership. The only star is FAILED_PRECONDITION.
   */
  Decommission(argument: _svc_v1_DecommissionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_DecommissionResponse__Output>): grpc.ClientUnaryCall;
  Decommission(argument: _svc_v1_DecommissionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_DecommissionResponse__Output>): grpc.ClientUnaryCall;
  Decommission(argument: _svc_v1_DecommissionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_DecommissionResponse__Output>): grpc.ClientUnaryCall;
  Decommission(argument: _svc_v1_DecommissionRequest, callback: grpc.requestCallback<_svc_v1_DecommissionResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Drains a star and removes it from the membership. The only star is FAILED_PRECONDITION.
   */
  decommission(argument: _svc_v1_DecommissionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_DecommissionResponse__Output>): grpc.ClientUnaryCall;
  decommission(argument: _svc_v1_DecommissionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_DecommissionResponse__Output>): grpc.ClientUnaryCall;
  decommission(argument: _svc_v1_DecommissionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_DecommissionResponse__Output>): grpc.ClientUnaryCall;
  decommission(argument: _svc_v1_DecommissionRequest, callback: grpc.requestCallback<_svc_v1_DecommissionResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Moves every lease off a star. Draining the only star is FAILED_PRECONDITION.
   */
  Drain(argument: _svc_v1_DrainRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_DrainResponse__Output>): grpc.ClientUnaryCall;
  Drain(argument: _svc_v1_DrainRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_DrainResponse__Output>): grpc.ClientUnaryCall;
  Drain(argument: _svc_v1_DrainRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_DrainResponse__Output>): grpc.ClientUnaryCall;
  Drain(argument: _svc_v1_DrainRequest, callback: grpc.requestCallback<_svc_v1_DrainResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Moves every lease off a star. Draining the only star is FAILED_PRECONDITION.
   */
  drain(argument: _svc_v1_DrainRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_DrainResponse__Output>): grpc.ClientUnaryCall;
  drain(argument: _svc_v1_DrainRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_DrainResponse__Output>): grpc.ClientUnaryCall;
  drain(argument: _svc_v1_DrainRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_DrainResponse__Output>): grpc.ClientUnaryCall;
  drain(argument: _svc_v1_DrainRequest, callback: grpc.requestCallback<_svc_v1_DrainResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Cluster-wide counts.
   */
  GetClusterOverview(argument: _svc_v1_GetClusterOverviewRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_GetClusterOverviewResponse__Output>): grpc.ClientUnaryCall;
  GetClusterOverview(argument: _svc_v1_GetClusterOverviewRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_GetClusterOverviewResponse__Output>): grpc.ClientUnaryCall;
  GetClusterOverview(argument: _svc_v1_GetClusterOverviewRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_GetClusterOverviewResponse__Output>): grpc.ClientUnaryCall;
  GetClusterOverview(argument: _svc_v1_GetClusterOverviewRequest, callback: grpc.requestCallback<_svc_v1_GetClusterOverviewResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Cluster-wide counts.
   */
  getClusterOverview(argument: _svc_v1_GetClusterOverviewRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_GetClusterOverviewResponse__Output>): grpc.ClientUnaryCall;
  getClusterOverview(argument: _svc_v1_GetClusterOverviewRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_GetClusterOverviewResponse__Output>): grpc.ClientUnaryCall;
  getClusterOverview(argument: _svc_v1_GetClusterOverviewRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_GetClusterOverviewResponse__Output>): grpc.ClientUnaryCall;
  getClusterOverview(argument: _svc_v1_GetClusterOverviewRequest, callback: grpc.requestCallback<_svc_v1_GetClusterOverviewResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * One stream: descriptor, fencing token, tail and leader.
   */
  GetStreamDetail(argument: _svc_v1_GetStreamDetailRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_GetStreamDetailResponse__Output>): grpc.ClientUnaryCall;
  GetStreamDetail(argument: _svc_v1_GetStreamDetailRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_GetStreamDetailResponse__Output>): grpc.ClientUnaryCall;
  GetStreamDetail(argument: _svc_v1_GetStreamDetailRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_GetStreamDetailResponse__Output>): grpc.ClientUnaryCall;
  GetStreamDetail(argument: _svc_v1_GetStreamDetailRequest, callback: grpc.requestCallback<_svc_v1_GetStreamDetailResponse__Output>): grpc.ClientUnaryCall;
  /**
   * One stream: descriptor, fencing token, tail and leader.
   */
  getStreamDetail(argument: _svc_v1_GetStreamDetailRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_GetStreamDetailResponse__Output>): grpc.ClientUnaryCall;
  getStreamDetail(argument: _svc_v1_GetStreamDetailRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_GetStreamDetailResponse__Output>): grpc.ClientUnaryCall;
  getStreamDetail(argument: _svc_v1_GetStreamDetailRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_GetStreamDetailResponse__Output>): grpc.ClientUnaryCall;
  getStreamDetail(argument: _svc_v1_GetStreamDetailRequest, callback: grpc.requestCallback<_svc_v1_GetStreamDetailResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * One stream's live numbers as its leader sees them.
   */
  GetStreamLiveStats(argument: _svc_v1_GetStreamLiveStatsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_GetStreamLiveStatsResponse__Output>): grpc.ClientUnaryCall;
  GetStreamLiveStats(argument: _svc_v1_GetStreamLiveStatsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_GetStreamLiveStatsResponse__Output>): grpc.ClientUnaryCall;
  GetStreamLiveStats(argument: _svc_v1_GetStreamLiveStatsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_GetStreamLiveStatsResponse__Output>): grpc.ClientUnaryCall;
  GetStreamLiveStats(argument: _svc_v1_GetStreamLiveStatsRequest, callback: grpc.requestCallback<_svc_v1_GetStreamLiveStatsResponse__Output>): grpc.ClientUnaryCall;
  /**
   * One stream's live numbers as its leader sees them.
   */
  getStreamLiveStats(argument: _svc_v1_GetStreamLiveStatsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_GetStreamLiveStatsResponse__Output>): grpc.ClientUnaryCall;
  getStreamLiveStats(argument: _svc_v1_GetStreamLiveStatsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_GetStreamLiveStatsResponse__Output>): grpc.ClientUnaryCall;
  getStreamLiveStats(argument: _svc_v1_GetStreamLiveStatsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_GetStreamLiveStatsResponse__Output>): grpc.ClientUnaryCall;
  getStreamLiveStats(argument: _svc_v1_GetStreamLiveStatsRequest, callback: grpc.requestCallback<_svc_v1_GetStreamLiveStatsResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Liveness of the answering star.
   */
  Health(argument: _svc_v1_HealthRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_HealthResponse__Output>): grpc.ClientUnaryCall;
  Health(argument: _svc_v1_HealthRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_HealthResponse__Output>): grpc.ClientUnaryCall;
  Health(argument: _svc_v1_HealthRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_HealthResponse__Output>): grpc.ClientUnaryCall;
  Health(argument: _svc_v1_HealthRequest, callback: grpc.requestCallback<_svc_v1_HealthResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Liveness of the answering star.
   */
  health(argument: _svc_v1_HealthRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_HealthResponse__Output>): grpc.ClientUnaryCall;
  health(argument: _svc_v1_HealthRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_HealthResponse__Output>): grpc.ClientUnaryCall;
  health(argument: _svc_v1_HealthRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_HealthResponse__Output>): grpc.ClientUnaryCall;
  health(argument: _svc_v1_HealthRequest, callback: grpc.requestCallback<_svc_v1_HealthResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * The auditor's work queues.
   */
  ListAuditQueues(argument: _svc_v1_ListAuditQueuesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListAuditQueuesResponse__Output>): grpc.ClientUnaryCall;
  ListAuditQueues(argument: _svc_v1_ListAuditQueuesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ListAuditQueuesResponse__Output>): grpc.ClientUnaryCall;
  ListAuditQueues(argument: _svc_v1_ListAuditQueuesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListAuditQueuesResponse__Output>): grpc.ClientUnaryCall;
  ListAuditQueues(argument: _svc_v1_ListAuditQueuesRequest, callback: grpc.requestCallback<_svc_v1_ListAuditQueuesResponse__Output>): grpc.ClientUnaryCall;
  /**
   * The auditor's work queues.
   */
  listAuditQueues(argument: _svc_v1_ListAuditQueuesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListAuditQueuesResponse__Output>): grpc.ClientUnaryCall;
  listAuditQueues(argument: _svc_v1_ListAuditQueuesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ListAuditQueuesResponse__Output>): grpc.ClientUnaryCall;
  listAuditQueues(argument: _svc_v1_ListAuditQueuesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListAuditQueuesResponse__Output>): grpc.ClientUnaryCall;
  listAuditQueues(argument: _svc_v1_ListAuditQueuesRequest, callback: grpc.requestCallback<_svc_v1_ListAuditQueuesResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Buckets with bounded stream counts.
   */
  ListBucketSummaries(argument: _svc_v1_ListBucketSummariesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListBucketSummariesResponse__Output>): grpc.ClientUnaryCall;
  ListBucketSummaries(argument: _svc_v1_ListBucketSummariesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ListBucketSummariesResponse__Output>): grpc.ClientUnaryCall;
  ListBucketSummaries(argument: _svc_v1_ListBucketSummariesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListBucketSummariesResponse__Output>): grpc.ClientUnaryCall;
  ListBucketSummaries(argument: _svc_v1_ListBucketSummariesRequest, callback: grpc.requestCallback<_svc_v1_ListBucketSummariesResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Buckets with bounded stream counts.
   */
  listBucketSummaries(argument: _svc_v1_ListBucketSummariesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListBucketSummariesResponse__Output>): grpc.ClientUnaryCall;
  listBucketSummaries(argument: _svc_v1_ListBucketSummariesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ListBucketSummariesResponse__Output>): grpc.ClientUnaryCall;
  listBucketSummaries(argument: _svc_v1_ListBucketSummariesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListBucketSummariesResponse__Output>): grpc.ClientUnaryCall;
  listBucketSummaries(argument: _svc_v1_ListBucketSummariesRequest, callback: grpc.requestCallback<_svc_v1_ListBucketSummariesResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Pages the credential registry (never secrets or hashes).
   */
  ListCredentials(argument: _svc_v1_ListCredentialsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListCredentialsResponse__Output>): grpc.ClientUnaryCall;
  ListCredentials(argument: _svc_v1_ListCredentialsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ListCredentialsResponse__Output>): grpc.ClientUnaryCall;
  ListCredentials(argument: _svc_v1_ListCredentialsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListCredentialsResponse__Output>): grpc.ClientUnaryCall;
  ListCredentials(argument: _svc_v1_ListCredentialsRequest, callback: grpc.requestCallback<_svc_v1_ListCredentialsResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Pages the credential registry (never secrets or hashes).
   */
  listCredentials(argument: _svc_v1_ListCredentialsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListCredentialsResponse__Output>): grpc.ClientUnaryCall;
  listCredentials(argument: _svc_v1_ListCredentialsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ListCredentialsResponse__Output>): grpc.ClientUnaryCall;
  listCredentials(argument: _svc_v1_ListCredentialsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListCredentialsResponse__Output>): grpc.ClientUnaryCall;
  listCredentials(argument: _svc_v1_ListCredentialsRequest, callback: grpc.requestCallback<_svc_v1_ListCredentialsResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * The cluster's stars.
   */
  ListStars(argument: _svc_v1_ListStarsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListStarsResponse__Output>): grpc.ClientUnaryCall;
  ListStars(argument: _svc_v1_ListStarsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ListStarsResponse__Output>): grpc.ClientUnaryCall;
  ListStars(argument: _svc_v1_ListStarsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListStarsResponse__Output>): grpc.ClientUnaryCall;
  ListStars(argument: _svc_v1_ListStarsRequest, callback: grpc.requestCallback<_svc_v1_ListStarsResponse__Output>): grpc.ClientUnaryCall;
  /**
   * The cluster's stars.
   */
  listStars(argument: _svc_v1_ListStarsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListStarsResponse__Output>): grpc.ClientUnaryCall;
  listStars(argument: _svc_v1_ListStarsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ListStarsResponse__Output>): grpc.ClientUnaryCall;
  listStars(argument: _svc_v1_ListStarsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListStarsResponse__Output>): grpc.ClientUnaryCall;
  listStars(argument: _svc_v1_ListStarsRequest, callback: grpc.requestCallback<_svc_v1_ListStarsResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * One bucket's streams with their tails.
   */
  ListStreamSummaries(argument: _svc_v1_ListStreamSummariesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListStreamSummariesResponse__Output>): grpc.ClientUnaryCall;
  ListStreamSummaries(argument: _svc_v1_ListStreamSummariesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ListStreamSummariesResponse__Output>): grpc.ClientUnaryCall;
  ListStreamSummaries(argument: _svc_v1_ListStreamSummariesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListStreamSummariesResponse__Output>): grpc.ClientUnaryCall;
  ListStreamSummaries(argument: _svc_v1_ListStreamSummariesRequest, callback: grpc.requestCallback<_svc_v1_ListStreamSummariesResponse__Output>): grpc.ClientUnaryCall;
  /**
   * One bucket's streams with their tails.
   */
  listStreamSummaries(argument: _svc_v1_ListStreamSummariesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListStreamSummariesResponse__Output>): grpc.ClientUnaryCall;
  listStreamSummaries(argument: _svc_v1_ListStreamSummariesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ListStreamSummariesResponse__Output>): grpc.ClientUnaryCall;
  listStreamSummaries(argument: _svc_v1_ListStreamSummariesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ListStreamSummariesResponse__Output>): grpc.ClientUnaryCall;
  listStreamSummaries(argument: _svc_v1_ListStreamSummariesRequest, callback: grpc.requestCallback<_svc_v1_ListStreamSummariesResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * The head of one audit queue.
   */
  PeekAuditQueue(argument: _svc_v1_PeekAuditQueueRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_PeekAuditQueueResponse__Output>): grpc.ClientUnaryCall;
  PeekAuditQueue(argument: _svc_v1_PeekAuditQueueRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_PeekAuditQueueResponse__Output>): grpc.ClientUnaryCall;
  PeekAuditQueue(argument: _svc_v1_PeekAuditQueueRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_PeekAuditQueueResponse__Output>): grpc.ClientUnaryCall;
  PeekAuditQueue(argument: _svc_v1_PeekAuditQueueRequest, callback: grpc.requestCallback<_svc_v1_PeekAuditQueueResponse__Output>): grpc.ClientUnaryCall;
  /**
   * The head of one audit queue.
   */
  peekAuditQueue(argument: _svc_v1_PeekAuditQueueRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_PeekAuditQueueResponse__Output>): grpc.ClientUnaryCall;
  peekAuditQueue(argument: _svc_v1_PeekAuditQueueRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_PeekAuditQueueResponse__Output>): grpc.ClientUnaryCall;
  peekAuditQueue(argument: _svc_v1_PeekAuditQueueRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_PeekAuditQueueResponse__Output>): grpc.ClientUnaryCall;
  peekAuditQueue(argument: _svc_v1_PeekAuditQueueRequest, callback: grpc.requestCallback<_svc_v1_PeekAuditQueueResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * The dashboard's record reader: one bounded page (at most 500 records or 1 MiB).
   */
  ReadStreamRecords(argument: _svc_v1_ReadStreamRecordsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ReadStreamRecordsResponse__Output>): grpc.ClientUnaryCall;
  ReadStreamRecords(argument: _svc_v1_ReadStreamRecordsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ReadStreamRecordsResponse__Output>): grpc.ClientUnaryCall;
  ReadStreamRecords(argument: _svc_v1_ReadStreamRecordsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ReadStreamRecordsResponse__Output>): grpc.ClientUnaryCall;
  ReadStreamRecords(argument: _svc_v1_ReadStreamRecordsRequest, callback: grpc.requestCallback<_svc_v1_ReadStreamRecordsResponse__Output>): grpc.ClientUnaryCall;
  /**
   * The dashboard's record reader: one bounded page (at most 500 records or 1 MiB).
   */
  readStreamRecords(argument: _svc_v1_ReadStreamRecordsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ReadStreamRecordsResponse__Output>): grpc.ClientUnaryCall;
  readStreamRecords(argument: _svc_v1_ReadStreamRecordsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_ReadStreamRecordsResponse__Output>): grpc.ClientUnaryCall;
  readStreamRecords(argument: _svc_v1_ReadStreamRecordsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_ReadStreamRecordsResponse__Output>): grpc.ClientUnaryCall;
  readStreamRecords(argument: _svc_v1_ReadStreamRecordsRequest, callback: grpc.requestCallback<_svc_v1_ReadStreamRecordsResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Revokes a credential, effective immediately.
   */
  RevokeCredential(argument: _svc_v1_RevokeCredentialRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_RevokeCredentialResponse__Output>): grpc.ClientUnaryCall;
  RevokeCredential(argument: _svc_v1_RevokeCredentialRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_RevokeCredentialResponse__Output>): grpc.ClientUnaryCall;
  RevokeCredential(argument: _svc_v1_RevokeCredentialRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_RevokeCredentialResponse__Output>): grpc.ClientUnaryCall;
  RevokeCredential(argument: _svc_v1_RevokeCredentialRequest, callback: grpc.requestCallback<_svc_v1_RevokeCredentialResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Revokes a credential, effective immediately.
   */
  revokeCredential(argument: _svc_v1_RevokeCredentialRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_RevokeCredentialResponse__Output>): grpc.ClientUnaryCall;
  revokeCredential(argument: _svc_v1_RevokeCredentialRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_svc_v1_RevokeCredentialResponse__Output>): grpc.ClientUnaryCall;
  revokeCredential(argument: _svc_v1_RevokeCredentialRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_svc_v1_RevokeCredentialResponse__Output>): grpc.ClientUnaryCall;
  revokeCredential(argument: _svc_v1_RevokeCredentialRequest, callback: grpc.requestCallback<_svc_v1_RevokeCredentialResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface AdminServiceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Registers an api-key credential; the secret is shown once, in this response.
   */
  CreateCredential: grpc.handleUnaryCall<_svc_v1_CreateCredentialRequest__Output, _svc_v1_CreateCredentialResponse>;
  
  /**
   * Drains a star and removes it from the membership. The only star is FAILED_PRECONDITION.
   */
  Decommission: grpc.handleUnaryCall<_svc_v1_DecommissionRequest__Output, _svc_v1_DecommissionResponse>;
  
  /**
   * Moves every lease off a star. Draining the only star is FAILED_PRECONDITION.
   */
  Drain: grpc.handleUnaryCall<_svc_v1_DrainRequest__Output, _svc_v1_DrainResponse>;
  
  /**
   * Cluster-wide counts.
   */
  GetClusterOverview: grpc.handleUnaryCall<_svc_v1_GetClusterOverviewRequest__Output, _svc_v1_GetClusterOverviewResponse>;
  
  /**
   * One stream: descriptor, fencing token, tail and leader.
   */
  GetStreamDetail: grpc.handleUnaryCall<_svc_v1_GetStreamDetailRequest__Output, _svc_v1_GetStreamDetailResponse>;
  
  /**
   * One stream's live numbers as its leader sees them.
   */
  GetStreamLiveStats: grpc.handleUnaryCall<_svc_v1_GetStreamLiveStatsRequest__Output, _svc_v1_GetStreamLiveStatsResponse>;
  
  /**
   * Liveness of the answering star.
   */
  Health: grpc.handleUnaryCall<_svc_v1_HealthRequest__Output, _svc_v1_HealthResponse>;
  
  /**
   * The auditor's work queues.
   */
  ListAuditQueues: grpc.handleUnaryCall<_svc_v1_ListAuditQueuesRequest__Output, _svc_v1_ListAuditQueuesResponse>;
  
  /**
   * Buckets with bounded stream counts.
   */
  ListBucketSummaries: grpc.handleUnaryCall<_svc_v1_ListBucketSummariesRequest__Output, _svc_v1_ListBucketSummariesResponse>;
  
  /**
   * Pages the credential registry (never secrets or hashes).
   */
  ListCredentials: grpc.handleUnaryCall<_svc_v1_ListCredentialsRequest__Output, _svc_v1_ListCredentialsResponse>;
  
  /**
   * The cluster's stars.
   */
  ListStars: grpc.handleUnaryCall<_svc_v1_ListStarsRequest__Output, _svc_v1_ListStarsResponse>;
  
  /**
   * One bucket's streams with their tails.
   */
  ListStreamSummaries: grpc.handleUnaryCall<_svc_v1_ListStreamSummariesRequest__Output, _svc_v1_ListStreamSummariesResponse>;
  
  /**
   * The head of one audit queue.
   */
  PeekAuditQueue: grpc.handleUnaryCall<_svc_v1_PeekAuditQueueRequest__Output, _svc_v1_PeekAuditQueueResponse>;
  
  /**
   * The dashboard's record reader: one bounded page (at most 500 records or 1 MiB).
   */
  ReadStreamRecords: grpc.handleUnaryCall<_svc_v1_ReadStreamRecordsRequest__Output, _svc_v1_ReadStreamRecordsResponse>;
  
  /**
   * Revokes a credential, effective immediately.
   */
  RevokeCredential: grpc.handleUnaryCall<_svc_v1_RevokeCredentialRequest__Output, _svc_v1_RevokeCredentialResponse>;
  
}

export interface AdminServiceDefinition extends grpc.ServiceDefinition {
  CreateCredential: MethodDefinition<_svc_v1_CreateCredentialRequest, _svc_v1_CreateCredentialResponse, _svc_v1_CreateCredentialRequest__Output, _svc_v1_CreateCredentialResponse__Output>
  Decommission: MethodDefinition<_svc_v1_DecommissionRequest, _svc_v1_DecommissionResponse, _svc_v1_DecommissionRequest__Output, _svc_v1_DecommissionResponse__Output>
  Drain: MethodDefinition<_svc_v1_DrainRequest, _svc_v1_DrainResponse, _svc_v1_DrainRequest__Output, _svc_v1_DrainResponse__Output>
  GetClusterOverview: MethodDefinition<_svc_v1_GetClusterOverviewRequest, _svc_v1_GetClusterOverviewResponse, _svc_v1_GetClusterOverviewRequest__Output, _svc_v1_GetClusterOverviewResponse__Output>
  GetStreamDetail: MethodDefinition<_svc_v1_GetStreamDetailRequest, _svc_v1_GetStreamDetailResponse, _svc_v1_GetStreamDetailRequest__Output, _svc_v1_GetStreamDetailResponse__Output>
  GetStreamLiveStats: MethodDefinition<_svc_v1_GetStreamLiveStatsRequest, _svc_v1_GetStreamLiveStatsResponse, _svc_v1_GetStreamLiveStatsRequest__Output, _svc_v1_GetStreamLiveStatsResponse__Output>
  Health: MethodDefinition<_svc_v1_HealthRequest, _svc_v1_HealthResponse, _svc_v1_HealthRequest__Output, _svc_v1_HealthResponse__Output>
  ListAuditQueues: MethodDefinition<_svc_v1_ListAuditQueuesRequest, _svc_v1_ListAuditQueuesResponse, _svc_v1_ListAuditQueuesRequest__Output, _svc_v1_ListAuditQueuesResponse__Output>
  ListBucketSummaries: MethodDefinition<_svc_v1_ListBucketSummariesRequest, _svc_v1_ListBucketSummariesResponse, _svc_v1_ListBucketSummariesRequest__Output, _svc_v1_ListBucketSummariesResponse__Output>
  ListCredentials: MethodDefinition<_svc_v1_ListCredentialsRequest, _svc_v1_ListCredentialsResponse, _svc_v1_ListCredentialsRequest__Output, _svc_v1_ListCredentialsResponse__Output>
  ListStars: MethodDefinition<_svc_v1_ListStarsRequest, _svc_v1_ListStarsResponse, _svc_v1_ListStarsRequest__Output, _svc_v1_ListStarsResponse__Output>
  ListStreamSummaries: MethodDefinition<_svc_v1_ListStreamSummariesRequest, _svc_v1_ListStreamSummariesResponse, _svc_v1_ListStreamSummariesRequest__Output, _svc_v1_ListStreamSummariesResponse__Output>
  PeekAuditQueue: MethodDefinition<_svc_v1_PeekAuditQueueRequest, _svc_v1_PeekAuditQueueResponse, _svc_v1_PeekAuditQueueRequest__Output, _svc_v1_PeekAuditQueueResponse__Output>
  ReadStreamRecords: MethodDefinition<_svc_v1_ReadStreamRecordsRequest, _svc_v1_ReadStreamRecordsResponse, _svc_v1_ReadStreamRecordsRequest__Output, _svc_v1_ReadStreamRecordsResponse__Output>
  RevokeCredential: MethodDefinition<_svc_v1_RevokeCredentialRequest, _svc_v1_RevokeCredentialResponse, _svc_v1_RevokeCredentialRequest__Output, _svc_v1_RevokeCredentialResponse__Output>
}
