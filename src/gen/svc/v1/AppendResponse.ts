// Original file: proto/svc/v1/data.proto

import type { Position as _svc_v1_Position, Position__Output as _svc_v1_Position__Output } from '../../svc/v1/Position.ts';

/**
 * The outcome of one committed batch.
 */
export interface AppendResponse {
  /**
   * First appended record (inclusive).
   */
  'start'?: (_svc_v1_Position | null);
  /**
   * One past the last appended record (exclusive).
   */
  'end'?: (_svc_v1_Position | null);
  /**
   * Committed tail; at least `end`, greater when other producers landed behind.
   */
  'tail'?: (_svc_v1_Position | null);
}

/**
 * The outcome of one committed batch.
 */
export interface AppendResponse__Output {
  /**
   * First appended record (inclusive).
   */
  'start': (_svc_v1_Position__Output | null);
  /**
   * One past the last appended record (exclusive).
   */
  'end': (_svc_v1_Position__Output | null);
  /**
   * Committed tail; at least `end`, greater when other producers landed behind.
   */
  'tail': (_svc_v1_Position__Output | null);
}
