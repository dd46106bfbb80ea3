// Original file: proto/svc/v1/data.proto

import type { BucketInfo as _svc_v1_BucketInfo, BucketInfo__Output as _svc_v1_BucketInfo__Output } from '../../svc/v1/BucketInfo.ts';

export interface ListBucketsResponse {
  /**
   * Descriptors in name order.
   */
  'buckets'?: (_svc_v1_BucketInfo)[];
  /**
   * Cursor for the next page; '' when the listing is complete.
   */
  'next'?: (string);
}

export interface ListBucketsResponse__Output {
  /**
   * Descriptors in name order.
   */
  'buckets': (_svc_v1_BucketInfo__Output)[];
  /**
   * Cursor for the next page; '' when the listing is complete.
   */
  'next': (string);
}
