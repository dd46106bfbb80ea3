// Original file: proto/svc/v1/data.proto


export interface DeleteBucketRequest {
  /**
   * Bucket name.
   */
  'bucket'?: (string);
}

export interface DeleteBucketRequest__Output {
  /**
   * Bucket name.
   */
  'bucket': (string);
}
