// Original file: proto/svc/v1/data.proto


export interface GetBucketRequest {
  /**
   * Bucket name.
   */
  'bucket'?: (string);
}

export interface GetBucketRequest__Output {
  /**
   * Bucket name.
   */
  'bucket': (string);
}
