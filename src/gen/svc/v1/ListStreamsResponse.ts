// Original file: proto/svc/v1/data.proto

import type { StreamInfo as _svc_v1_StreamInfo, StreamInfo__Output as _svc_v1_StreamInfo__Output } from '../../svc/v1/StreamInfo.ts';

export interface ListStreamsResponse {
  /**
   * Descriptors in stable order (no fencing tokens).
   */
  'streams'?: (_svc_v1_StreamInfo)[];
  /**
   * Cursor for the next page; '' when the listing is complete.
   */
  'next'?: (string);
}

export interface ListStreamsResponse__Output {
  /**
   * Descriptors in stable order (no fencing tokens).
   */
  'streams': (_svc_v1_StreamInfo__Output)[];
  /**
   * Cursor for the next page; '' when the listing is complete.
   */
  'next': (string);
}
