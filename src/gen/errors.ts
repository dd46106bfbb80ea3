import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { AppendRecord as _svc_v1_AppendRecord, AppendRecord__Output as _svc_v1_AppendRecord__Output } from './svc/v1/AppendRecord.ts';
import type { BucketConfig as _svc_v1_BucketConfig, BucketConfig__Output as _svc_v1_BucketConfig__Output } from './svc/v1/BucketConfig.ts';
import type { BucketInfo as _svc_v1_BucketInfo, BucketInfo__Output as _svc_v1_BucketInfo__Output } from './svc/v1/BucketInfo.ts';
import type { FenceDetail as _svc_v1_FenceDetail, FenceDetail__Output as _svc_v1_FenceDetail__Output } from './svc/v1/FenceDetail.ts';
import type { Header as _svc_v1_Header, Header__Output as _svc_v1_Header__Output } from './svc/v1/Header.ts';
import type { NotOwnerDetail as _svc_v1_NotOwnerDetail, NotOwnerDetail__Output as _svc_v1_NotOwnerDetail__Output } from './svc/v1/NotOwnerDetail.ts';
import type { Position as _svc_v1_Position, Position__Output as _svc_v1_Position__Output } from './svc/v1/Position.ts';
import type { SequenceDetail as _svc_v1_SequenceDetail, SequenceDetail__Output as _svc_v1_SequenceDetail__Output } from './svc/v1/SequenceDetail.ts';
import type { SequencedRecord as _svc_v1_SequencedRecord, SequencedRecord__Output as _svc_v1_SequencedRecord__Output } from './svc/v1/SequencedRecord.ts';
import type { StreamConfig as _svc_v1_StreamConfig, StreamConfig__Output as _svc_v1_StreamConfig__Output } from './svc/v1/StreamConfig.ts';
import type { StreamInfo as _svc_v1_StreamInfo, StreamInfo__Output as _svc_v1_StreamInfo__Output } from './svc/v1/StreamInfo.ts';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  svc: {
    v1: {
      AppendRecord: MessageTypeDefinition<_svc_v1_AppendRecord, _svc_v1_AppendRecord__Output>
      BucketConfig: MessageTypeDefinition<_svc_v1_BucketConfig, _svc_v1_BucketConfig__Output>
      BucketInfo: MessageTypeDefinition<_svc_v1_BucketInfo, _svc_v1_BucketInfo__Output>
      FenceDetail: MessageTypeDefinition<_svc_v1_FenceDetail, _svc_v1_FenceDetail__Output>
      Header: MessageTypeDefinition<_svc_v1_Header, _svc_v1_Header__Output>
      NotOwnerDetail: MessageTypeDefinition<_svc_v1_NotOwnerDetail, _svc_v1_NotOwnerDetail__Output>
      Position: MessageTypeDefinition<_svc_v1_Position, _svc_v1_Position__Output>
      ProducerPolicy: EnumTypeDefinition
      SequenceDetail: MessageTypeDefinition<_svc_v1_SequenceDetail, _svc_v1_SequenceDetail__Output>
      SequencedRecord: MessageTypeDefinition<_svc_v1_SequencedRecord, _svc_v1_SequencedRecord__Output>
      StorageClass: EnumTypeDefinition
      StreamConfig: MessageTypeDefinition<_svc_v1_StreamConfig, _svc_v1_StreamConfig__Output>
      StreamInfo: MessageTypeDefinition<_svc_v1_StreamInfo, _svc_v1_StreamInfo__Output>
      TimestampingMode: EnumTypeDefinition
    }
  }
}

