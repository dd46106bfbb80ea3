// The scope grammar (spec: Authentication > Scope grammar). A credential's grants ride the standard
// `scope` claim as space-separated tokens; this file turns that string into typed grants and back,
// and owns the key percent-encoding that grants and addresses are compared in.
//
//   resource grant: svc:<action>:<bucket-match>:<key-match>
//   marker:         svc:admin | svc:node
//
// Parsing is lenient per token and strict per credential: one malformed `svc:` token is skipped
// (and reported) so a typo never locks a tenant out of what the rest of its scope grants, while
// more than SCOPE_TOKENS_MAX `svc:` tokens rejects the whole credential so a scope cannot grow
// without bound.

import { keyToBytes } from '../protocol/key-bytes.ts';
import { SCOPE_TOKENS_MAX } from '../config/limits.ts';
import { ServiceError } from '../protocol/errors.ts';

export type Action = 'append' | 'read' | 'list' | 'create' | 'delete' | 'trim';
export const ACTIONS: readonly Action[] = ['append', 'read', 'list', 'create', 'delete', 'trim'];

export const SCOPE_PREFIX = 'svc:';
export const ADMIN_MARKER = 'svc:admin';
export const NODE_MARKER = 'svc:node';

/**
 * One side of a grant. `value` is the bucket name, or the canonical percent-encoded key; `prefix`
 * says the grant ended in `*`. A lone `*` is {value: '', prefix: true}: everything.
 */
export interface Matcher {
  readonly value: string;
  readonly prefix: boolean;
}

export interface Grant {
  readonly action: Action;
  readonly bucket: Matcher;
  readonly key: Matcher;
}

export interface ParsedScope {
  grants: Grant[];
  admin: boolean;
  node: boolean;
}

/** Called once per skipped `svc:` token with the token and why; the spec wants them logged. */
export type MalformedTokenHook = (token: string, reason: string) => void;

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
const HEX = '0123456789ABCDEF';

/**
 * A key in the form grants compare against (rule 3): every byte outside A-Z a-z 0-9 - . _ ~ as
 * %XX with uppercase hex. A string is a core key (storage/format/key-bytes.ts: UTF-8, raw bytes escaped).
 */
