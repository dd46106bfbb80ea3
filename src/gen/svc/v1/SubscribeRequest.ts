// Original file: proto/svc/v1/data.proto

import type { Long } from '@grpc/proto-loader';

export interface SubscribeRequest {
  /**
   * Bucket name.
   */
  'bucket'?: (string);
  /**
   * Stream key.
   */
  'key'?: (Buffer | Uint8Array | string);
  /**
   * At this sequence number.
   */
  'seq_num'?: (number | string | Long);
  /**
   * At the first record stamped at or after this time (milliseconds), resolved once; the
   * cursor is a sequence number thereafter.
   */
  'timestamp_ms'?: (number | string | Long);
  /**
   * This many records before the tail (0 = only new records).
   */
  'tail_offset'?: (number | string | Long);
  /**
   * Where to start (exactly one; none is INVALID_ARGUMENT). To resume, pass the last response's
   * next_seq_num as seq_num.
   */
  'start'?: "seq_num"|"timestamp_ms"|"tail_offset";
}

export interface SubscribeRequest__Output {
  /**
   * Bucket name.
   */
  'bucket': (string);
  /**
   * Stream key.
   */
  'key': (Buffer);
  /**
   * At this sequence number.
   */
  'seq_num'?: (number);
  /**
   * At the first record stamped at or after this time (milliseconds), resolved once; the
   * cursor is a sequence number thereafter.
   */
  'timestamp_ms'?: (number);
  /**
   * This many records before the tail (0 = only new records).
   */
  'tail_offset'?: (number);
  /**
   * Where to start (exactly one; none is INVALID_ARGUMENT). To resume, pass the last response's
   * next_seq_num as seq_num.
   */
  'start'?: "seq_num"|"timestamp_ms"|"tail_offset";
}
