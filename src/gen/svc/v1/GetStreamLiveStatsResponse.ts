// Original file: proto/svc/v1/admin.proto

import type { Position as _svc_v1_Position, Position__Output as _svc_v1_Position__Output } from '../../svc/v1/Position.ts';
import type { Long } from '@grpc/proto-loader';

export interface GetStreamLiveStatsResponse {
  /**
   * Committed tail at sampling time.
   */
  'tail'?: (_svc_v1_Position | null);
  /**
   * The leading star; '' when vacant.
   */
  'leader_star_id'?: (string);
  /**
   * When the numbers were sampled, milliseconds since the epoch.
   */
  'sampled_at_unix_ms'?: (number | string | Long);
}

export interface GetStreamLiveStatsResponse__Output {
  /**
   * Committed tail at sampling time.
   */
  'tail': (_svc_v1_Position__Output | null);
  /**
   * The leading star; '' when vacant.
   */
  'leader_star_id': (string);
  /**
   * When the numbers were sampled, milliseconds since the epoch.
   */
  'sampled_at_unix_ms': (number);
}
