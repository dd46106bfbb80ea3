// Original file: proto/svc/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface DrainResponse {
  /**
   * Leases moved away.
   */
  'leases_moved'?: (number | string | Long);
}

export interface DrainResponse__Output {
  /**
   * Leases moved away.
   */
  'leases_moved': (number);
}
