// Original file: proto/svc/v1/data.proto


/**
 * Empty: the watermark has advanced.
 */
export interface TrimResponse {
}

/**
 * Empty: the watermark has advanced.
 */
export interface TrimResponse__Output {
}
