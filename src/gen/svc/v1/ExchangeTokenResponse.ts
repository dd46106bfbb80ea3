// Original file: proto/svc/v1/data.proto

import type { Long } from '@grpc/proto-loader';

export interface ExchangeTokenResponse {
  /**
   * The issued JWT.
   */
  'token'?: (string);
  /**
   * Its expiry, milliseconds since the Unix epoch.
   */
  'expires_at_unix_ms'?: (number | string | Long);
}

export interface ExchangeTokenResponse__Output {
  /**
   * The issued JWT.
   */
  'token': (string);
  /**
   * Its expiry, milliseconds since the Unix epoch.
   */
  'expires_at_unix_ms': (number);
}
