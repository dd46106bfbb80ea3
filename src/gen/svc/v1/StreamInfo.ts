// Original file: proto/svc/v1/types.proto

import type { StreamConfig as _svc_v1_StreamConfig, StreamConfig__Output as _svc_v1_StreamConfig__Output } from '../../svc/v1/StreamConfig.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * A stream's descriptor. Listings carry it; GetStream adds the fencing token beside it.
 */
export interface StreamInfo {
  /**
   * Identity of this incarnation of the address (uuid). A stream re-created at a deleted
   * address gets a new id.
   */
  'stream_id'?: (string);
  /**
   * Bucket the stream lives in.
   */
  'bucket'?: (string);
  /**
   * Stream key (raw bytes).
   */
  'key'?: (Buffer | Uint8Array | string);
  /**
   * Full configuration, every field set.
   */
  'config'?: (_svc_v1_StreamConfig | null);
  /**
   * Creation time, milliseconds since the Unix epoch.
   */
  'created_at_unix_ms'?: (number | string | Long);
}

/**
 * A stream's descriptor. Listings carry it; GetStream adds the fencing token beside it.
 */
export interface StreamInfo__Output {
  /**
   * Identity of this incarnation of the address (uuid). A stream re-created at a deleted
   * address gets a new id.
   */
  'stream_id': (string);
  /**
   * Bucket the stream lives in.
   */
  'bucket': (string);
  /**
   * Stream key (raw bytes).
   */
  'key': (Buffer);
  /**
   * Full configuration, every field set.
   */
  'config': (_svc_v1_StreamConfig__Output | null);
  /**
   * Creation time, milliseconds since the Unix epoch.
   */
  'created_at_unix_ms': (number);
}
