// How a star authenticates to its peers, under the same mode as everything else (spec: Gateway,
// bridge and peers). This is the credential for star-initiated calls (SettleStar); a one-hop proxy
// forwards the originating caller's credential instead, and never uses this.

import type { AuthConfig } from './config.ts';
import type { TokenSigner } from './jwt.ts';
import { NODE_MARKER } from './scope.ts';
import { BootError } from '../config/boot-error.ts';

/** Self-minted peer tokens live this long, and are re-minted once less than the margin is left. */
export const PEER_TOKEN_TTL_SECONDS = 5 * 60;
export const PEER_TOKEN_RENEW_MARGIN_MS = 60_000;

export interface PeerCredentials {
  /** The Authorization value to send to a peer, or undefined when the transport carries identity (mtls, off). */
  authorization(): Promise<string | undefined>;
}

/**
 * mtls: the serving certificate does it (undefined here). jwt with a symmetric source: a
 * short-lived self-minted `svc:node` token. jwt with JWKS/OIDC: the provisioned token. basic: the
 * operator login.
 */
export function createPeerCredentials(
  config: AuthConfig, signer: TokenSigner | undefined, starId: string, now: () => number = Date.now,
): PeerCredentials {
  switch (config.mode) {
    case 'off':
    case 'mtls':
      return { authorization: async () => undefined };
    case 'basic': {
      const basic = config.basic;
      if (basic === undefined) throw new BootError('auth: basic mode needs an admin username and password');
      const value = 'Basic ' + Buffer.from(`${basic.username}:${basic.password}`, 'utf8').toString('base64');
      return { authorization: async () => value };
    }
    case 'jwt': {
      if (signer === undefined) {
        // parseAuthConfig refuses to boot without it; a hand-built config fails here just as closed.
        const token = config.peerServiceToken;
        if (token === undefined) throw new BootError('auth: jwt with JWKS/OIDC needs a provisioned peer service token');
        return { authorization: async () => `Bearer ${token}` };
      }
      let cached: { value: string; expiresAtMs: number } | undefined;
      let pending: Promise<string> | undefined;
      return {
        async authorization() {
          if (cached !== undefined && cached.expiresAtMs - PEER_TOKEN_RENEW_MARGIN_MS > now()) return cached.value;
          // One mint at a time, however many peer calls ask at once.
          pending ??= signer
            .sign({ scope: NODE_MARKER, sub: `star:${starId}` }, PEER_TOKEN_TTL_SECONDS)
            .then((minted) => {
              cached = { value: `Bearer ${minted.token}`, expiresAtMs: minted.expires_at_unix_ms };
              return cached.value;
            })
            .finally(() => { pending = undefined; });
          return pending;
        },
      };
    }
  }
}
