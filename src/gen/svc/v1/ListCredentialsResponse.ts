// Original file: proto/svc/v1/admin.proto

import type { Credential as _svc_v1_Credential, Credential__Output as _svc_v1_Credential__Output } from '../../svc/v1/Credential.ts';

export interface ListCredentialsResponse {
  /**
   * Rows in key-id order.
   */
  'credentials'?: (_svc_v1_Credential)[];
  /**
   * Cursor for the next page; '' when complete.
   */
  'next'?: (string);
}

export interface ListCredentialsResponse__Output {
  /**
   * Rows in key-id order.
   */
  'credentials': (_svc_v1_Credential__Output)[];
  /**
   * Cursor for the next page; '' when complete.
   */
  'next': (string);
}
