// Original file: proto/svc/v1/data.proto

import type { ReadPlanEntry as _svc_v1_ReadPlanEntry, ReadPlanEntry__Output as _svc_v1_ReadPlanEntry__Output } from '../../svc/v1/ReadPlanEntry.ts';
import type { Long } from '@grpc/proto-loader';

export interface ReadPlanResponse {
  /**
   * Vended objects covering the settled prefix of the range, tiling in order.
   */
  'entries'?: (_svc_v1_ReadPlanEntry)[];
  /**
   * First sequence number not vended: continue there with Read/Subscribe, or re-plan. Present even
   * with no entries; absent only for a timestamp start above the settled ceiling.
   */
  'vended_until'?: (number | string | Long);
  /**
   * True when the plan was cut at the entry cap.
   */
  'more'?: (boolean);
  /**
   * The plan (and its presigned URLs) is valid until this instant, milliseconds since the epoch.
   */
  'expires_at_unix_ms'?: (number | string | Long);
  '_vended_until'?: "vended_until";
}

export interface ReadPlanResponse__Output {
  /**
   * Vended objects covering the settled prefix of the range, tiling in order.
   */
  'entries': (_svc_v1_ReadPlanEntry__Output)[];
  /**
   * First sequence number not vended: continue there with Read/Subscribe, or re-plan. Present even
   * with no entries; absent only for a timestamp start above the settled ceiling.
   */
  'vended_until'?: (number);
  /**
   * True when the plan was cut at the entry cap.
   */
  'more': (boolean);
  /**
   * The plan (and its presigned URLs) is valid until this instant, milliseconds since the epoch.
   */
  'expires_at_unix_ms': (number);
  '_vended_until'?: "vended_until";
}
