// Original file: proto/svc/v1/data.proto


export interface ListStreamsRequest {
  /**
   * Bucket to list.
   */
  'bucket'?: (string);
  /**
   * Opaque cursor: the previous page's `next`; '' starts at the beginning.
   */
  'start_after'?: (string);
  /**
   * Page size; 0 or above 1000 means 1000.
   */
  'limit'?: (number);
}

export interface ListStreamsRequest__Output {
  /**
   * Bucket to list.
   */
  'bucket': (string);
  /**
   * Opaque cursor: the previous page's `next`; '' starts at the beginning.
   */
  'start_after': (string);
  /**
   * Page size; 0 or above 1000 means 1000.
   */
  'limit': (number);
}
