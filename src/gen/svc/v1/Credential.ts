// Original file: proto/svc/v1/admin.proto

import type { CredentialState as _svc_v1_CredentialState, CredentialState__Output as _svc_v1_CredentialState__Output } from '../../svc/v1/CredentialState.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * An api-key registry row, without its secret or hash.
 */
export interface Credential {
  /**
   * Key id.
   */
  'key_id'?: (string);
  /**
   * Grants in the scope grammar, space-separated.
   */
  'scope'?: (string);
  /**
   * State.
   */
  'state'?: (_svc_v1_CredentialState);
  /**
   * Creation time, milliseconds since the epoch.
   */
  'created_at_unix_ms'?: (number | string | Long);
}

/**
 * An api-key registry row, without its secret or hash.
 */
export interface Credential__Output {
  /**
   * Key id.
   */
  'key_id': (string);
  /**
   * Grants in the scope grammar, space-separated.
   */
  'scope': (string);
  /**
   * State.
   */
  'state': (_svc_v1_CredentialState__Output);
  /**
   * Creation time, milliseconds since the epoch.
   */
  'created_at_unix_ms': (number);
}
