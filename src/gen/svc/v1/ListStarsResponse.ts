// Original file: proto/svc/v1/admin.proto

import type { StarInfo as _svc_v1_StarInfo, StarInfo__Output as _svc_v1_StarInfo__Output } from '../../svc/v1/StarInfo.ts';

export interface ListStarsResponse {
  /**
   * Every member, in star_id order.
   */
  'stars'?: (_svc_v1_StarInfo)[];
}

export interface ListStarsResponse__Output {
  /**
   * Every member, in star_id order.
   */
  'stars': (_svc_v1_StarInfo__Output)[];
}
