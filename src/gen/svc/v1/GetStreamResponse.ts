// Original file: proto/svc/v1/data.proto

import type { StreamInfo as _svc_v1_StreamInfo, StreamInfo__Output as _svc_v1_StreamInfo__Output } from '../../svc/v1/StreamInfo.ts';

export interface GetStreamResponse {
  /**
   * The descriptor.
   */
  'info'?: (_svc_v1_StreamInfo | null);
  /**
   * The installed fencing token; '' when unfenced.
   */
  'fencing_token'?: (string);
}

export interface GetStreamResponse__Output {
  /**
   * The descriptor.
   */
  'info': (_svc_v1_StreamInfo__Output | null);
  /**
   * The installed fencing token; '' when unfenced.
   */
  'fencing_token': (string);
}
