// Original file: proto/svc/v1/admin.proto

import type { AuditItem as _svc_v1_AuditItem, AuditItem__Output as _svc_v1_AuditItem__Output } from '../../svc/v1/AuditItem.ts';

export interface PeekAuditQueueResponse {
  /**
   * Items at the head of the queue, oldest first.
   */
  'items'?: (_svc_v1_AuditItem)[];
}

export interface PeekAuditQueueResponse__Output {
  /**
   * Items at the head of the queue, oldest first.
   */
  'items': (_svc_v1_AuditItem__Output)[];
}
