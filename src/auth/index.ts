// The auth module's face, and the one place its parts are put together at boot: the verifier (which
// may fetch remote keys, so a dead JWKS fails the start), the authenticator, the credential
// registry with the root seed converged, the exchange, and the peer credentials.

import { createAuthenticator, type Authenticator } from './authenticate.ts';
import type { AuthConfig } from './config.ts';
import { CredentialRegistry, type CredentialStore } from './credentials.ts';
import { createExchanger, type Exchanger } from './exchange.ts';
import { createJwtVerifier, type JwtVerifier, type JwtVerifierOptions } from './jwt.ts';
import { createPeerCredentials, type PeerCredentials } from './peer.ts';

export * from './authenticate.ts';
export * from './authorize.ts';
export * from './config.ts';
export * from './credentials.ts';
export * from './exchange.ts';
export * from './jwt.ts';
export * from './peer.ts';
export * from './principal.ts';
export * from './scope.ts';
export * from './throttle.ts';

export interface AuthBootOptions extends JwtVerifierOptions {
  store: CredentialStore;
  /** This star's id, the sub of its self-minted peer tokens. */
  starId: string;
  randomBytes?: (n: number) => Uint8Array;
}

export interface AuthModule {
  config: AuthConfig;
  authenticator: Authenticator;
  verifier: JwtVerifier | undefined;
  registry: CredentialRegistry;
  exchanger: Exchanger;
  peer: PeerCredentials;
  close(): void;
}

/** Build every auth part from a parsed config. Throws (boot fails) when remote keys cannot be fetched. */
export async function startAuth(config: AuthConfig, options: AuthBootOptions): Promise<AuthModule> {
  const { store, starId, randomBytes, ...jwtOptions } = options;
  const verifier = config.jwt !== undefined ? await createJwtVerifier(config.jwt, jwtOptions) : undefined;
  const registry = new CredentialRegistry(store, {
    ...(options.now !== undefined ? { now: options.now } : {}),
    ...(randomBytes !== undefined ? { randomBytes } : {}),
  });
  let peer: PeerCredentials;
  try {
    peer = createPeerCredentials(config, verifier?.signer, starId, options.now);
    if (config.rootSeed !== undefined) await registry.convergeRootSeed(config.rootSeed);
  } catch (err) {
    verifier?.close();
    throw err;
  }
  return {
    config,
    authenticator: createAuthenticator(config, verifier),
    verifier,
    registry,
    exchanger: createExchanger(registry, verifier?.signer, {
      ...(config.exchangeTokenConnections !== undefined ? { tokenConnections: config.exchangeTokenConnections } : {}),
      ...(jwtOptions.log !== undefined ? { log: jwtOptions.log } : {}),
      ...(options.now !== undefined ? { nowMs: options.now } : {}),
    }),
    peer,
    close() { verifier?.close(); },
  };
}
