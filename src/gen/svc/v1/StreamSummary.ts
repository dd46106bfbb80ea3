// Original file: proto/svc/v1/admin.proto

import type { StorageClass as _svc_v1_StorageClass, StorageClass__Output as _svc_v1_StorageClass__Output } from '../../svc/v1/StorageClass.ts';
import type { Position as _svc_v1_Position, Position__Output as _svc_v1_Position__Output } from '../../svc/v1/Position.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * A stream row of the dashboard.
 */
export interface StreamSummary {
  /**
   * Bucket name.
   */
  'bucket'?: (string);
  /**
   * Stream key.
   */
  'key'?: (Buffer | Uint8Array | string);
  /**
   * Stream identity.
   */
  'stream_id'?: (string);
  /**
   * Storage class.
   */
  'storage_class'?: (_svc_v1_StorageClass);
  /**
   * Committed tail.
   */
  'tail'?: (_svc_v1_Position | null);
  /**
   * The star leading the stream; '' when vacant (idle).
   */
  'leader_star_id'?: (string);
  /**
   * Creation time, milliseconds since the epoch.
   */
  'created_at_unix_ms'?: (number | string | Long);
}

/**
 * A stream row of the dashboard.
 */
export interface StreamSummary__Output {
  /**
   * Bucket name.
   */
  'bucket': (string);
  /**
   * Stream key.
   */
  'key': (Buffer);
  /**
   * Stream identity.
   */
  'stream_id': (string);
  /**
   * Storage class.
   */
  'storage_class': (_svc_v1_StorageClass__Output);
  /**
   * Committed tail.
   */
  'tail': (_svc_v1_Position__Output | null);
  /**
   * The star leading the stream; '' when vacant (idle).
   */
  'leader_star_id': (string);
  /**
   * Creation time, milliseconds since the epoch.
   */
  'created_at_unix_ms': (number);
}
