// Original file: proto/svc/v1/errors.proto

import type { Position as _svc_v1_Position, Position__Output as _svc_v1_Position__Output } from '../../svc/v1/Position.ts';

/**
 * Sent with OUT_OF_RANGE when an append's match_seq_num misses (nothing was appended), and when a
 * read's start lies past the tail.
 */
export interface SequenceDetail {
  /**
   * The committed tail; after a miss, tail.seq_num is exactly the match_seq_num to try next.
   */
  'tail'?: (_svc_v1_Position | null);
}

/**
 * Sent with OUT_OF_RANGE when an append's match_seq_num misses (nothing was appended), and when a
 * read's start lies past the tail.
 */
export interface SequenceDetail__Output {
  /**
   * The committed tail; after a miss, tail.seq_num is exactly the match_seq_num to try next.
   */
  'tail': (_svc_v1_Position__Output | null);
}
