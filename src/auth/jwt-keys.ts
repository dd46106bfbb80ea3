// Where a JWT's verification key comes from, one implementation per source family. Each pins its
// own algorithm list, so symmetric and asymmetric keys never meet on one verifier: an HS256 token
// can never be checked against an RSA public key taken as an HMAC secret, nor the reverse.

import {
  createRemoteJWKSet, decodeProtectedHeader, errors, jwtVerify,
  type CryptoKey, type JWTVerifyOptions, type JWTVerifyResult, type RemoteJWKSet,
} from 'jose';
import type { HmacKey, JwtSource } from './config.ts';
import { BootError } from '../config/boot-error.ts';

export const SYMMETRIC_ALGORITHMS: readonly string[] = ['HS256'];
export const ASYMMETRIC_ALGORITHMS: readonly string[] = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/** JWKS and discovery documents are refetched this often (spec: hourly). */
export const JWKS_REFRESH_MS = 60 * 60_000;
/** A JWKS or discovery fetch that takes longer fails; at boot that fails the start. */
export const JWKS_FETCH_TIMEOUT_MS = 5_000;
/** A key set bigger than this is refused: the verifier tries candidates, so keep the list short. */
export const HMAC_KEYS_MAX = 16;

export interface KeySourceOptions {
  log: (msg: string) => void;
  refreshMs?: number;
  fetchTimeoutMs?: number;
  /** Called after each successful background refresh, so verified-token caches can be dropped. */
  onRefreshed?: () => void;
}

/** Verifies a token's signature (and jose's claim checks) against the source's keys. */
export interface KeySource {
  readonly algorithms: readonly string[];
  /** OIDC: the issuer the token's iss must equal. */
  readonly issuer?: string;
  readonly signingKey?: HmacKey;
  verify(token: string, options: JWTVerifyOptions): Promise<JWTVerifyResult>;
  /** Refetch remote keys now (no-op for static sources). */
  refresh(): Promise<void>;
  close(): void;
}

function isSignatureFailure(err: unknown): boolean {
  return err instanceof errors.JWSSignatureVerificationFailed;
}

/** Try candidate keys in order; only a bad signature moves on, any other verdict is final. */
async function verifyWithCandidates(
  token: string, keys: Iterable<Uint8Array> | AsyncIterable<CryptoKey>, options: JWTVerifyOptions,
): Promise<JWTVerifyResult> {
  let lastErr: unknown = new errors.JWSSignatureVerificationFailed();
  for await (const key of keys) {
    try {
      return await jwtVerify(token, key, options);
    } catch (err) {
      if (!isSignatureFailure(err)) throw err;
      lastErr = err;
    }
  }
  throw lastErr;
}

function hmacSource(keys: HmacKey[]): KeySource {
  if (keys.length > HMAC_KEYS_MAX) throw new BootError(`auth: SVCD_JWT_HMAC_KEYS holds ${keys.length} keys, at most ${HMAC_KEYS_MAX}`);
  const byKid = new Map(keys.map((k) => [k.kid, k.secret]));
  const keyed = keys.length > 1 || keys[0].kid !== '';
  return {
    algorithms: SYMMETRIC_ALGORITHMS,
    signingKey: keys[0],
    async verify(token, options) {
      if (!keyed) return jwtVerify(token, keys[0].secret, options);
      const { kid } = decodeProtectedHeader(token);
      if (kid !== undefined) {
        // A named key that is not in the set was revoked by removal: no fallback to the others.
        const secret = byKid.get(kid);
        if (secret === undefined) throw new errors.JWKSNoMatchingKey('unknown kid');
        return jwtVerify(token, secret, options);
      }
      // Unnamed tokens (minted before the set existed) may match any key still in the set.
      return verifyWithCandidates(token, keys.map((k) => k.secret), options);
    },
    async refresh() {},
    close() {},
  };
}

async function fetchJson(url: string, timeoutMs: number): Promise<unknown> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'manual', headers: { accept: 'application/json' } });
  if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
  return res.json();
}

function oneLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0];
}

