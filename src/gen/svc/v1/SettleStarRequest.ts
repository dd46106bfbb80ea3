// Original file: proto/svc/v1/data.proto


export interface SettleStarRequest {
  /**
   * The star asked to settle; '' means the receiving star.
   */
  'star_id'?: (string);
}

export interface SettleStarRequest__Output {
  /**
   * The star asked to settle; '' means the receiving star.
   */
  'star_id': (string);
}
