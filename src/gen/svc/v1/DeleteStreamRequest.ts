// Original file: proto/svc/v1/data.proto


export interface DeleteStreamRequest {
  /**
   * Bucket name.
   */
  'bucket'?: (string);
  /**
   * Stream key.
   */
  'key'?: (Buffer | Uint8Array | string);
}

export interface DeleteStreamRequest__Output {
  /**
   * Bucket name.
   */
  'bucket': (string);
  /**
   * Stream key.
   */
  'key': (Buffer);
}
