// Original file: proto/svc/v1/admin.proto


export interface ListCredentialsRequest {
  /**
   * Cursor (a key id); '' starts at the beginning.
   */
  'start_after'?: (string);
  /**
   * Page size; 0 or above 1000 means 1000.
   */
  'limit'?: (number);
}

export interface ListCredentialsRequest__Output {
  /**
   * Cursor (a key id); '' starts at the beginning.
   */
  'start_after': (string);
  /**
   * Page size; 0 or above 1000 means 1000.
   */
  'limit': (number);
}
