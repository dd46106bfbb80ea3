// Original file: proto/svc/v1/data.proto

import type { BucketConfig as _svc_v1_BucketConfig, BucketConfig__Output as _svc_v1_BucketConfig__Output } from '../../svc/v1/BucketConfig.ts';

export interface CreateBucketRequest {
  /**
   * Bucket name.
   */
  'bucket'?: (string);
  /**
   * Configuration; unset fields take the service defaults.
   */
  'config'?: (_svc_v1_BucketConfig | null);
  /**
   * Creation token, recorded on the bucket.
   */
  'creation_token'?: (string);
}

export interface CreateBucketRequest__Output {
  /**
   * Bucket name.
   */
  'bucket': (string);
  /**
   * Configuration; unset fields take the service defaults.
   */
  'config': (_svc_v1_BucketConfig__Output | null);
  /**
   * Creation token, recorded on the bucket.
   */
  'creation_token': (string);
}
