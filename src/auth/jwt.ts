// JWT verification and minting, over whichever key source is configured (jwt-keys.ts). Verifying
// turns a compact token into a Principal: exp is mandatory (it becomes the request deadline), aud
// is enforced when configured, iss is pinned under OIDC, and the algorithm must belong to the
// source's family, so `alg: none` and cross-family tricks fail before any key is touched.
//
// Verified tokens are cached by their signature until exp: a producer or subscriber presents the
// same bearer on every request, and an RSA verify per request is the avoidable cost.

import { SignJWT, errors, type JWTPayload, type JWTVerifyOptions } from 'jose';
import { ServiceError } from '../protocol/errors.ts';
import type { ExchangedToken } from '../protocol/resources.ts';
import type { JwtConfig } from './config.ts';
import { createKeySource, type KeySource } from './jwt-keys.ts';
import type { Principal, PrincipalAux, TokenLimits } from './principal.ts';
import { parseScope } from './scope.ts';

/** Verified tokens kept at once; past it the oldest entry goes first. */
export const VERIFIED_TOKENS_CACHE_MAX = 10_000;
/** A bearer longer than this is refused unread (64 grants of long matchers fit well within it). */
export const TOKEN_CHARS_MAX = 16 * 1024;

export interface JwtVerifierOptions {
  /** Clock in ms since the epoch; tests pin it. */
  now?: () => number;
  /** Where skipped scope tokens and refresh failures are reported. */
  log?: (msg: string) => void;
  cacheMax?: number;
  refreshMs?: number;
  fetchTimeoutMs?: number;
}

/** What the service puts into tokens it mints (exchange, peer self-minting). */
export interface MintClaims {
  scope: string;
  sub?: string;
  svc_aux?: PrincipalAux;
}

/** A minted token is what the exchange answers (src/protocol/resources.ts). */
export type MintedToken = ExchangedToken;

export interface TokenSigner {
  /** Mint an HS256 token living ttlSeconds (a positive integer); keysets stamp the first key's kid. */
  sign(claims: MintClaims, ttlSeconds: number): Promise<MintedToken>;
}

export interface JwtVerifier {
  verify(token: string): Promise<Principal>;
  /** Present only under a symmetric source; JWKS/OIDC deployments are verify-only. */
  readonly signer: TokenSigner | undefined;
  /** Refetch remote keys now and drop the verified-token cache. */
  refresh(): Promise<void>;
  /** Stop the background refresh timer. */
  close(): void;
}

interface CacheEntry {
  token: string;
  principal: Principal;
}

function unauthenticated(message: string): ServiceError {
  return new ServiceError('unauthenticated', message);
}

/** jose's verdicts as one short, stable reason each. Never the token itself. */
function explain(err: unknown): ServiceError {
  if (err instanceof ServiceError) return err;
  if (err instanceof errors.JWTExpired) return unauthenticated('token expired');
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'aud') return unauthenticated('token audience not accepted');
    if (err.claim === 'iss') return unauthenticated('token issuer not accepted');
    if (err.claim === 'exp' && err.reason === 'missing') return unauthenticated('token has no exp');
    return unauthenticated(`token claim ${err.claim} invalid`);
  }
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) return unauthenticated('token algorithm not accepted');
  if (err instanceof errors.JWKSNoMatchingKey) return unauthenticated('token key id not recognized');
  if (err instanceof errors.JWSSignatureVerificationFailed) return unauthenticated('token signature invalid');
  return unauthenticated('token malformed');
}

function nonNegative(v: unknown, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw unauthenticated(`svc_aux.limits.${name} must be a non-negative number`);
  return v;
}

/**
 * svc_aux: known fields typed, unknown ones ignored (spec). A known field of the wrong type rejects
 * the token instead of being dropped: ignoring it would silently lift a pin or a ceiling.
 */
