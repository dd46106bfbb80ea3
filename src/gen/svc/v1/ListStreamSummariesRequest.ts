// Original file: proto/svc/v1/admin.proto


export interface ListStreamSummariesRequest {
  /**
   * Bucket to list.
   */
  'bucket'?: (string);
  /**
   * Cursor from the previous page; '' starts at the beginning.
   */
  'start_after'?: (string);
  /**
   * Page size; 0 or above 1000 means 1000.
   */
  'limit'?: (number);
}

export interface ListStreamSummariesRequest__Output {
  /**
   * Bucket to list.
   */
  'bucket': (string);
  /**
   * Cursor from the previous page; '' starts at the beginning.
   */
  'start_after': (string);
  /**
   * Page size; 0 or above 1000 means 1000.
   */
  'limit': (number);
}
