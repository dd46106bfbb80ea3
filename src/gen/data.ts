import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { AppendRecord as _svc_v1_AppendRecord, AppendRecord__Output as _svc_v1_AppendRecord__Output } from './svc/v1/AppendRecord.ts';
import type { AppendRequest as _svc_v1_AppendRequest, AppendRequest__Output as _svc_v1_AppendRequest__Output } from './svc/v1/AppendRequest.ts';
import type { AppendResponse as _svc_v1_AppendResponse, AppendResponse__Output as _svc_v1_AppendResponse__Output } from './svc/v1/AppendResponse.ts';
import type { AppendSessionBatch as _svc_v1_AppendSessionBatch, AppendSessionBatch__Output as _svc_v1_AppendSessionBatch__Output } from './svc/v1/AppendSessionBatch.ts';
import type { AppendSessionOpen as _svc_v1_AppendSessionOpen, AppendSessionOpen__Output as _svc_v1_AppendSessionOpen__Output } from './svc/v1/AppendSessionOpen.ts';
import type { AppendSessionRequest as _svc_v1_AppendSessionRequest, AppendSessionRequest__Output as _svc_v1_AppendSessionRequest__Output } from './svc/v1/AppendSessionRequest.ts';
import type { AppendSessionResponse as _svc_v1_AppendSessionResponse, AppendSessionResponse__Output as _svc_v1_AppendSessionResponse__Output } from './svc/v1/AppendSessionResponse.ts';
import type { BucketConfig as _svc_v1_BucketConfig, BucketConfig__Output as _svc_v1_BucketConfig__Output } from './svc/v1/BucketConfig.ts';
import type { BucketInfo as _svc_v1_BucketInfo, BucketInfo__Output as _svc_v1_BucketInfo__Output } from './svc/v1/BucketInfo.ts';
import type { CheckTailRequest as _svc_v1_CheckTailRequest, CheckTailRequest__Output as _svc_v1_CheckTailRequest__Output } from './svc/v1/CheckTailRequest.ts';
import type { CheckTailResponse as _svc_v1_CheckTailResponse, CheckTailResponse__Output as _svc_v1_CheckTailResponse__Output } from './svc/v1/CheckTailResponse.ts';
import type { CreateBucketRequest as _svc_v1_CreateBucketRequest, CreateBucketRequest__Output as _svc_v1_CreateBucketRequest__Output } from './svc/v1/CreateBucketRequest.ts';
import type { CreateBucketResponse as _svc_v1_CreateBucketResponse, CreateBucketResponse__Output as _svc_v1_CreateBucketResponse__Output } from './svc/v1/CreateBucketResponse.ts';
import type { CreateStreamRequest as _svc_v1_CreateStreamRequest, CreateStreamRequest__Output as _svc_v1_CreateStreamRequest__Output } from './svc/v1/CreateStreamRequest.ts';
import type { CreateStreamResponse as _svc_v1_CreateStreamResponse, CreateStreamResponse__Output as _svc_v1_CreateStreamResponse__Output } from './svc/v1/CreateStreamResponse.ts';
import type { DataServiceClient as _svc_v1_DataServiceClient, DataServiceDefinition as _svc_v1_DataServiceDefinition } from './svc/v1/DataService.ts';
import type { DeleteBucketRequest as _svc_v1_DeleteBucketRequest, DeleteBucketRequest__Output as _svc_v1_DeleteBucketRequest__Output } from './svc/v1/DeleteBucketRequest.ts';
import type { DeleteBucketResponse as _svc_v1_DeleteBucketResponse, DeleteBucketResponse__Output as _svc_v1_DeleteBucketResponse__Output } from './svc/v1/DeleteBucketResponse.ts';
import type { DeleteStreamRequest as _svc_v1_DeleteStreamRequest, DeleteStreamRequest__Output as _svc_v1_DeleteStreamRequest__Output } from './svc/v1/DeleteStreamRequest.ts';
import type { DeleteStreamResponse as _svc_v1_DeleteStreamResponse, DeleteStreamResponse__Output as _svc_v1_DeleteStreamResponse__Output } from './svc/v1/DeleteStreamResponse.ts';
import type { ExchangeTokenRequest as _svc_v1_ExchangeTokenRequest, ExchangeTokenRequest__Output as _svc_v1_ExchangeTokenRequest__Output } from './svc/v1/ExchangeTokenRequest.ts';
import type { ExchangeTokenResponse as _svc_v1_ExchangeTokenResponse, ExchangeTokenResponse__Output as _svc_v1_ExchangeTokenResponse__Output } from './svc/v1/ExchangeTokenResponse.ts';
import type { FenceRequest as _svc_v1_FenceRequest, FenceRequest__Output as _svc_v1_FenceRequest__Output } from './svc/v1/FenceRequest.ts';
import type { FenceResponse as _svc_v1_FenceResponse, FenceResponse__Output as _svc_v1_FenceResponse__Output } from './svc/v1/FenceResponse.ts';
import type { GetBucketRequest as _svc_v1_GetBucketRequest, GetBucketRequest__Output as _svc_v1_GetBucketRequest__Output } from './svc/v1/GetBucketRequest.ts';
import type { GetBucketResponse as _svc_v1_GetBucketResponse, GetBucketResponse__Output as _svc_v1_GetBucketResponse__Output } from './svc/v1/GetBucketResponse.ts';
import type { GetStreamRequest as _svc_v1_GetStreamRequest, GetStreamRequest__Output as _svc_v1_GetStreamRequest__Output } from './svc/v1/GetStreamRequest.ts';
import type { GetStreamResponse as _svc_v1_GetStreamResponse, GetStreamResponse__Output as _svc_v1_GetStreamResponse__Output } from './svc/v1/GetStreamResponse.ts';
import type { Header as _svc_v1_Header, Header__Output as _svc_v1_Header__Output } from './svc/v1/Header.ts';
import type { ListBucketsRequest as _svc_v1_ListBucketsRequest, ListBucketsRequest__Output as _svc_v1_ListBucketsRequest__Output } from './svc/v1/ListBucketsRequest.ts';
import type { ListBucketsResponse as _svc_v1_ListBucketsResponse, ListBucketsResponse__Output as _svc_v1_ListBucketsResponse__Output } from './svc/v1/ListBucketsResponse.ts';
import type { ListStreamsRequest as _svc_v1_ListStreamsRequest, ListStreamsRequest__Output as _svc_v1_ListStreamsRequest__Output } from './svc/v1/ListStreamsRequest.ts';
import type { ListStreamsResponse as _svc_v1_ListStreamsResponse, ListStreamsResponse__Output as _svc_v1_ListStreamsResponse__Output } from './svc/v1/ListStreamsResponse.ts';
import type { Position as _svc_v1_Position, Position__Output as _svc_v1_Position__Output } from './svc/v1/Position.ts';
import type { RawObjectLocation as _svc_v1_RawObjectLocation, RawObjectLocation__Output as _svc_v1_RawObjectLocation__Output } from './svc/v1/RawObjectLocation.ts';
import type { ReadPlanEntry as _svc_v1_ReadPlanEntry, ReadPlanEntry__Output as _svc_v1_ReadPlanEntry__Output } from './svc/v1/ReadPlanEntry.ts';
import type { ReadPlanRequest as _svc_v1_ReadPlanRequest, ReadPlanRequest__Output as _svc_v1_ReadPlanRequest__Output } from './svc/v1/ReadPlanRequest.ts';
import type { ReadPlanResponse as _svc_v1_ReadPlanResponse, ReadPlanResponse__Output as _svc_v1_ReadPlanResponse__Output } from './svc/v1/ReadPlanResponse.ts';
import type { ReadRequest as _svc_v1_ReadRequest, ReadRequest__Output as _svc_v1_ReadRequest__Output } from './svc/v1/ReadRequest.ts';
import type { ReadResponse as _svc_v1_ReadResponse, ReadResponse__Output as _svc_v1_ReadResponse__Output } from './svc/v1/ReadResponse.ts';
import type { ReconfigureStreamRequest as _svc_v1_ReconfigureStreamRequest, ReconfigureStreamRequest__Output as _svc_v1_ReconfigureStreamRequest__Output } from './svc/v1/ReconfigureStreamRequest.ts';
import type { ReconfigureStreamResponse as _svc_v1_ReconfigureStreamResponse, ReconfigureStreamResponse__Output as _svc_v1_ReconfigureStreamResponse__Output } from './svc/v1/ReconfigureStreamResponse.ts';
import type { SequencedRecord as _svc_v1_SequencedRecord, SequencedRecord__Output as _svc_v1_SequencedRecord__Output } from './svc/v1/SequencedRecord.ts';
import type { SettleStarRequest as _svc_v1_SettleStarRequest, SettleStarRequest__Output as _svc_v1_SettleStarRequest__Output } from './svc/v1/SettleStarRequest.ts';
import type { SettleStarResponse as _svc_v1_SettleStarResponse, SettleStarResponse__Output as _svc_v1_SettleStarResponse__Output } from './svc/v1/SettleStarResponse.ts';
import type { StreamConfig as _svc_v1_StreamConfig, StreamConfig__Output as _svc_v1_StreamConfig__Output } from './svc/v1/StreamConfig.ts';
import type { StreamInfo as _svc_v1_StreamInfo, StreamInfo__Output as _svc_v1_StreamInfo__Output } from './svc/v1/StreamInfo.ts';
import type { SubscribeRequest as _svc_v1_SubscribeRequest, SubscribeRequest__Output as _svc_v1_SubscribeRequest__Output } from './svc/v1/SubscribeRequest.ts';
import type { SubscribeResponse as _svc_v1_SubscribeResponse, SubscribeResponse__Output as _svc_v1_SubscribeResponse__Output } from './svc/v1/SubscribeResponse.ts';
import type { TrimRequest as _svc_v1_TrimRequest, TrimRequest__Output as _svc_v1_TrimRequest__Output } from './svc/v1/TrimRequest.ts';
import type { TrimResponse as _svc_v1_TrimResponse, TrimResponse__Output as _svc_v1_TrimResponse__Output } from './svc/v1/TrimResponse.ts';
import type { UpdateBucketRequest as _svc_v1_UpdateBucketRequest, UpdateBucketRequest__Output as _svc_v1_UpdateBucketRequest__Output } from './svc/v1/UpdateBucketRequest.ts';
import type { UpdateBucketResponse as _svc_v1_UpdateBucketResponse, UpdateBucketResponse__Output as _svc_v1_UpdateBucketResponse__Output } from './svc/v1/UpdateBucketResponse.ts';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  svc: {
    v1: {
      AppendRecord: MessageTypeDefinition<_svc_v1_AppendRecord, _svc_v1_AppendRecord__Output>
      AppendRequest: MessageTypeDefinition<_svc_v1_AppendRequest, _svc_v1_AppendRequest__Output>
      AppendResponse: MessageTypeDefinition<_svc_v1_AppendResponse, _svc_v1_AppendResponse__Output>
      AppendSessionBatch: MessageTypeDefinition<_svc_v1_AppendSessionBatch, _svc_v1_AppendSessionBatch__Output>
      AppendSessionOpen: MessageTypeDefinition<_svc_v1_AppendSessionOpen, _svc_v1_AppendSessionOpen__Output>
      AppendSessionRequest: MessageTypeDefinition<_svc_v1_AppendSessionRequest, _svc_v1_AppendSessionRequest__Output>
      AppendSessionResponse: MessageTypeDefinition<_svc_v1_AppendSessionResponse, _svc_v1_AppendSessionResponse__Output>
      BucketConfig: MessageTypeDefinition<_svc_v1_BucketConfig, _svc_v1_BucketConfig__Output>
      BucketInfo: MessageTypeDefinition<_svc_v1_BucketInfo, _svc_v1_BucketInfo__Output>
      CheckTailRequest: MessageTypeDefinition<_svc_v1_CheckTailRequest, _svc_v1_CheckTailRequest__Output>
      CheckTailResponse: MessageTypeDefinition<_svc_v1_CheckTailResponse, _svc_v1_CheckTailResponse__Output>
      CreateBucketRequest: MessageTypeDefinition<_svc_v1_CreateBucketRequest, _svc_v1_CreateBucketRequest__Output>
      CreateBucketResponse: MessageTypeDefinition<_svc_v1_CreateBucketResponse, _svc_v1_CreateBucketResponse__Output>
      CreateStreamRequest: MessageTypeDefinition<_svc_v1_CreateStreamRequest, _svc_v1_CreateStreamRequest__Output>
      CreateStreamResponse: MessageTypeDefinition<_svc_v1_CreateStreamResponse, _svc_v1_CreateStreamResponse__Output>
      DataService: SubtypeConstructor<typeof grpc.Client, _svc_v1_DataServiceClient> & { service: _svc_v1_DataServiceDefinition }
      DeleteBucketRequest: MessageTypeDefinition<_svc_v1_DeleteBucketRequest, _svc_v1_DeleteBucketRequest__Output>
      DeleteBucketResponse: MessageTypeDefinition<_svc_v1_DeleteBucketResponse, _svc_v1_DeleteBucketResponse__Output>
      DeleteStreamRequest: MessageTypeDefinition<_svc_v1_DeleteStreamRequest, _svc_v1_DeleteStreamRequest__Output>
      DeleteStreamResponse: MessageTypeDefinition<_svc_v1_DeleteStreamResponse, _svc_v1_DeleteStreamResponse__Output>
      ExchangeTokenRequest: MessageTypeDefinition<_svc_v1_ExchangeTokenRequest, _svc_v1_ExchangeTokenRequest__Output>
      ExchangeTokenResponse: MessageTypeDefinition<_svc_v1_ExchangeTokenResponse, _svc_v1_ExchangeTokenResponse__Output>
      FenceRequest: MessageTypeDefinition<_svc_v1_FenceRequest, _svc_v1_FenceRequest__Output>
      FenceResponse: MessageTypeDefinition<_svc_v1_FenceResponse, _svc_v1_FenceResponse__Output>
      GetBucketRequest: MessageTypeDefinition<_svc_v1_GetBucketRequest, _svc_v1_GetBucketRequest__Output>
      GetBucketResponse: MessageTypeDefinition<_svc_v1_GetBucketResponse, _svc_v1_GetBucketResponse__Output>
      GetStreamRequest: MessageTypeDefinition<_svc_v1_GetStreamRequest, _svc_v1_GetStreamRequest__Output>
      GetStreamResponse: MessageTypeDefinition<_svc_v1_GetStreamResponse, _svc_v1_GetStreamResponse__Output>
      Header: MessageTypeDefinition<_svc_v1_Header, _svc_v1_Header__Output>
      ListBucketsRequest: MessageTypeDefinition<_svc_v1_ListBucketsRequest, _svc_v1_ListBucketsRequest__Output>
      ListBucketsResponse: MessageTypeDefinition<_svc_v1_ListBucketsResponse, _svc_v1_ListBucketsResponse__Output>
      ListStreamsRequest: MessageTypeDefinition<_svc_v1_ListStreamsRequest, _svc_v1_ListStreamsRequest__Output>
      ListStreamsResponse: MessageTypeDefinition<_svc_v1_ListStreamsResponse, _svc_v1_ListStreamsResponse__Output>
      Position: MessageTypeDefinition<_svc_v1_Position, _svc_v1_Position__Output>
      ProducerPolicy: EnumTypeDefinition
      RawObjectLocation: MessageTypeDefinition<_svc_v1_RawObjectLocation, _svc_v1_RawObjectLocation__Output>
      ReadPlanEntry: MessageTypeDefinition<_svc_v1_ReadPlanEntry, _svc_v1_ReadPlanEntry__Output>
      ReadPlanRequest: MessageTypeDefinition<_svc_v1_ReadPlanRequest, _svc_v1_ReadPlanRequest__Output>
      ReadPlanResponse: MessageTypeDefinition<_svc_v1_ReadPlanResponse, _svc_v1_ReadPlanResponse__Output>
      ReadRequest: MessageTypeDefinition<_svc_v1_ReadRequest, _svc_v1_ReadRequest__Output>
      ReadResponse: MessageTypeDefinition<_svc_v1_ReadResponse, _svc_v1_ReadResponse__Output>
      ReconfigureStreamRequest: MessageTypeDefinition<_svc_v1_ReconfigureStreamRequest, _svc_v1_ReconfigureStreamRequest__Output>
      ReconfigureStreamResponse: MessageTypeDefinition<_svc_v1_ReconfigureStreamResponse, _svc_v1_ReconfigureStreamResponse__Output>
      SequencedRecord: MessageTypeDefinition<_svc_v1_SequencedRecord, _svc_v1_SequencedRecord__Output>
      SettleStarRequest: MessageTypeDefinition<_svc_v1_SettleStarRequest, _svc_v1_SettleStarRequest__Output>
      SettleStarResponse: MessageTypeDefinition<_svc_v1_SettleStarResponse, _svc_v1_SettleStarResponse__Output>
      StorageClass: EnumTypeDefinition
      StreamConfig: MessageTypeDefinition<_svc_v1_StreamConfig, _svc_v1_StreamConfig__Output>
      StreamInfo: MessageTypeDefinition<_svc_v1_StreamInfo, _svc_v1_StreamInfo__Output>
      SubscribeRequest: MessageTypeDefinition<_svc_v1_SubscribeRequest, _svc_v1_SubscribeRequest__Output>
      SubscribeResponse: MessageTypeDefinition<_svc_v1_SubscribeResponse, _svc_v1_SubscribeResponse__Output>
      TimestampingMode: EnumTypeDefinition
      TrimRequest: MessageTypeDefinition<_svc_v1_TrimRequest, _svc_v1_TrimRequest__Output>
      TrimResponse: MessageTypeDefinition<_svc_v1_TrimResponse, _svc_v1_TrimResponse__Output>
      UpdateBucketRequest: MessageTypeDefinition<_svc_v1_UpdateBucketRequest, _svc_v1_UpdateBucketRequest__Output>
      UpdateBucketResponse: MessageTypeDefinition<_svc_v1_UpdateBucketResponse, _svc_v1_UpdateBucketResponse__Output>
      VendingMode: EnumTypeDefinition
    }
  }
}

