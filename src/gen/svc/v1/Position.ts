// Original file: proto/svc/v1/types.proto

import type { Long } from '@grpc/proto-loader';

/**
 * A point in a stream. At a boundary (`end`, `tail`) seq_num is one past the last committed record.
 */
export interface Position {
  /**
   * Sequence number. For a tail: the number the next appended record receives.
   */
  'seq_num'?: (number | string | Long);
  /**
   * Time of that record in milliseconds since the Unix epoch; 0 when no record's time is known
   * (a virgin or fully trimmed stream).
   */
  'timestamp_ms'?: (number | string | Long);
}

/**
 * A point in a stream. At a boundary (`end`, `tail`) seq_num is one past the last committed record.
 */
export interface Position__Output {
  /**
   * Sequence number. For a tail: the number the next appended record receives.
   */
  'seq_num': (number);
  /**
   * Time of that record in milliseconds since the Unix epoch; 0 when no record's time is known
   * (a virgin or fully trimmed stream).
   */
  'timestamp_ms': (number);
}
