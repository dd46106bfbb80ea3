// Original file: proto/svc/v1/types.proto

import type { BucketConfig as _svc_v1_BucketConfig, BucketConfig__Output as _svc_v1_BucketConfig__Output } from '../../svc/v1/BucketConfig.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * A bucket's descriptor.
 */
export interface BucketInfo {
  /**
   * Bucket name.
   */
  'name'?: (string);
  /**
   * Full configuration, every field set.
   */
  'config'?: (_svc_v1_BucketConfig | null);
  /**
   * Creation time, milliseconds since the Unix epoch.
   */
  'created_at_unix_ms'?: (number | string | Long);
  /**
   * Creation token given at creation ('' when none).
   */
  'creation_token'?: (string);
}

/**
 * A bucket's descriptor.
 */
export interface BucketInfo__Output {
  /**
   * Bucket name.
   */
  'name': (string);
  /**
   * Full configuration, every field set.
   */
  'config': (_svc_v1_BucketConfig__Output | null);
  /**
   * Creation time, milliseconds since the Unix epoch.
   */
  'created_at_unix_ms': (number);
  /**
   * Creation token given at creation ('' when none).
   */
  'creation_token': (string);
}
