// Original file: proto/svc/v1/data.proto

import type { StreamInfo as _svc_v1_StreamInfo, StreamInfo__Output as _svc_v1_StreamInfo__Output } from '../../svc/v1/StreamInfo.ts';

export interface ReconfigureStreamResponse {
  /**
   * The stream as it now stands.
   */
  'info'?: (_svc_v1_StreamInfo | null);
}

export interface ReconfigureStreamResponse__Output {
  /**
   * The stream as it now stands.
   */
  'info': (_svc_v1_StreamInfo__Output | null);
}
