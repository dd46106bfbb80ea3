// Original file: proto/svc/v1/data.proto


/**
 * Where a raw-vended object lives.
 */
export interface RawObjectLocation {
  /**
   * Object-store bucket.
   */
  'storage_bucket'?: (string);
  /**
   * Object key inside it.
   */
  'object_key'?: (string);
}

/**
 * Where a raw-vended object lives.
 */
export interface RawObjectLocation__Output {
  /**
   * Object-store bucket.
   */
  'storage_bucket': (string);
  /**
   * Object key inside it.
   */
  'object_key': (string);
}
