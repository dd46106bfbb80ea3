// Original file: proto/svc/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

/**
 * One auditor work queue.
 */
export interface AuditQueue {
  /**
   * Queue name.
   */
  'name'?: (string);
  /**
   * Items waiting (bounded count).
   */
  'depth'?: (number | string | Long);
  /**
   * True when depth stopped at its cap.
   */
  'depth_capped'?: (boolean);
}

/**
 * One auditor work queue.
 */
export interface AuditQueue__Output {
  /**
   * Queue name.
   */
  'name': (string);
  /**
   * Items waiting (bounded count).
   */
  'depth': (number);
  /**
   * True when depth stopped at its cap.
   */
  'depth_capped': (boolean);
}
