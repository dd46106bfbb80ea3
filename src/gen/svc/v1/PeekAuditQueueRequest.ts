// Original file: proto/svc/v1/admin.proto


export interface PeekAuditQueueRequest {
  /**
   * Queue name (from ListAuditQueues).
   */
  'name'?: (string);
  /**
   * Most items to return; 0 or above 500 means 500.
   */
  'limit'?: (number);
}

export interface PeekAuditQueueRequest__Output {
  /**
   * Queue name (from ListAuditQueues).
   */
  'name': (string);
  /**
   * Most items to return; 0 or above 500 means 500.
   */
  'limit': (number);
}
