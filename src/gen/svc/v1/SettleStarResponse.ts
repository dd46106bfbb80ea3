// Original file: proto/svc/v1/data.proto


export interface SettleStarResponse {
  /**
   * The star that answered.
   */
  'star_id'?: (string);
}

export interface SettleStarResponse__Output {
  /**
   * The star that answered.
   */
  'star_id': (string);
}
