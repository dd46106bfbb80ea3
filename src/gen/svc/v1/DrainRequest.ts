// Original file: proto/svc/v1/admin.proto


export interface DrainRequest {
  /**
   * The star to drain; '' means the receiving star.
   */
  'star_id'?: (string);
}

export interface DrainRequest__Output {
  /**
   * The star to drain; '' means the receiving star.
   */
  'star_id': (string);
}
