// Original file: proto/svc/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface HealthResponse {
  /**
   * True when the star serves requests.
   */
  'serving'?: (boolean);
  /**
   * The answering star.
   */
  'star_id'?: (string);
  /**
   * Milliseconds since the star started.
   */
  'uptime_ms'?: (number | string | Long);
}

export interface HealthResponse__Output {
  /**
   * True when the star serves requests.
   */
  'serving': (boolean);
  /**
   * The answering star.
   */
  'star_id': (string);
  /**
   * Milliseconds since the star started.
   */
  'uptime_ms': (number);
}
