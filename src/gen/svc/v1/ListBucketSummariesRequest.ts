// Original file: proto/svc/v1/admin.proto


export interface ListBucketSummariesRequest {
  /**
   * Cursor (a bucket name); '' starts at the beginning.
   */
  'start_after'?: (string);
  /**
   * Page size; 0 or above 1000 means 1000.
   */
  'limit'?: (number);
}

export interface ListBucketSummariesRequest__Output {
  /**
   * Cursor (a bucket name); '' starts at the beginning.
   */
  'start_after': (string);
  /**
   * Page size; 0 or above 1000 means 1000.
   */
  'limit': (number);
}
