// Original file: proto/svc/v1/data.proto


/**
 * Empty: the bucket is gone.
 */
export interface DeleteBucketResponse {
}

/**
 * Empty: the bucket is gone.
 */
export interface DeleteBucketResponse__Output {
}
