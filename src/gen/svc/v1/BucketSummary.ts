// Original file: proto/svc/v1/admin.proto

import type { BucketInfo as _svc_v1_BucketInfo, BucketInfo__Output as _svc_v1_BucketInfo__Output } from '../../svc/v1/BucketInfo.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * A bucket row of the dashboard.
 */
export interface BucketSummary {
  /**
   * The descriptor.
   */
  'info'?: (_svc_v1_BucketInfo | null);
  /**
   * Streams in the bucket (bounded scan).
   */
  'stream_count'?: (number | string | Long);
  /**
   * True when stream_count stopped at its cap.
   */
  'stream_count_capped'?: (boolean);
}

/**
 * A bucket row of the dashboard.
 */
export interface BucketSummary__Output {
  /**
   * The descriptor.
   */
  'info': (_svc_v1_BucketInfo__Output | null);
  /**
   * Streams in the bucket (bounded scan).
   */
  'stream_count': (number);
  /**
   * True when stream_count stopped at its cap.
   */
  'stream_count_capped': (boolean);
}
