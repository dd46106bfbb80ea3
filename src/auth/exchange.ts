// The api-key exchange (POST /v1/token/exchange, gRPC ExchangeToken): a long-lived (key id, secret)
// traded for a short-lived JWT narrowed to one bucket or to an explicit subset of the credential's
// grants. The minted token never holds more than the credential: narrowing only ever shrinks.
//
// Order of verdicts: no signing key (501) before anything else, since no ask can succeed; then the
// body's shape (400); then the credential (401 / 403 revoked); then the narrowing (403).
//
// The asked `scope` follows the grammar's rule 5 like any scope: entries without `svc:` are ignored,
// a malformed or unknown `svc:` token is skipped and logged, more than 64 `svc:` tokens rejects the
// ask (400). The ask is 400 only when no valid grant or marker remains.
//
// Failed asks are throttled (throttle.ts) per key id, and per client address when the transport
// names one: while either has spent its failures the ask is 429 before the secret is checked.
// Minted tokens carry `svc_aux.limits.connections` (spec: Claims), so a Gateway caps the
// subscriptions of every exchanged token even when its operator set no other limit.

import {
  EXCHANGE_FAILURES_PER_ADDRESS_BURST, EXCHANGE_FAILURES_PER_ADDRESS_PER_S, EXCHANGE_FAILURES_PER_KEY_ID_BURST,
  EXCHANGE_FAILURES_PER_KEY_ID_PER_S, EXCHANGE_THROTTLE_KEYS_MAX, EXCHANGE_TOKEN_CONNECTIONS_DEFAULT,
  EXCHANGE_TTL_SECONDS_DEFAULT, EXCHANGE_TTL_SECONDS_MAX, MINTED_TOKEN_CHARS_MAX,
} from '../config/limits.ts';
import { invalid, ServiceError } from '../protocol/errors.ts';
import type { ExchangeRequest } from '../protocol/resources.ts';
import { isBucketName, isReservedBucketName } from '../protocol/rules.ts';
import type { CredentialRegistry } from './credentials.ts';
import type { MintClaims, MintedToken, TokenSigner } from './jwt.ts';
import { FailureThrottle, type ThrottleRule } from './throttle.ts';
import {
  ACTIONS, formatScope, grantContains, matches, parseScope,
  type Grant, type ParsedScope,
} from './scope.ts';

/** The ask's wire shape (src/protocol/resources.ts), which parseExchangeRequest checks. */
export type { ExchangeRequest };

const EXCHANGE_FIELDS: ReadonlySet<string> = new Set(['key_id', 'secret', 'bucket', 'scope', 'ttl_seconds']);

/**
 * Validate the JSON body's shape; the transport hands over whatever it parsed. Unknown fields are
 * 400 as on every other body. `ttl_seconds` 0 or null means the default (as proto3's unset 0 does
 * on gRPC); a negative or fractional one, or a non-number, is 400.
 */
export function parseExchangeRequest(body: unknown): ExchangeRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('exchange body must be a JSON object');
  for (const field of Object.keys(body)) if (!EXCHANGE_FIELDS.has(field)) throw invalid(`unknown field ${field}`);
  const { key_id: keyId, secret, bucket, scope, ttl_seconds: ttl } = body as Record<string, unknown>;
  // A missing key id or secret is a credential that is not there: 401, like a wrong one.
  if (typeof keyId !== 'string' || keyId === '' || typeof secret !== 'string' || secret === '') {
    throw new ServiceError('unauthenticated', 'key_id and secret are required');
  }
  if ((bucket === undefined) === (scope === undefined)) throw invalid('give exactly one of bucket or scope');
  // The bucket is written into the minted scope's tokens, so only a name a bucket can have (which
  // holds none of the grammar's `:` and `*` and no white space): one that no bucket can have would
  // be minted into grants that match nothing, or refused as if the credential lacked it.
  if (bucket !== undefined && (typeof bucket !== 'string' || !isBucketName(bucket))) {
    throw invalid('bucket must be a bucket name (1-128 of A-Z a-z 0-9 . _ -, starting with a letter or digit)');
  }
  if (typeof bucket === 'string' && isReservedBucketName(bucket)) throw invalid(`the bucket name ${bucket} is reserved (api, in any case): no bucket has it`);
  if (scope !== undefined && typeof scope !== 'string') throw invalid('scope must be a space-separated string');
  if (ttl !== undefined && ttl !== null && (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 0)) {
    throw invalid('ttl_seconds must be a non-negative integer (0 or absent: 15 minutes)');
  }
  return {
    key_id: keyId, secret,
    ...(bucket !== undefined ? { bucket: bucket as string } : {}),
    ...(scope !== undefined ? { scope: scope as string } : {}),
    ...(typeof ttl === 'number' && ttl > 0 ? { ttl_seconds: ttl } : {}),
  };
}

/** ttl_seconds: default 15 minutes (absent or 0), clamped to 1 hour. */
export function exchangeTtlSeconds(asked: number | undefined): number {
  return Math.min(asked === undefined || asked === 0 ? EXCHANGE_TTL_SECONDS_DEFAULT : asked, EXCHANGE_TTL_SECONDS_MAX);
}

/** A skipped `svc:` token of an ask, and why. */
export interface SkippedToken { token: string; reason: string }

/**
 * Parse an asked `scope` under rule 5. Throws InvalidArgument past SCOPE_TOKENS_MAX `svc:` tokens,
 * or when no valid grant or marker remains; otherwise answers the scope and what was skipped.
 */
