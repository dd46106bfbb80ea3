// Original file: proto/svc/v1/data.proto

import type { Position as _svc_v1_Position, Position__Output as _svc_v1_Position__Output } from '../../svc/v1/Position.ts';

export interface FenceResponse {
  /**
   * Committed tail as of the fence.
   */
  'tail'?: (_svc_v1_Position | null);
}

export interface FenceResponse__Output {
  /**
   * Committed tail as of the fence.
   */
  'tail': (_svc_v1_Position__Output | null);
}
