// Original file: proto/svc/v1/data.proto

import type { Long } from '@grpc/proto-loader';

export interface TrimRequest {
  /**
   * Bucket name.
   */
  'bucket'?: (string);
  /**
   * Stream key.
   */
  'key'?: (Buffer | Uint8Array | string);
  /**
   * Trim every record with a smaller sequence number.
   */
  'seq_num'?: (number | string | Long);
  /**
   * Trim every record stamped before this time (milliseconds).
   */
  'timestamp_ms'?: (number | string | Long);
  /**
   * Where to trim to (exactly one): records below it become unreadable.
   */
  'point'?: "seq_num"|"timestamp_ms";
}

export interface TrimRequest__Output {
  /**
   * Bucket name.
   */
  'bucket': (string);
  /**
   * Stream key.
   */
  'key': (Buffer);
  /**
   * Trim every record with a smaller sequence number.
   */
  'seq_num'?: (number);
  /**
   * Trim every record stamped before this time (milliseconds).
   */
  'timestamp_ms'?: (number);
  /**
   * Where to trim to (exactly one): records below it become unreadable.
   */
  'point'?: "seq_num"|"timestamp_ms";
}
