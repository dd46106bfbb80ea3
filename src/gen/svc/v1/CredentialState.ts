// Original file: proto/svc/v1/admin.proto

/**
 * Lifecycle of a credential.
 */
export const CredentialState = {
  /**
   * Unknown.
   */
  CREDENTIAL_STATE_UNSPECIFIED: 'CREDENTIAL_STATE_UNSPECIFIED',
  /**
   * Usable for ExchangeToken.
   */
  CREDENTIAL_STATE_ACTIVE: 'CREDENTIAL_STATE_ACTIVE',
  /**
   * Refused by ExchangeToken (PERMISSION_DENIED).
   */
  CREDENTIAL_STATE_REVOKED: 'CREDENTIAL_STATE_REVOKED',
} as const;

/**
 * Lifecycle of a credential.
 */
export type CredentialState =
  /**
   * Unknown.
   */
  | 'CREDENTIAL_STATE_UNSPECIFIED'
  | 0
  /**
   * Usable for ExchangeToken.
   */
  | 'CREDENTIAL_STATE_ACTIVE'
  | 1
  /**
   * Refused by ExchangeToken (PERMISSION_DENIED).
   */
  | 'CREDENTIAL_STATE_REVOKED'
  | 2

/**
 * Lifecycle of a credential.
 */
export type CredentialState__Output = typeof CredentialState[keyof typeof CredentialState]
