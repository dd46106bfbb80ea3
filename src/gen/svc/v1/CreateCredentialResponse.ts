// Original file: proto/svc/v1/admin.proto

import type { Credential as _svc_v1_Credential, Credential__Output as _svc_v1_Credential__Output } from '../../svc/v1/Credential.ts';

export interface CreateCredentialResponse {
  /**
   * The registered row.
   */
  'credential'?: (_svc_v1_Credential | null);
  /**
   * The secret, shown this once; never stored or listed.
   */
  'secret'?: (string);
}

export interface CreateCredentialResponse__Output {
  /**
   * The registered row.
   */
  'credential': (_svc_v1_Credential__Output | null);
  /**
   * The secret, shown this once; never stored or listed.
   */
  'secret': (string);
}
