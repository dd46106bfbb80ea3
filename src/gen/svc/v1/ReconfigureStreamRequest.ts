// Original file: proto/svc/v1/data.proto

import type { StreamConfig as _svc_v1_StreamConfig, StreamConfig__Output as _svc_v1_StreamConfig__Output } from '../../svc/v1/StreamConfig.ts';

export interface ReconfigureStreamRequest {
  /**
   * Bucket name.
   */
  'bucket'?: (string);
  /**
   * Stream key.
   */
  'key'?: (Buffer | Uint8Array | string);
  /**
   * Only the fields to change are set.
   */
  'config'?: (_svc_v1_StreamConfig | null);
}

export interface ReconfigureStreamRequest__Output {
  /**
   * Bucket name.
   */
  'bucket': (string);
  /**
   * Stream key.
   */
  'key': (Buffer);
  /**
   * Only the fields to change are set.
   */
  'config': (_svc_v1_StreamConfig__Output | null);
}
