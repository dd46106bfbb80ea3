// Original file: proto/svc/v1/data.proto

import type { AppendRecord as _svc_v1_AppendRecord, AppendRecord__Output as _svc_v1_AppendRecord__Output } from '../../svc/v1/AppendRecord.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * One durable batch. Exactly the HTTP append envelope.
 */
export interface AppendRequest {
  /**
   * Bucket name.
   */
  'bucket'?: (string);
  /**
   * Stream key.
   */
  'key'?: (Buffer | Uint8Array | string);
  /**
   * Records, not empty: at most 65,536 records and 100 MiB of content.
   */
  'records'?: (_svc_v1_AppendRecord)[];
  /**
   * When set, the batch is appended only if its first record receives exactly this number;
   * otherwise OUT_OF_RANGE with a SequenceDetail and nothing appended.
   */
  'match_seq_num'?: (number | string | Long);
  /**
   * Presented on a fenced stream; a mismatch is FAILED_PRECONDITION with a FenceDetail.
   */
  'fencing_token'?: (string);
  '_match_seq_num'?: "match_seq_num";
  '_fencing_token'?: "fencing_token";
}

/**
 * One durable batch. Exactly the HTTP append envelope.
 */
export interface AppendRequest__Output {
  /**
   * Bucket name.
   */
  'bucket': (string);
  /**
   * Stream key.
   */
  'key': (Buffer);
  /**
   * Records, not empty: at most 65,536 records and 100 MiB of content.
   */
  'records': (_svc_v1_AppendRecord__Output)[];
  /**
   * When set, the batch is appended only if its first record receives exactly this number;
   * otherwise OUT_OF_RANGE with a SequenceDetail and nothing appended.
   */
  'match_seq_num'?: (number);
  /**
   * Presented on a fenced stream; a mismatch is FAILED_PRECONDITION with a FenceDetail.
   */
  'fencing_token'?: (string);
  '_match_seq_num'?: "match_seq_num";
  '_fencing_token'?: "fencing_token";
}
