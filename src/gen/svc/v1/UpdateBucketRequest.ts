// Original file: proto/svc/v1/data.proto

import type { BucketConfig as _svc_v1_BucketConfig, BucketConfig__Output as _svc_v1_BucketConfig__Output } from '../../svc/v1/BucketConfig.ts';

export interface UpdateBucketRequest {
  /**
   * Bucket name.
   */
  'bucket'?: (string);
  /**
   * The replacement configuration.
   */
  'config'?: (_svc_v1_BucketConfig | null);
}

export interface UpdateBucketRequest__Output {
  /**
   * Bucket name.
   */
  'bucket': (string);
  /**
   * The replacement configuration.
   */
  'config': (_svc_v1_BucketConfig__Output | null);
}
