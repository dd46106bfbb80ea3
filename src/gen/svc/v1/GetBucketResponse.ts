// Original file: proto/svc/v1/data.proto

import type { BucketInfo as _svc_v1_BucketInfo, BucketInfo__Output as _svc_v1_BucketInfo__Output } from '../../svc/v1/BucketInfo.ts';

export interface GetBucketResponse {
  /**
   * The descriptor.
   */
  'info'?: (_svc_v1_BucketInfo | null);
}

export interface GetBucketResponse__Output {
  /**
   * The descriptor.
   */
  'info': (_svc_v1_BucketInfo__Output | null);
}