/**
 * A remote JWKS. jose's resolver is told to never treat its copy as stale (cacheMaxAge Infinity)
 * so a JWKS outage never turns into rejecting every token; freshness comes from our own hourly
 * reload instead, which keeps the last good set when it fails. jose still refetches (rate-limited
 * by its cooldown) when a token names a kid the set lacks, which is how fresh rotations land.
 */
async function remoteSource(url: string, issuer: string | undefined, opts: KeySourceOptions): Promise<KeySource> {
  const timeoutDuration = opts.fetchTimeoutMs ?? JWKS_FETCH_TIMEOUT_MS;
  const jwks: RemoteJWKSet = createRemoteJWKSet(new URL(url), { cacheMaxAge: Infinity, timeoutDuration });
  try {
    await jwks.reload();
  } catch (err) {
    throw new BootError(`auth: JWKS ${url} unreachable at start: ${oneLine(err)}`);
  }
  const refresh = async (): Promise<void> => {
    await jwks.reload();
    opts.onRefreshed?.();
  };
  const timer = setInterval(() => {
    refresh().catch((err: unknown) => opts.log(`auth: JWKS refresh from ${url} failed, keeping the last set: ${oneLine(err)}`));
  }, opts.refreshMs ?? JWKS_REFRESH_MS);
  timer.unref();
  return {
    algorithms: ASYMMETRIC_ALGORITHMS,
    ...(issuer !== undefined ? { issuer } : {}),
    async verify(token, options) {
      try {
        return await jwtVerify(token, jwks, options);
      } catch (err) {
        // Several keys fit a token without kid: jose hands them over to try one by one.
        if (err instanceof errors.JWKSMultipleMatchingKeys) {
          return verifyWithCandidates(token, err as unknown as AsyncIterable<CryptoKey>, options);
        }
        throw err;
      }
    },
    refresh,
    close() { clearInterval(timer); },
  };
}

function stripSlash(s: string): string {
  return s.endsWith('/') ? s.slice(0, -1) : s;
}

/** OIDC discovery: {issuer}/.well-known/openid-configuration names the JWKS; iss is pinned. */
async function oidcSource(issuer: string, opts: KeySourceOptions): Promise<KeySource> {
  const discoveryUrl = `${stripSlash(issuer)}/.well-known/openid-configuration`;
  let doc: unknown;
  try {
    doc = await fetchJson(discoveryUrl, opts.fetchTimeoutMs ?? JWKS_FETCH_TIMEOUT_MS);
  } catch (err) {
    throw new BootError(`auth: OIDC discovery ${discoveryUrl} failed at start: ${oneLine(err)}`);
  }
  const { issuer: docIssuer, jwks_uri: jwksUri } = (typeof doc === 'object' && doc !== null ? doc : {}) as Record<string, unknown>;
  // OpenID Connect Discovery §4.3: the document's issuer must be the one asked for, or a
  // compromised or misrouted document could vouch for another issuer's tokens.
  if (typeof docIssuer !== 'string' || stripSlash(docIssuer) !== stripSlash(issuer)) {
    throw new BootError(`auth: OIDC discovery at ${discoveryUrl} names issuer ${String(docIssuer)}, not ${issuer}`);
  }
  if (typeof jwksUri !== 'string') throw new BootError(`auth: OIDC discovery at ${discoveryUrl} has no jwks_uri`);
  let parsed: URL;
  try {
    parsed = new URL(jwksUri);
  } catch {
    throw new BootError(`auth: OIDC jwks_uri is not a URL: ${jwksUri}`);
  }
  // Plain http only where the operator already accepted it for the issuer itself.
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && new URL(issuer).protocol === 'http:')) {
    throw new BootError(`auth: OIDC jwks_uri must be https: ${jwksUri}`);
  }
  return remoteSource(jwksUri, docIssuer, opts);
}

/** Build the key source for a configured JWT source; remote sources fetch now, so a dead endpoint fails boot. */
export async function createKeySource(source: JwtSource, opts: KeySourceOptions): Promise<KeySource> {
  switch (source.kind) {
    case 'hmac-secret': return hmacSource([source.key]);
    case 'hmac-keys': return hmacSource(source.keys);
    case 'jwks-url': return remoteSource(source.url, undefined, opts);
    case 'oidc-issuer': return oidcSource(source.issuer, opts);
  }
}
