// Original file: proto/svc/v1/admin.proto

import type { BucketSummary as _svc_v1_BucketSummary, BucketSummary__Output as _svc_v1_BucketSummary__Output } from '../../svc/v1/BucketSummary.ts';

export interface ListBucketSummariesResponse {
  /**
   * Rows in name order.
   */
  'buckets'?: (_svc_v1_BucketSummary)[];
  /**
   * Cursor for the next page; '' when complete.
   */
  'next'?: (string);
}

export interface ListBucketSummariesResponse__Output {
  /**
   * Rows in name order.
   */
  'buckets': (_svc_v1_BucketSummary__Output)[];
  /**
   * Cursor for the next page; '' when complete.
   */
  'next': (string);
}
