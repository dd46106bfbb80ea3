// Original file: proto/svc/v1/data.proto


/**
 * Empty: the stream is gone for every caller.
 */
export interface DeleteStreamResponse {
}

/**
 * Empty: the stream is gone for every caller.
 */
export interface DeleteStreamResponse__Output {
}