export function parseAux(raw: unknown): PrincipalAux {
  if (raw === undefined) return {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw unauthenticated('svc_aux must be an object');
  const { fencing_token: fencing, limits } = raw as Record<string, unknown>;
  const aux: PrincipalAux = {};
  if (fencing !== undefined) {
    if (typeof fencing !== 'string') throw unauthenticated('svc_aux.fencing_token must be a string');
    if (fencing !== '') aux.fencing_token = fencing; // '' pins nothing, as '' means unfenced
  }
  if (limits !== undefined) {
    if (typeof limits !== 'object' || limits === null || Array.isArray(limits)) throw unauthenticated('svc_aux.limits must be an object');
    const l = limits as Record<string, unknown>;
    const parsed: TokenLimits = {};
    for (const name of ['rps', 'connections', 'read_Bps', 'write_Bps'] as const) {
      const v = nonNegative(l[name], name);
      if (v !== undefined) parsed[name] = v;
    }
    aux.limits = parsed;
  }
  return aux;
}

/** A verified payload as a Principal. Exported so peers and tests can build one the same way. */
export function principalFromClaims(payload: JWTPayload, log?: (msg: string) => void): Principal {
  if (typeof payload.exp !== 'number') throw unauthenticated('token has no exp');
  const scope = payload.scope;
  if (scope !== undefined && typeof scope !== 'string') throw unauthenticated('scope claim must be a space-separated string');
  const parsed = parseScope(scope ?? '', (token, reason) => log?.(`auth: skipped scope token '${token}' (sub ${payload.sub ?? '-'}): ${reason}`));
  return Object.freeze({
    kind: 'token',
    ...(typeof payload.sub === 'string' ? { sub: payload.sub } : {}),
    grants: Object.freeze(parsed.grants),
    admin: parsed.admin,
    node: parsed.node,
    expMs: payload.exp * 1000,
    aux: Object.freeze(parseAux(payload.svc_aux)),
  });
}

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

function signerFor(source: KeySource, audience: string | undefined, now: () => number): TokenSigner | undefined {
  const key = source.signingKey;
  if (key === undefined) return undefined;
  return {
    async sign(claims, ttlSeconds) {
      if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0) throw new ServiceError('invalid_argument', 'ttl_seconds must be a positive integer');
      const iat = Math.floor(now() / 1000);
      const exp = iat + ttlSeconds;
      const payload: JWTPayload = { scope: claims.scope };
      if (claims.svc_aux !== undefined) payload.svc_aux = claims.svc_aux;
      const jwt = new SignJWT(payload)
        .setProtectedHeader(key.kid !== '' ? { alg: 'HS256', typ: 'JWT', kid: key.kid } : { alg: 'HS256', typ: 'JWT' })
        .setIssuedAt(iat)
        .setExpirationTime(exp);
      if (claims.sub !== undefined) jwt.setSubject(claims.sub);
      // Our own tokens must pass our own audience check.
      if (audience !== undefined) jwt.setAudience(audience);
      return { token: await jwt.sign(key.secret), expires_at_unix_ms: exp * 1000 };
    },
  };
}

/**
 * Build the verifier for a configured JWT source. Remote sources fetch their keys before this
 * resolves, so a dead JWKS or discovery endpoint throws (and boot fails) here.
 */
export async function createJwtVerifier(config: JwtConfig, options: JwtVerifierOptions = {}): Promise<JwtVerifier> {
  const now = options.now ?? Date.now;
  const log = options.log ?? ((msg: string) => console.warn(msg));
  const cacheMax = options.cacheMax ?? VERIFIED_TOKENS_CACHE_MAX;
  // Keyed by the signature part, but each entry keeps the whole token and a hit must equal it: the
  // signature alone would let a forged header or payload ride a genuine signature.
  const cache = new Map<string, CacheEntry>();
  const source = await createKeySource(config.source, {
    log,
    // A refreshed key set may have dropped a key; tokens it vouched for must be checked again.
    onRefreshed: () => cache.clear(),
    ...(options.refreshMs !== undefined ? { refreshMs: options.refreshMs } : {}),
    ...(options.fetchTimeoutMs !== undefined ? { fetchTimeoutMs: options.fetchTimeoutMs } : {}),
  });

  const baseOptions = (): JWTVerifyOptions => ({
    algorithms: [...source.algorithms],
    requiredClaims: ['exp'],
    currentDate: new Date(now()),
    ...(config.audience !== undefined ? { audience: config.audience } : {}),
    ...(source.issuer !== undefined ? { issuer: source.issuer } : {}),
  });

  async function verify(token: string): Promise<Principal> {
    if (token.length > TOKEN_CHARS_MAX) throw unauthenticated('token too large');
    if (!COMPACT_JWS.test(token)) throw unauthenticated('token malformed');
    const signature = token.slice(token.lastIndexOf('.') + 1);
    const hit = cache.get(signature);
    if (hit !== undefined && hit.token === token) {
      if (now() < (hit.principal.expMs ?? 0)) return hit.principal;
      cache.delete(signature);
      throw unauthenticated('token expired');
    }
    let principal: Principal;
    try {
      const { payload } = await source.verify(token, baseOptions());
      principal = principalFromClaims(payload, log);
    } catch (err) {
      throw explain(err);
    }
    if (cache.size >= cacheMax) {
      const oldest = cache.keys().next();
      if (!oldest.done) cache.delete(oldest.value);
    }
    cache.set(signature, { token, principal });
    return principal;
  }

  return {
    verify,
    signer: signerFor(source, config.audience, now),
    async refresh() {
      await source.refresh();
      cache.clear();
    },
    close() {
      source.close();
      cache.clear();
    },
  };
}
