// Original file: proto/svc/v1/types.proto


/**
 * One record header. Names and values are arbitrary bytes.
 */
export interface Header {
  /**
   * Header name; must not be empty.
   */
  'name'?: (Buffer | Uint8Array | string);
  /**
   * Header value; empty is allowed.
   */
  'value'?: (Buffer | Uint8Array | string);
}

/**
 * One record header. Names and values are arbitrary bytes.
 */
export interface Header__Output {
  /**
   * Header name; must not be empty.
   */
  'name': (Buffer);
  /**
   * Header value; empty is allowed.
   */
  'value': (Buffer);
}
