// Original file: proto/svc/v1/data.proto

import type { AppendRecord as _svc_v1_AppendRecord, AppendRecord__Output as _svc_v1_AppendRecord__Output } from '../../svc/v1/AppendRecord.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * One batch of a session.
 */
export interface AppendSessionBatch {
  /**
   * Records, not empty (same caps as AppendRequest).
   */
  'records'?: (_svc_v1_AppendRecord)[];
  /**
   * As AppendRequest.match_seq_num.
   */
  'match_seq_num'?: (number | string | Long);
  '_match_seq_num'?: "match_seq_num";
}

/**
 * One batch of a session.
 */
export interface AppendSessionBatch__Output {
  /**
   * Records, not empty (same caps as AppendRequest).
   */
  'records': (_svc_v1_AppendRecord__Output)[];
  /**
   * As AppendRequest.match_seq_num.
   */
  'match_seq_num'?: (number);
  '_match_seq_num'?: "match_seq_num";
}
