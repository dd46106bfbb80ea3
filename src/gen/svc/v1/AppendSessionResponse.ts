// Original file: proto/svc/v1/data.proto

import type { Position as _svc_v1_Position, Position__Output as _svc_v1_Position__Output } from '../../svc/v1/Position.ts';

/**
 * The ack of one session batch; the n-th response answers the n-th batch.
 */
export interface AppendSessionResponse {
  /**
   * First appended record (inclusive).
   */
  'start'?: (_svc_v1_Position | null);
  /**
   * One past the last appended record (exclusive).
   */
  'end'?: (_svc_v1_Position | null);
  /**
   * Committed tail as of the ack.
   */
  'tail'?: (_svc_v1_Position | null);
}

/**
 * The ack of one session batch; the n-th response answers the n-th batch.
 */
export interface AppendSessionResponse__Output {
  /**
   * First appended record (inclusive).
   */
  'start': (_svc_v1_Position__Output | null);
  /**
   * One past the last appended record (exclusive).
   */
  'end': (_svc_v1_Position__Output | null);
  /**
   * Committed tail as of the ack.
   */
  'tail': (_svc_v1_Position__Output | null);
}