export function encodeKeyForMatch(key: Uint8Array | string): string {
  const bytes = typeof key === 'string' ? keyToBytes(key) : key;
  let out = '';
  for (const b of bytes) {
    const isUnreserved =
      (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || (b >= 0x30 && b <= 0x39) ||
      b === 0x2d || b === 0x2e || b === 0x5f || b === 0x7e;
    out += isUnreserved ? String.fromCharCode(b) : '%' + HEX[b >> 4] + HEX[b & 15];
  }
  return out;
}

/**
 * An encoded key match as rule 3 writes it, or undefined when it is not: unreserved bytes plain and
 * every other byte as %XX in uppercase hex. Matching is then plain string comparison against
 * encodeKeyForMatch's output (exact, or a prefix of it), so a prefix may stop inside an escape
 * (`a%2*` covers `a/b`, encoded `a%2Fb`). Lowercase hex and escaped unreserved bytes are not rule 3's
 * encoding of any key: such a token could never match as written, so it is malformed (skipped and
 * logged, rule 5) rather than quietly read as another key.
 */
function keyMatchText(encoded: string, prefix: boolean): string | undefined {
  for (let i = 0; i < encoded.length; i++) {
    const c = encoded[i];
    if (c === '%') {
      const hex = encoded.slice(i + 1, i + 3);
      if (/^[0-9A-F]{2}$/.test(hex)) {
        if (UNRESERVED.test(String.fromCharCode(parseInt(hex, 16)))) return undefined; // written plain by rule 3
        i += 2;
      } else if (!(prefix && i + 1 + hex.length === encoded.length && /^[0-9A-F]?$/.test(hex))) {
        return undefined; // bad or lowercase hex, or a cut escape that is not a prefix's end
      } else {
        return encoded;
      }
    } else if (!UNRESERVED.test(c)) {
      return undefined; // a raw `*`, `/`, `:` or non-ASCII char: not encoded per rule 3
    }
  }
  return encoded;
}

function parseMatcher(text: string, side: 'bucket' | 'key'): Matcher | string {
  if (text === '') return `empty ${side} match`;
  const prefix = text.endsWith('*');
  const body = prefix ? text.slice(0, -1) : text;
  if (body.includes('*')) return `'*' only at the end of a ${side} match`;
  if (side === 'bucket') {
    // A bucket match is a bucket name; white space cannot occur (parseToken refused it), ':' splits fields.
    return { value: body, prefix };
  }
  const value = keyMatchText(body, prefix);
  if (value === undefined) return 'key match is not percent-encoded as rule 3 writes it (unreserved bytes plain, others %XX in uppercase hex)';
  return { value, prefix };
}

/** One `svc:` token as a grant or marker, or the reason it is malformed. */
function parseToken(token: string): Grant | 'admin' | 'node' | string {
  if (!SCOPE_TOKEN_CHARS.test(token)) return 'not an RFC 6749 scope-token (visible ASCII only; tokens are separated by one ASCII space)';
  if (token === ADMIN_MARKER) return 'admin';
  if (token === NODE_MARKER) return 'node';
  const parts = token.split(':');
  if (parts.length !== 4) return 'expected svc:<action>:<bucket-match>:<key-match>';
  const [, action, bucketText, keyText] = parts;
  if (!(ACTIONS as readonly string[]).includes(action)) return `unknown action '${action}'`;
  const bucket = parseMatcher(bucketText, 'bucket');
  if (typeof bucket === 'string') return bucket;
  const key = parseMatcher(keyText, 'key');
  if (typeof key === 'string') return key;
  return { action: action as Action, bucket, key };
}

/**
 * Entries of a scope claim, split on the ASCII space only (RFC 6749 §3.3: tokens delimited by
 * %x20). Any other white space (a tab, a newline, U+2003 EM SPACE) stays inside its entry, which is
 * then malformed (see SCOPE_TOKEN_CHARS): splitting on Unicode white space as well would let
 * `svc:read:b:k\u2003svc:admin` read as two tokens here while every other parser of the claim reads
 * one, so the admin marker would be granted by text that nobody else sees as a grant. Runs of
 * spaces are tolerated.
 */
export function scopeEntries(scope: string): string[] {
  return scope.split(' ').filter((entry) => entry !== '');
}

/** RFC 6749 §3.3 scope-token: 1*( %x21 / %x23-5B / %x5D-7E ): visible ASCII but `"` and `\`. */
const SCOPE_TOKEN_CHARS = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * Parse a scope claim. Non-`svc:` entries are ignored, malformed `svc:` tokens are skipped and
 * reported through `onMalformed`, duplicates collapse. Throws ServiceError('unauthenticated') past
 * SCOPE_TOKENS_MAX `svc:` tokens: the whole credential is rejected, not truncated.
 */
export function parseScope(scope: string, onMalformed?: MalformedTokenHook): ParsedScope {
  const svcTokens = scopeEntries(scope).filter((entry) => entry.startsWith(SCOPE_PREFIX));
  if (svcTokens.length > SCOPE_TOKENS_MAX) {
    throw new ServiceError(
      'unauthenticated',
      `credential rejected: ${svcTokens.length} svc: scope tokens, at most ${SCOPE_TOKENS_MAX}`,
    );
  }
  const result: ParsedScope = { grants: [], admin: false, node: false };
  const seen = new Set<string>();
  for (const token of svcTokens) {
    const parsed = parseToken(token);
    if (parsed === 'admin') result.admin = true;
    else if (parsed === 'node') result.node = true;
    else if (typeof parsed === 'string') onMalformed?.(token, parsed);
    else {
      const canonical = formatGrant(parsed);
      if (seen.has(canonical)) continue;
      seen.add(canonical);
      result.grants.push(parsed);
    }
  }
  return result;
}

/**
 * Parse a scope the service is asked to store (credential create, root seed). Rule 5 holds there as
 * everywhere: an unknown or malformed `svc:` token is skipped (it grants nothing, at every use) and
 * reported through `onMalformed`, never fatal; only more than SCOPE_TOKENS_MAX `svc:` tokens reject
 * the whole credential, here as InvalidArgument (nothing is stored).
 */
export function parseStoredScope(scope: string, onMalformed?: MalformedTokenHook): ParsedScope {
  try {
    return parseScope(scope, onMalformed);
  } catch (err) {
    if (err instanceof ServiceError) throw new ServiceError('invalid_argument', err.message.replace(/^credential rejected: /, 'scope has '));
    throw err;
  }
}

function formatMatcher(m: Matcher): string {
  return m.value + (m.prefix ? '*' : '');
}

export function formatGrant(g: Grant): string {
  return `${SCOPE_PREFIX}${g.action}:${formatMatcher(g.bucket)}:${formatMatcher(g.key)}`;
}

/** The scope claim for a parsed scope, in canonical form (markers first, then grants). */
export function formatScope(s: ParsedScope): string {
  const out: string[] = [];
  if (s.admin) out.push(ADMIN_MARKER);
  if (s.node) out.push(NODE_MARKER);
  for (const g of s.grants) out.push(formatGrant(g));
  return out.join(' ');
}

/** Whether a matcher admits a value (a bucket name, or an already-encoded key). */
export function matches(m: Matcher, value: string): boolean {
  return m.prefix ? value.startsWith(m.value) : value === m.value;
}

/** True for the lone `*` that bucket-level operations require. */
export function isWildcard(m: Matcher): boolean {
  return m.prefix && m.value === '';
}

/** Whether everything `inner` admits, `outer` admits too (exchange narrowing). */
export function matcherContains(outer: Matcher, inner: Matcher): boolean {
  if (!outer.prefix) return !inner.prefix && inner.value === outer.value;
  return inner.value.startsWith(outer.value);
}

export function grantContains(outer: Grant, inner: Grant): boolean {
  return outer.action === inner.action &&
    matcherContains(outer.bucket, inner.bucket) &&
    matcherContains(outer.key, inner.key);
}
