// Original file: proto/svc/v1/data.proto


export interface FenceRequest {
  /**
   * Bucket name.
   */
  'bucket'?: (string);
  /**
   * Stream key.
   */
  'key'?: (Buffer | Uint8Array | string);
  /**
   * The token to install; '' clears the fence.
   */
  'fencing_token'?: (string);
}

export interface FenceRequest__Output {
  /**
   * Bucket name.
   */
  'bucket': (string);
  /**
   * Stream key.
   */
  'key': (Buffer);
  /**
   * The token to install; '' clears the fence.
   */
  'fencing_token': (string);
}
