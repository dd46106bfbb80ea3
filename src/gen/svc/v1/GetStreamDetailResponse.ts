// Original file: proto/svc/v1/admin.proto

import type { StreamInfo as _svc_v1_StreamInfo, StreamInfo__Output as _svc_v1_StreamInfo__Output } from '../../svc/v1/StreamInfo.ts';
import type { Position as _svc_v1_Position, Position__Output as _svc_v1_Position__Output } from '../../svc/v1/Position.ts';
import type { Long } from '@grpc/proto-loader';

export interface GetStreamDetailResponse {
  /**
   * The descriptor.
   */
  'info'?: (_svc_v1_StreamInfo | null);
  /**
   * Installed fencing token; '' when unfenced.
   */
  'fencing_token'?: (string);
  /**
   * Committed tail.
   */
  'tail'?: (_svc_v1_Position | null);
  /**
   * The leading star; '' when vacant.
   */
  'leader_star_id'?: (string);
  /**
   * The epoch of the stream's lease (a cluster): it rises every time the lease changes hands;
   * 0 on a star alone, or when the stream has never been leased.
   */
  'lease_epoch'?: (number | string | Long);
}

export interface GetStreamDetailResponse__Output {
  /**
   * The descriptor.
   */
  'info': (_svc_v1_StreamInfo__Output | null);
  /**
   * Installed fencing token; '' when unfenced.
   */
  'fencing_token': (string);
  /**
   * Committed tail.
   */
  'tail': (_svc_v1_Position__Output | null);
  /**
   * The leading star; '' when vacant.
   */
  'leader_star_id': (string);
  /**
   * The epoch of the stream's lease (a cluster): it rises every time the lease changes hands;
   * 0 on a star alone, or when the stream has never been leased.
   */
  'lease_epoch': (number);
}
