// Original file: proto/svc/v1/admin.proto

import type { AuditQueue as _svc_v1_AuditQueue, AuditQueue__Output as _svc_v1_AuditQueue__Output } from '../../svc/v1/AuditQueue.ts';

export interface ListAuditQueuesResponse {
  /**
   * Every queue.
   */
  'queues'?: (_svc_v1_AuditQueue)[];
}

export interface ListAuditQueuesResponse__Output {
  /**
   * Every queue.
   */
  'queues': (_svc_v1_AuditQueue__Output)[];
}
