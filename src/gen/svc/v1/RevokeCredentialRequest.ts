// Original file: proto/svc/v1/admin.proto


export interface RevokeCredentialRequest {
  /**
   * Key id to revoke.
   */
  'key_id'?: (string);
}

export interface RevokeCredentialRequest__Output {
  /**
   * Key id to revoke.
   */
  'key_id': (string);
}
