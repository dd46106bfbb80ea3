// Original file: proto/svc/v1/data.proto

import type { StreamInfo as _svc_v1_StreamInfo, StreamInfo__Output as _svc_v1_StreamInfo__Output } from '../../svc/v1/StreamInfo.ts';

export interface CreateStreamResponse {
  /**
   * The stream as created (or as it already stood, for a converging retry).
   */
  'info'?: (_svc_v1_StreamInfo | null);
}

export interface CreateStreamResponse__Output {
  /**
   * The stream as created (or as it already stood, for a converging retry).
   */
  'info': (_svc_v1_StreamInfo__Output | null);
}
