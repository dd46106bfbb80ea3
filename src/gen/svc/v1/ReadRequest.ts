// Original file: proto/svc/v1/data.proto

import type { Long } from '@grpc/proto-loader';

export interface ReadRequest {
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
   * At the first record stamped at or after this time (milliseconds), resolved once.
   */
  'timestamp_ms'?: (number | string | Long);
  /**
   * This many records before the tail, clamped at 0.
   */
  'tail_offset'?: (number | string | Long);
  /**
   * Most records to return; 0 or above 8192 means 8192.
   */
  'limit'?: (number);
  /**
   * Payload cap in bytes; above 8 MiB means 8 MiB, and 0 means 3 MiB (a page a client keeping the
   * 4 MiB default receive limit can take). At least one record always returns.
   */
  'max_bytes'?: (number | string | Long);
  /**
   * Exclusive upper time bound in milliseconds: records stamped at or after it are not returned.
   */
  'until_ms'?: (number | string | Long);
  /**
   * Pull a start below the trim watermark up to the earliest retained record, and a start past
   * the tail to the tail. Without it a start below the watermark is OUT_OF_RANGE, and a start past
   * the tail is OUT_OF_RANGE with a SequenceDetail holding the tail.
   */
  'clamp'?: (boolean);
  /**
   * Where to start (exactly one; none is INVALID_ARGUMENT).
   */
  'start'?: "seq_num"|"timestamp_ms"|"tail_offset";
  '_until_ms'?: "until_ms";
}

export interface ReadRequest__Output {
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
   * At the first record stamped at or after this time (milliseconds), resolved once.
   */
  'timestamp_ms'?: (number);
  /**
   * This many records before the tail, clamped at 0.
   */
  'tail_offset'?: (number);
  /**
   * Most records to return; 0 or above 8192 means 8192.
   */
  'limit': (number);
  /**
   * Payload cap in bytes; above 8 MiB means 8 MiB, and 0 means 3 MiB (a page a client keeping the
   * 4 MiB default receive limit can take). At least one record always returns.
   */
  'max_bytes': (number);
  /**
   * Exclusive upper time bound in milliseconds: records stamped at or after it are not returned.
   */
  'until_ms'?: (number);
  /**
   * Pull a start below the trim watermark up to the earliest retained record, and a start past
   * the tail to the tail. Without it a start below the watermark is OUT_OF_RANGE, and a start past
   * the tail is OUT_OF_RANGE with a SequenceDetail holding the tail.
   */
  'clamp': (boolean);
  /**
   * Where to start (exactly one; none is INVALID_ARGUMENT).
   */
  'start'?: "seq_num"|"timestamp_ms"|"tail_offset";
  '_until_ms'?: "until_ms";
}
