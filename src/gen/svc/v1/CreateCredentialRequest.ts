// Original file: proto/svc/v1/admin.proto


export interface CreateCredentialRequest {
  /**
   * Key id to register; '' lets the service generate `ck_` + 16 hex digits.
   */
  'key_id'?: (string);
  /**
   * Grants in the scope grammar, space-separated.
   */
  'scope'?: (string);
}

export interface CreateCredentialRequest__Output {
  /**
   * Key id to register; '' lets the service generate `ck_` + 16 hex digits.
   */
  'key_id': (string);
  /**
   * Grants in the scope grammar, space-separated.
   */
  'scope': (string);
}
