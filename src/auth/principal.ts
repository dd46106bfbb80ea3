// Who a request is, once authenticated: the one value every transport (HTTP, both gRPC planes, peer
// stars) hands to authorize(). It is built from a verified token, or stands for a caller the mode
// trusts whole (auth off, mtls, the basic-auth operator).

import type { Grant } from './scope.ts';

/** Gateway ceilings from svc_aux.limits (enforced per sub and per Gateway instance). */
export interface TokenLimits {
  rps?: number;
  connections?: number;
  read_Bps?: number;
  write_Bps?: number;
}

/** The svc_aux claim's known fields; unknown ones are dropped at parse time. */
export interface PrincipalAux {
  /** Pins the fencing token an append, session open or fence under this credential must present. */
  fencing_token?: string;
  limits?: TokenLimits;
}

export interface Principal {
  /**
   * 'anonymous-trusted': the mode trusts the caller whole (off, mtls, basic), every check passes.
   * 'token': exactly what the token's grants cover.
   */
  readonly kind: 'anonymous-trusted' | 'token';
  /** Audit identity only; never consulted for authorization. */
  readonly sub?: string;
  readonly grants: readonly Grant[];
  readonly admin: boolean;
  readonly node: boolean;
  /** The token's exp in ms: the request deadline, so no session or subscription outlives it. */
  readonly expMs?: number;
  readonly aux: PrincipalAux;
}

/** The caller under `--auth off` and `--auth mtls`. */
export const TRUSTED_PRINCIPAL: Principal = Object.freeze({
  kind: 'anonymous-trusted',
  grants: Object.freeze([]) as readonly Grant[],
  admin: true,
  node: true,
  aux: Object.freeze({}),
});

/** The basic-auth operator: trusted, with the admin marker, audited under its username. */
export function operatorPrincipal(username: string): Principal {
  return Object.freeze({
    kind: 'anonymous-trusted',
    sub: username,
    grants: Object.freeze([]) as readonly Grant[],
    admin: true,
    node: false,
    aux: Object.freeze({}),
  });
}
