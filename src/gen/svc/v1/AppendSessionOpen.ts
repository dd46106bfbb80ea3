// Original file: proto/svc/v1/data.proto


/**
 * Opens a producer session on one stream.
 */
export interface AppendSessionOpen {
  /**
   * Bucket name.
   */
  'bucket'?: (string);
  /**
   * Stream key.
   */
  'key'?: (Buffer | Uint8Array | string);
  /**
   * Fencing token presented with every batch of the session; required on a fenced stream.
   */
  'fencing_token'?: (string);
  '_fencing_token'?: "fencing_token";
}

/**
 * Opens a producer session on one stream.
 */
export interface AppendSessionOpen__Output {
  /**
   * Bucket name.
   */
  'bucket': (string);
  /**
   * Stream key.
   */
  'key': (Buffer);
  /**
   * Fencing token presented with every batch of the session; required on a fenced stream.
   */
  'fencing_token'?: (string);
  '_fencing_token'?: "fencing_token";
}
