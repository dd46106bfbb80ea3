// Original file: proto/svc/v1/admin.proto


export interface ListBucketSummariesRequest {
  /**
   * Cursor (a bucket name); '' starts at the beginning.
   */
  'start_after'?: (string);
  /**
   * Page size; 0 or above 100 means 100 (each row counts its bucket's streams, so pages are smaller).
   */
  'limit'?: (number);
}

export interface ListBucketSummariesRequest__Output {
  /**
   * Cursor (a bucket name); '' starts at the beginning.
   */
  'start_after': (string);
  /**
   * Page size; 0 or above 100 means 100 (each row counts its bucket's streams, so pages are smaller).
   */
  'limit': (number);
}
