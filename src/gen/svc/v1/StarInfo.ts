// Original file: proto/svc/v1/admin.proto

import type { StarState as _svc_v1_StarState, StarState__Output as _svc_v1_StarState__Output } from '../../svc/v1/StarState.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * One member of the cluster.
 */
export interface StarInfo {
  /**
   * Star identity.
   */
  'star_id'?: (string);
  /**
   * Address peers and clients reach its gRPC port at.
   */
  'address'?: (string);
  /**
   * Lifecycle state.
   */
  'state'?: (_svc_v1_StarState);
  /**
   * When it joined (or started), milliseconds since the epoch.
   */
  'started_at_unix_ms'?: (number | string | Long);
}

/**
 * One member of the cluster.
 */
export interface StarInfo__Output {
  /**
   * Star identity.
   */
  'star_id': (string);
  /**
   * Address peers and clients reach its gRPC port at.
   */
  'address': (string);
  /**
   * Lifecycle state.
   */
  'state': (_svc_v1_StarState__Output);
  /**
   * When it joined (or started), milliseconds since the epoch.
   */
  'started_at_unix_ms': (number);
}
