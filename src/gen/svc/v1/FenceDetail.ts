// Original file: proto/svc/v1/errors.proto


/**
 * Sent with FAILED_PRECONDITION when the presented fencing token does not match.
 */
export interface FenceDetail {
  /**
   * The installed fencing token ('' when the stream is unfenced).
   */
  'fencing_token'?: (string);
}

/**
 * Sent with FAILED_PRECONDITION when the presented fencing token does not match.
 */
export interface FenceDetail__Output {
  /**
   * The installed fencing token ('' when the stream is unfenced).
   */
  'fencing_token': (string);
}
