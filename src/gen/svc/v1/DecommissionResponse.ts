// Original file: proto/svc/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface DecommissionResponse {
  /**
   * Leases moved away before leaving.
   */
  'leases_moved'?: (number | string | Long);
}

export interface DecommissionResponse__Output {
  /**
   * Leases moved away before leaving.
   */
  'leases_moved': (number);
}
