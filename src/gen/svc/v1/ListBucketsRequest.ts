// Original file: proto/svc/v1/data.proto


export interface ListBucketsRequest {
  /**
   * Cursor: the previous page's `next` (a bucket name); '' starts at the beginning.
   */
  'start_after'?: (string);
  /**
   * Page size; 0 or above 1000 means 1000.
   */
  'limit'?: (number);
}

export interface ListBucketsRequest__Output {
  /**
   * Cursor: the previous page's `next` (a bucket name); '' starts at the beginning.
   */
  'start_after': (string);
  /**
   * Page size; 0 or above 1000 means 1000.
   */
  'limit': (number);
}
