// The api-key exchange (POST /v1/token/exchange, gRPC ExchangeToken): a long-lived (key id, secret)
// traded for a short-lived JWT narrowed to one bucket or to an explicit subset of the credential's
// grants. The minted token never holds more than the credential: narrowing only ever shrinks.
//
// Order of verdicts: no signing key (501) before anything else, since no ask can succeed; then the
// body's shape (400); then the credential (401 / 403 revoked); then the narrowing (403).

import { EXCHANGE_TTL_SECONDS_DEFAULT, EXCHANGE_TTL_SECONDS_MAX } from '../config/limits.ts';
import { ServiceError } from '../core/errors.ts';
import type { CredentialRegistry } from './credentials.ts';
import type { MintedToken, TokenSigner } from './jwt.ts';
import {
  ACTIONS, formatScope, grantContains, matches, parseScopeStrict,
  type Grant, type ParsedScope,
} from './scope.ts';

export interface ExchangeRequest {
  key_id: string;
  secret: string;
  bucket?: string;
  scope?: string;
  ttl_seconds?: number;
}

function invalid(message: string): ServiceError {
  return new ServiceError('invalid_argument', message);
}

/** Validate the JSON body's shape; the transport hands over whatever it parsed. */
export function parseExchangeRequest(body: unknown): ExchangeRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('exchange body must be a JSON object');
  const { key_id: keyId, secret, bucket, scope, ttl_seconds: ttl } = body as Record<string, unknown>;
  // A missing key id or secret is a credential that is not there: 401, like a wrong one.
  if (typeof keyId !== 'string' || keyId === '' || typeof secret !== 'string' || secret === '') {
    throw new ServiceError('unauthenticated', 'key_id and secret are required');
  }
  if ((bucket === undefined) === (scope === undefined)) throw invalid('give exactly one of bucket or scope');
  if (bucket !== undefined && (typeof bucket !== 'string' || bucket === '' || /[\s:*]/.test(bucket))) {
    throw invalid('bucket must be a bucket name');
  }
  if (scope !== undefined && typeof scope !== 'string') throw invalid('scope must be a space-separated string');
  if (ttl !== undefined && ttl !== null && (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl <= 0)) {
    throw invalid('ttl_seconds must be a positive integer');
  }
  return {
    key_id: keyId, secret,
    ...(bucket !== undefined ? { bucket: bucket as string } : {}),
    ...(scope !== undefined ? { scope: scope as string } : {}),
    ...(typeof ttl === 'number' ? { ttl_seconds: ttl } : {}),
  };
}

/** ttl_seconds: default 15 minutes, clamped to 1 hour. */
export function exchangeTtlSeconds(asked: number | undefined): number {
  return Math.min(asked ?? EXCHANGE_TTL_SECONDS_DEFAULT, EXCHANGE_TTL_SECONDS_MAX);
}

/**
 * `bucket` narrowing: every held grant whose bucket matcher admits the bucket, rewritten to that
 * bucket exactly. svc:admin becomes every action on the bucket with key `*`; markers do not carry
 * over (svc:admin's admin plane and svc:node are not bucket things).
 */
export function narrowToBucket(held: ParsedScope, bucket: string): ParsedScope {
  const exact = { value: bucket, prefix: false };
  const grants: Grant[] = held.admin
    ? ACTIONS.map((action) => ({ action, bucket: exact, key: { value: '', prefix: true } }))
    : held.grants.filter((g) => matches(g.bucket, bucket)).map((g) => ({ ...g, bucket: exact }));
  if (grants.length === 0) throw new ServiceError('permission_denied', 'the credential holds no grant on that bucket');
  return { grants, admin: false, node: false };
}

/** `scope` narrowing: each asked token must sit whole inside one held grant (or a held marker). */
export function narrowToScope(held: ParsedScope, asked: ParsedScope): ParsedScope {
  if (asked.admin && !held.admin) throw new ServiceError('permission_denied', 'the asked scope exceeds the credential: svc:admin');
  // svc:admin already passes SettleStar, so it may mint the narrower svc:node.
  if (asked.node && !held.node && !held.admin) throw new ServiceError('permission_denied', 'the asked scope exceeds the credential: svc:node');
  if (!held.admin) {
    for (const g of asked.grants) {
      if (!held.grants.some((h) => grantContains(h, g))) {
        throw new ServiceError('permission_denied', 'the asked scope exceeds the credential');
      }
    }
  }
  if (!asked.admin && !asked.node && asked.grants.length === 0) throw invalid('scope asks for no svc: grant');
  return asked;
}

export interface Exchanger {
  exchange(body: unknown): Promise<MintedToken>;
}

/**
 * The exchange over a registry and the signer of a symmetric JWT source. `signer` is undefined
 * under JWKS/OIDC (verify-only) and in modes without JWT: every ask is then Unimplemented (501).
 */
export function createExchanger(registry: CredentialRegistry, signer: TokenSigner | undefined): Exchanger {
  return {
    async exchange(body) {
      if (signer === undefined) throw new ServiceError('unimplemented', 'token exchange needs a symmetric JWT signing key');
      const req = parseExchangeRequest(body);
      // Parse the ask before touching the registry so a malformed scope is 400 for everyone.
      const asked = req.scope !== undefined ? parseScopeStrict(req.scope) : undefined;
      const { row, scope: held } = await registry.verifySecret(req.key_id, req.secret);
      const granted = asked !== undefined ? narrowToScope(held, asked) : narrowToBucket(held, req.bucket as string);
      return signer.sign({ scope: formatScope(granted), sub: row.key_id }, exchangeTtlSeconds(req.ttl_seconds));
    },
  };
}
