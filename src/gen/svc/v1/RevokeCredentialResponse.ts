// Original file: proto/svc/v1/admin.proto

import type { Credential as _svc_v1_Credential, Credential__Output as _svc_v1_Credential__Output } from '../../svc/v1/Credential.ts';

export interface RevokeCredentialResponse {
  /**
   * The row as it now stands (revoked).
   */
  'credential'?: (_svc_v1_Credential | null);
}

export interface RevokeCredentialResponse__Output {
  /**
   * The row as it now stands (revoked).
   */
  'credential': (_svc_v1_Credential__Output | null);
}
