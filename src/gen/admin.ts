import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { AdminServiceClient as _svc_v1_AdminServiceClient, AdminServiceDefinition as _svc_v1_AdminServiceDefinition } from './svc/v1/AdminService.ts';
import type { AppendRecord as _svc_v1_AppendRecord, AppendRecord__Output as _svc_v1_AppendRecord__Output } from './svc/v1/AppendRecord.ts';
import type { AuditItem as _svc_v1_AuditItem, AuditItem__Output as _svc_v1_AuditItem__Output } from './svc/v1/AuditItem.ts';
import type { AuditQueue as _svc_v1_AuditQueue, AuditQueue__Output as _svc_v1_AuditQueue__Output } from './svc/v1/AuditQueue.ts';
import type { BucketConfig as _svc_v1_BucketConfig, BucketConfig__Output as _svc_v1_BucketConfig__Output } from './svc/v1/BucketConfig.ts';
import type { BucketInfo as _svc_v1_BucketInfo, BucketInfo__Output as _svc_v1_BucketInfo__Output } from './svc/v1/BucketInfo.ts';
import type { BucketSummary as _svc_v1_BucketSummary, BucketSummary__Output as _svc_v1_BucketSummary__Output } from './svc/v1/BucketSummary.ts';
import type { CreateCredentialRequest as _svc_v1_CreateCredentialRequest, CreateCredentialRequest__Output as _svc_v1_CreateCredentialRequest__Output } from './svc/v1/CreateCredentialRequest.ts';
import type { CreateCredentialResponse as _svc_v1_CreateCredentialResponse, CreateCredentialResponse__Output as _svc_v1_CreateCredentialResponse__Output } from './svc/v1/CreateCredentialResponse.ts';
import type { Credential as _svc_v1_Credential, Credential__Output as _svc_v1_Credential__Output } from './svc/v1/Credential.ts';
import type { DecommissionRequest as _svc_v1_DecommissionRequest, DecommissionRequest__Output as _svc_v1_DecommissionRequest__Output } from './svc/v1/DecommissionRequest.ts';
import type { DecommissionResponse as _svc_v1_DecommissionResponse, DecommissionResponse__Output as _svc_v1_DecommissionResponse__Output } from './svc/v1/DecommissionResponse.ts';
import type { DrainRequest as _svc_v1_DrainRequest, DrainRequest__Output as _svc_v1_DrainRequest__Output } from './svc/v1/DrainRequest.ts';
import type { DrainResponse as _svc_v1_DrainResponse, DrainResponse__Output as _svc_v1_DrainResponse__Output } from './svc/v1/DrainResponse.ts';
import type { GetClusterOverviewRequest as _svc_v1_GetClusterOverviewRequest, GetClusterOverviewRequest__Output as _svc_v1_GetClusterOverviewRequest__Output } from './svc/v1/GetClusterOverviewRequest.ts';
import type { GetClusterOverviewResponse as _svc_v1_GetClusterOverviewResponse, GetClusterOverviewResponse__Output as _svc_v1_GetClusterOverviewResponse__Output } from './svc/v1/GetClusterOverviewResponse.ts';
import type { GetStreamDetailRequest as _svc_v1_GetStreamDetailRequest, GetStreamDetailRequest__Output as _svc_v1_GetStreamDetailRequest__Output } from './svc/v1/GetStreamDetailRequest.ts';
import type { GetStreamDetailResponse as _svc_v1_GetStreamDetailResponse, GetStreamDetailResponse__Output as _svc_v1_GetStreamDetailResponse__Output } from './svc/v1/GetStreamDetailResponse.ts';
import type { GetStreamLiveStatsRequest as _svc_v1_GetStreamLiveStatsRequest, GetStreamLiveStatsRequest__Output as _svc_v1_GetStreamLiveStatsRequest__Output } from './svc/v1/GetStreamLiveStatsRequest.ts';
import type { GetStreamLiveStatsResponse as _svc_v1_GetStreamLiveStatsResponse, GetStreamLiveStatsResponse__Output as _svc_v1_GetStreamLiveStatsResponse__Output } from './svc/v1/GetStreamLiveStatsResponse.ts';
import type { Header as _svc_v1_Header, Header__Output as _svc_v1_Header__Output } from './svc/v1/Header.ts';
import type { HealthRequest as _svc_v1_HealthRequest, HealthRequest__Output as _svc_v1_HealthRequest__Output } from './svc/v1/HealthRequest.ts';
import type { HealthResponse as _svc_v1_HealthResponse, HealthResponse__Output as _svc_v1_HealthResponse__Output } from './svc/v1/HealthResponse.ts';
import type { ListAuditQueuesRequest as _svc_v1_ListAuditQueuesRequest, ListAuditQueuesRequest__Output as _svc_v1_ListAuditQueuesRequest__Output } from './svc/v1/ListAuditQueuesRequest.ts';
import type { ListAuditQueuesResponse as _svc_v1_ListAuditQueuesResponse, ListAuditQueuesResponse__Output as _svc_v1_ListAuditQueuesResponse__Output } from './svc/v1/ListAuditQueuesResponse.ts';
import type { ListBucketSummariesRequest as _svc_v1_ListBucketSummariesRequest, ListBucketSummariesRequest__Output as _svc_v1_ListBucketSummariesRequest__Output } from './svc/v1/ListBucketSummariesRequest.ts';
import type { ListBucketSummariesResponse as _svc_v1_ListBucketSummariesResponse, ListBucketSummariesResponse__Output as _svc_v1_ListBucketSummariesResponse__Output } from './svc/v1/ListBucketSummariesResponse.ts';
import type { ListCredentialsRequest as _svc_v1_ListCredentialsRequest, ListCredentialsRequest__Output as _svc_v1_ListCredentialsRequest__Output } from './svc/v1/ListCredentialsRequest.ts';
import type { ListCredentialsResponse as _svc_v1_ListCredentialsResponse, ListCredentialsResponse__Output as _svc_v1_ListCredentialsResponse__Output } from './svc/v1/ListCredentialsResponse.ts';
import type { ListStarsRequest as _svc_v1_ListStarsRequest, ListStarsRequest__Output as _svc_v1_ListStarsRequest__Output } from './svc/v1/ListStarsRequest.ts';
import type { ListStarsResponse as _svc_v1_ListStarsResponse, ListStarsResponse__Output as _svc_v1_ListStarsResponse__Output } from './svc/v1/ListStarsResponse.ts';
import type { ListStreamSummariesRequest as _svc_v1_ListStreamSummariesRequest, ListStreamSummariesRequest__Output as _svc_v1_ListStreamSummariesRequest__Output } from './svc/v1/ListStreamSummariesRequest.ts';
import type { ListStreamSummariesResponse as _svc_v1_ListStreamSummariesResponse, ListStreamSummariesResponse__Output as _svc_v1_ListStreamSummariesResponse__Output } from './svc/v1/ListStreamSummariesResponse.ts';
import type { PeekAuditQueueRequest as _svc_v1_PeekAuditQueueRequest, PeekAuditQueueRequest__Output as _svc_v1_PeekAuditQueueRequest__Output } from './svc/v1/PeekAuditQueueRequest.ts';
import type { PeekAuditQueueResponse as _svc_v1_PeekAuditQueueResponse, PeekAuditQueueResponse__Output as _svc_v1_PeekAuditQueueResponse__Output } from './svc/v1/PeekAuditQueueResponse.ts';
import type { Position as _svc_v1_Position, Position__Output as _svc_v1_Position__Output } from './svc/v1/Position.ts';
import type { ReadStreamRecordsRequest as _svc_v1_ReadStreamRecordsRequest, ReadStreamRecordsRequest__Output as _svc_v1_ReadStreamRecordsRequest__Output } from './svc/v1/ReadStreamRecordsRequest.ts';
import type { ReadStreamRecordsResponse as _svc_v1_ReadStreamRecordsResponse, ReadStreamRecordsResponse__Output as _svc_v1_ReadStreamRecordsResponse__Output } from './svc/v1/ReadStreamRecordsResponse.ts';
import type { RevokeCredentialRequest as _svc_v1_RevokeCredentialRequest, RevokeCredentialRequest__Output as _svc_v1_RevokeCredentialRequest__Output } from './svc/v1/RevokeCredentialRequest.ts';
import type { RevokeCredentialResponse as _svc_v1_RevokeCredentialResponse, RevokeCredentialResponse__Output as _svc_v1_RevokeCredentialResponse__Output } from './svc/v1/RevokeCredentialResponse.ts';
import type { SequencedRecord as _svc_v1_SequencedRecord, SequencedRecord__Output as _svc_v1_SequencedRecord__Output } from './svc/v1/SequencedRecord.ts';
import type { StarInfo as _svc_v1_StarInfo, StarInfo__Output as _svc_v1_StarInfo__Output } from './svc/v1/StarInfo.ts';
import type { StreamConfig as _svc_v1_StreamConfig, StreamConfig__Output as _svc_v1_StreamConfig__Output } from './svc/v1/StreamConfig.ts';
import type { StreamInfo as _svc_v1_StreamInfo, StreamInfo__Output as _svc_v1_StreamInfo__Output } from './svc/v1/StreamInfo.ts';
import type { StreamSummary as _svc_v1_StreamSummary, StreamSummary__Output as _svc_v1_StreamSummary__Output } from './svc/v1/StreamSummary.ts';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  svc: {
    v1: {
      AdminService: SubtypeConstructor<typeof grpc.Client, _svc_v1_AdminServiceClient> & { service: _svc_v1_AdminServiceDefinition }
      AppendRecord: MessageTypeDefinition<_svc_v1_AppendRecord, _svc_v1_AppendRecord__Output>
      AuditItem: MessageTypeDefinition<_svc_v1_AuditItem, _svc_v1_AuditItem__Output>
      AuditQueue: MessageTypeDefinition<_svc_v1_AuditQueue, _svc_v1_AuditQueue__Output>
      BucketConfig: MessageTypeDefinition<_svc_v1_BucketConfig, _svc_v1_BucketConfig__Output>
      BucketInfo: MessageTypeDefinition<_svc_v1_BucketInfo, _svc_v1_BucketInfo__Output>
      BucketSummary: MessageTypeDefinition<_svc_v1_BucketSummary, _svc_v1_BucketSummary__Output>
      CreateCredentialRequest: MessageTypeDefinition<_svc_v1_CreateCredentialRequest, _svc_v1_CreateCredentialRequest__Output>
      CreateCredentialResponse: MessageTypeDefinition<_svc_v1_CreateCredentialResponse, _svc_v1_CreateCredentialResponse__Output>
      Credential: MessageTypeDefinition<_svc_v1_Credential, _svc_v1_Credential__Output>
      CredentialState: EnumTypeDefinition
      DecommissionRequest: MessageTypeDefinition<_svc_v1_DecommissionRequest, _svc_v1_DecommissionRequest__Output>
      DecommissionResponse: MessageTypeDefinition<_svc_v1_DecommissionResponse, _svc_v1_DecommissionResponse__Output>
      DrainRequest: MessageTypeDefinition<_svc_v1_DrainRequest, _svc_v1_DrainRequest__Output>
      DrainResponse: MessageTypeDefinition<_svc_v1_DrainResponse, _svc_v1_DrainResponse__Output>
      GetClusterOverviewRequest: MessageTypeDefinition<_svc_v1_GetClusterOverviewRequest, _svc_v1_GetClusterOverviewRequest__Output>
      GetClusterOverviewResponse: MessageTypeDefinition<_svc_v1_GetClusterOverviewResponse, _svc_v1_GetClusterOverviewResponse__Output>
      GetStreamDetailRequest: MessageTypeDefinition<_svc_v1_GetStreamDetailRequest, _svc_v1_GetStreamDetailRequest__Output>
      GetStreamDetailResponse: MessageTypeDefinition<_svc_v1_GetStreamDetailResponse, _svc_v1_GetStreamDetailResponse__Output>
      GetStreamLiveStatsRequest: MessageTypeDefinition<_svc_v1_GetStreamLiveStatsRequest, _svc_v1_GetStreamLiveStatsRequest__Output>
      GetStreamLiveStatsResponse: MessageTypeDefinition<_svc_v1_GetStreamLiveStatsResponse, _svc_v1_GetStreamLiveStatsResponse__Output>
      Header: MessageTypeDefinition<_svc_v1_Header, _svc_v1_Header__Output>
      HealthRequest: MessageTypeDefinition<_svc_v1_HealthRequest, _svc_v1_HealthRequest__Output>
      HealthResponse: MessageTypeDefinition<_svc_v1_HealthResponse, _svc_v1_HealthResponse__Output>
      ListAuditQueuesRequest: MessageTypeDefinition<_svc_v1_ListAuditQueuesRequest, _svc_v1_ListAuditQueuesRequest__Output>
      ListAuditQueuesResponse: MessageTypeDefinition<_svc_v1_ListAuditQueuesResponse, _svc_v1_ListAuditQueuesResponse__Output>
      ListBucketSummariesRequest: MessageTypeDefinition<_svc_v1_ListBucketSummariesRequest, _svc_v1_ListBucketSummariesRequest__Output>
      ListBucketSummariesResponse: MessageTypeDefinition<_svc_v1_ListBucketSummariesResponse, _svc_v1_ListBucketSummariesResponse__Output>
      ListCredentialsRequest: MessageTypeDefinition<_svc_v1_ListCredentialsRequest, _svc_v1_ListCredentialsRequest__Output>
      ListCredentialsResponse: MessageTypeDefinition<_svc_v1_ListCredentialsResponse, _svc_v1_ListCredentialsResponse__Output>
      ListStarsRequest: MessageTypeDefinition<_svc_v1_ListStarsRequest, _svc_v1_ListStarsRequest__Output>
      ListStarsResponse: MessageTypeDefinition<_svc_v1_ListStarsResponse, _svc_v1_ListStarsResponse__Output>
      ListStreamSummariesRequest: MessageTypeDefinition<_svc_v1_ListStreamSummariesRequest, _svc_v1_ListStreamSummariesRequest__Output>
      ListStreamSummariesResponse: MessageTypeDefinition<_svc_v1_ListStreamSummariesResponse, _svc_v1_ListStreamSummariesResponse__Output>
      PeekAuditQueueRequest: MessageTypeDefinition<_svc_v1_PeekAuditQueueRequest, _svc_v1_PeekAuditQueueRequest__Output>
      PeekAuditQueueResponse: MessageTypeDefinition<_svc_v1_PeekAuditQueueResponse, _svc_v1_PeekAuditQueueResponse__Output>
      Position: MessageTypeDefinition<_svc_v1_Position, _svc_v1_Position__Output>
      ProducerPolicy: EnumTypeDefinition
      ReadStreamRecordsRequest: MessageTypeDefinition<_svc_v1_ReadStreamRecordsRequest, _svc_v1_ReadStreamRecordsRequest__Output>
      ReadStreamRecordsResponse: MessageTypeDefinition<_svc_v1_ReadStreamRecordsResponse, _svc_v1_ReadStreamRecordsResponse__Output>
      RevokeCredentialRequest: MessageTypeDefinition<_svc_v1_RevokeCredentialRequest, _svc_v1_RevokeCredentialRequest__Output>
      RevokeCredentialResponse: MessageTypeDefinition<_svc_v1_RevokeCredentialResponse, _svc_v1_RevokeCredentialResponse__Output>
      SequencedRecord: MessageTypeDefinition<_svc_v1_SequencedRecord, _svc_v1_SequencedRecord__Output>
      StarInfo: MessageTypeDefinition<_svc_v1_StarInfo, _svc_v1_StarInfo__Output>
      StarState: EnumTypeDefinition
      StorageClass: EnumTypeDefinition
      StreamConfig: MessageTypeDefinition<_svc_v1_StreamConfig, _svc_v1_StreamConfig__Output>
      StreamInfo: MessageTypeDefinition<_svc_v1_StreamInfo, _svc_v1_StreamInfo__Output>
      StreamSummary: MessageTypeDefinition<_svc_v1_StreamSummary, _svc_v1_StreamSummary__Output>
      TimestampingMode: EnumTypeDefinition
    }
  }
}

