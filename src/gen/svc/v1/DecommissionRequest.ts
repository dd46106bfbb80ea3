// Original file: proto/svc/v1/admin.proto


export interface DecommissionRequest {
  /**
   * The star to decommission; '' means the receiving star.
   */
  'star_id'?: (string);
}

export interface DecommissionRequest__Output {
  /**
   * The star to decommission; '' means the receiving star.
   */
  'star_id': (string);
}
