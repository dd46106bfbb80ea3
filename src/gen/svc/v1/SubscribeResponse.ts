// Original file: proto/svc/v1/data.proto

import type { SequencedRecord as _svc_v1_SequencedRecord, SequencedRecord__Output as _svc_v1_SequencedRecord__Output } from '../../svc/v1/SequencedRecord.ts';
import type { Position as _svc_v1_Position, Position__Output as _svc_v1_Position__Output } from '../../svc/v1/Position.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * One committed batch, never empty.
 */
export interface SubscribeResponse {
  /**
   * Records in order, contiguous with the previous response.
   */
  'records'?: (_svc_v1_SequencedRecord)[];
  /**
   * Position after this batch's last record.
   */
  'tail'?: (_svc_v1_Position | null);
  /**
   * The resume cursor: the sequence number the next batch starts at (the SSE frame id).
   */
  'next_seq_num'?: (number | string | Long);
}

/**
 * One committed batch, never empty.
 */
export interface SubscribeResponse__Output {
  /**
   * Records in order, contiguous with the previous response.
   */
  'records': (_svc_v1_SequencedRecord__Output)[];
  /**
   * Position after this batch's last record.
   */
  'tail': (_svc_v1_Position__Output | null);
  /**
   * The resume cursor: the sequence number the next batch starts at (the SSE frame id).
   */
  'next_seq_num': (number);
}