export function parseAskedScope(scope: string): { asked: ParsedScope; skipped: SkippedToken[] } {
  const skipped: SkippedToken[] = [];
  let asked: ParsedScope;
  try {
    asked = parseScope(scope, (token, reason) => skipped.push({ token, reason }));
  } catch (err) {
    // Too many svc: tokens: the whole ask is rejected, and it is the asker's input, so 400.
    if (err instanceof ServiceError) throw invalid(err.message.replace(/^credential rejected: /, 'scope has '));
    throw err;
  }
  if (!asked.admin && !asked.node && asked.grants.length === 0) {
    const why = skipped.length > 0 ? ` (skipped ${describeSkipped(skipped)})` : '';
    throw invalid(`scope asks for no valid svc: grant${why}`);
  }
  return { asked, skipped };
}

/** Bounded text for skipped tokens: a hostile ask cannot write 64 KiB into a log line or an answer. */
const SKIPPED_SHOWN_MAX = 4;
const SKIPPED_TOKEN_CHARS_MAX = 80;
function describeSkipped(skipped: readonly SkippedToken[]): string {
  const cut = (t: string): string => (t.length > SKIPPED_TOKEN_CHARS_MAX ? `${t.slice(0, SKIPPED_TOKEN_CHARS_MAX)}…` : t);
  const shown = skipped.slice(0, SKIPPED_SHOWN_MAX).map((s) => `'${cut(s.token)}': ${s.reason}`);
  const more = skipped.length > SKIPPED_SHOWN_MAX ? `; and ${skipped.length - SKIPPED_SHOWN_MAX} more` : '';
  return shown.join('; ') + more;
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

/** What the transport knows about the asker. */
export interface ExchangeClient {
  /** The caller's own network address, when the transport sees it (not a proxy's). */
  address?: string;
}

export interface Exchanger {
  exchange(body: unknown, client?: ExchangeClient): Promise<MintedToken>;
}

/** The throttle rules of the exchange (limits.ts), one per key kind. */
export const EXCHANGE_KEY_ID_THROTTLE: ThrottleRule = {
  burst: EXCHANGE_FAILURES_PER_KEY_ID_BURST, perS: EXCHANGE_FAILURES_PER_KEY_ID_PER_S, keysMax: EXCHANGE_THROTTLE_KEYS_MAX, what: 'key id',
};
export const EXCHANGE_ADDRESS_THROTTLE: ThrottleRule = {
  burst: EXCHANGE_FAILURES_PER_ADDRESS_BURST, perS: EXCHANGE_FAILURES_PER_ADDRESS_PER_S, keysMax: EXCHANGE_THROTTLE_KEYS_MAX, what: 'client address',
};

export interface ExchangerOptions {
  /** Where skipped scope tokens are reported (one line per ask). Default: console.warn. */
  log?: (msg: string) => void;
  /** `svc_aux.limits.connections` of minted tokens; 0 stamps none. Default EXCHANGE_TOKEN_CONNECTIONS_DEFAULT. */
  tokenConnections?: number;
  /** The throttles' clock (tests move it). Default Date.now. */
  nowMs?: () => number;
}

/** Whether a verdict is a failed secret check (the one a guesser gets), which the throttles count. */
function isGuessFailure(err: unknown): boolean {
  return err instanceof ServiceError && err.code === 'unauthenticated';
}

/**
 * The exchange over a registry and the signer of a symmetric JWT source. `signer` is undefined
 * under JWKS/OIDC (verify-only) and in modes without JWT: every ask is then Unimplemented (501).
 */
export function createExchanger(registry: CredentialRegistry, signer: TokenSigner | undefined, options: ExchangerOptions = {}): Exchanger {
  const log = options.log ?? ((msg: string) => console.warn(msg));
  const connections = options.tokenConnections ?? EXCHANGE_TOKEN_CONNECTIONS_DEFAULT;
  const byKeyId = new FailureThrottle(EXCHANGE_KEY_ID_THROTTLE, options.nowMs);
  const byAddress = new FailureThrottle(EXCHANGE_ADDRESS_THROTTLE, options.nowMs);
  return {
    async exchange(body, client) {
      if (signer === undefined) throw new ServiceError('unimplemented', 'token exchange needs a symmetric JWT signing key');
      const req = parseExchangeRequest(body);
      // Parse the ask before touching the registry so a scope with nothing valid is 400 for everyone.
      const ask = req.scope !== undefined ? parseAskedScope(req.scope) : undefined;
      const address = client?.address;
      if (address !== undefined) byAddress.check(address);
      byKeyId.check(req.key_id);
      let verified: Awaited<ReturnType<CredentialRegistry['verifySecret']>>;
      try {
        verified = await registry.verifySecret(req.key_id, req.secret);
      } catch (err) {
        if (isGuessFailure(err)) {
          byKeyId.failed(req.key_id);
          if (address !== undefined) byAddress.failed(address);
        }
        throw err;
      }
      const { row, scope: held } = verified;
      // Logged once the caller is known, so an unauthenticated ask cannot write to the log.
      if (ask !== undefined && ask.skipped.length > 0) {
        log(`auth: exchange for ${row.key_id} skipped ${ask.skipped.length} scope token(s): ${describeSkipped(ask.skipped)}`);
      }
      const granted = ask !== undefined ? narrowToScope(held, ask.asked) : narrowToBucket(held, req.bucket as string);
      const claims: MintClaims = { scope: formatScope(granted), sub: row.key_id };
      if (connections > 0) claims.svc_aux = { limits: { connections } };
      const minted = await signer.sign(claims, exchangeTtlSeconds(req.ttl_seconds));
      // A token no request may carry must not be handed out as a success (it would be 401 at every use).
      if (minted.token.length > MINTED_TOKEN_CHARS_MAX) {
        throw invalid(`the token for this scope would be ${minted.token.length} characters, over the ${MINTED_TOKEN_CHARS_MAX} a request head has room for; ask for fewer or shorter grants (scope)`);
      }
      return minted;
    },
  };
}
