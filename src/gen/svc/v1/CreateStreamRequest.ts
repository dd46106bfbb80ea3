// Original file: proto/svc/v1/data.proto

import type { StreamConfig as _svc_v1_StreamConfig, StreamConfig__Output as _svc_v1_StreamConfig__Output } from '../../svc/v1/StreamConfig.ts';

export interface CreateStreamRequest {
  /**
   * Bucket name.
   */
  'bucket'?: (string);
  /**
   * Stream key.
   */
  'key'?: (Buffer | Uint8Array | string);
  /**
   * Config fields to set; unset fields copy the bucket's defaults.
   */
  'config'?: (_svc_v1_StreamConfig | null);
  /**
   * Idempotency token: a retry with the same token converges on the existing stream.
   */
  'creation_token'?: (string);
}

export interface CreateStreamRequest__Output {
  /**
   * Bucket name.
   */
  'bucket': (string);
  /**
   * Stream key.
   */
  'key': (Buffer);
  /**
   * Config fields to set; unset fields copy the bucket's defaults.
   */
  'config': (_svc_v1_StreamConfig__Output | null);
  /**
   * Idempotency token: a retry with the same token converges on the existing stream.
   */
  'creation_token': (string);
}
