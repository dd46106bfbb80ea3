// Original file: proto/svc/v1/admin.proto

import type { StreamSummary as _svc_v1_StreamSummary, StreamSummary__Output as _svc_v1_StreamSummary__Output } from '../../svc/v1/StreamSummary.ts';

export interface ListStreamSummariesResponse {
  /**
   * Rows in stable order.
   */
  'streams'?: (_svc_v1_StreamSummary)[];
  /**
   * Cursor for the next page; '' when complete.
   */
  'next'?: (string);
}

export interface ListStreamSummariesResponse__Output {
  /**
   * Rows in stable order.
   */
  'streams': (_svc_v1_StreamSummary__Output)[];
  /**
   * Cursor for the next page; '' when complete.
   */
  'next': (string);
}
