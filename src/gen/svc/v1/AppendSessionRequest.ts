// Original file: proto/svc/v1/data.proto

import type { AppendSessionOpen as _svc_v1_AppendSessionOpen, AppendSessionOpen__Output as _svc_v1_AppendSessionOpen__Output } from '../../svc/v1/AppendSessionOpen.ts';
import type { AppendSessionBatch as _svc_v1_AppendSessionBatch, AppendSessionBatch__Output as _svc_v1_AppendSessionBatch__Output } from '../../svc/v1/AppendSessionBatch.ts';

/**
 * One message of a producer session.
 */
export interface AppendSessionRequest {
  /**
   * Must be the first message, and only the first.
   */
  'open'?: (_svc_v1_AppendSessionOpen | null);
  /**
   * Every later message: one batch.
   */
  'batch'?: (_svc_v1_AppendSessionBatch | null);
  'request'?: "open"|"batch";
}

/**
 * One message of a producer session.
 */
export interface AppendSessionRequest__Output {
  /**
   * Must be the first message, and only the first.
   */
  'open'?: (_svc_v1_AppendSessionOpen__Output | null);
  /**
   * Every later message: one batch.
   */
  'batch'?: (_svc_v1_AppendSessionBatch__Output | null);
  'request'?: "open"|"batch";
}
