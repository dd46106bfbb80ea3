// The one authorization function. Every route of every surface (HTTP, gRPC data and admin planes,
// the peer verb SettleStar) names its Operation and the address it asks about, and this decides,
// before anything resolves the address: a denial therefore never reveals whether a stream exists.
//
// Coverage is the spec's table exactly. One choice the table leaves open: ReconfigureStream (PATCH)
// needs `create`, because in S2 reconfiguring is a create-family write (it rewrites the same config
// CreateStream sets, and CreateBucket/UpdateBucket already share `create`); `append` would let a
// producer change retention, and `delete`/`trim` are destructive-only and never bundled.

import { ServiceError } from '../protocol/errors.ts';
import type { Principal } from './principal.ts';
import { encodeKeyForMatch, isWildcard, matches, type Action, type Grant } from './scope.ts';

export type Operation =
  | 'Append' | 'AppendSession' | 'Fence'
  | 'Read' | 'Subscribe' | 'CheckTail' | 'GetStream' | 'GetBucket' | 'ReadPlan'
  | 'ListStreams' | 'ListBuckets'
  | 'CreateStream' | 'CreateBucket' | 'UpdateBucket' | 'ReconfigureStream'
  | 'DeleteStream' | 'DeleteBucket'
  | 'Trim'
  | 'SettleStar'
  | 'Admin';

/**
 * What an operation asks of a grant. 'stream': bucket and key must match. 'bucket': the bucket must
 * match and the key match must be a lone `*`. 'all': bucket and key both a lone `*` (ListBuckets).
 * 'marker': only markers decide (SettleStar, the admin plane).
 */
type Level = 'stream' | 'bucket' | 'all' | 'marker';

interface Rule {
  readonly action?: Action;
  readonly level: Level;
  /** svc:node suffices (SettleStar only). */
  readonly nodeOk?: boolean;
}

export const OPERATION_RULES: Readonly<Record<Operation, Rule>> = {
  Append: { action: 'append', level: 'stream' },
  AppendSession: { action: 'append', level: 'stream' },
  Fence: { action: 'append', level: 'stream' },
  Read: { action: 'read', level: 'stream' },
  Subscribe: { action: 'read', level: 'stream' },
  CheckTail: { action: 'read', level: 'stream' },
  GetStream: { action: 'read', level: 'stream' },
  ReadPlan: { action: 'read', level: 'stream' },
  GetBucket: { action: 'read', level: 'bucket' },
  ListStreams: { action: 'list', level: 'bucket' },
  ListBuckets: { action: 'list', level: 'all' },
  CreateStream: { action: 'create', level: 'stream' },
  ReconfigureStream: { action: 'create', level: 'stream' },
  CreateBucket: { action: 'create', level: 'bucket' },
  UpdateBucket: { action: 'create', level: 'bucket' },
  DeleteStream: { action: 'delete', level: 'stream' },
  DeleteBucket: { action: 'delete', level: 'bucket' },
  Trim: { action: 'trim', level: 'stream' },
  SettleStar: { level: 'marker', nodeOk: true },
  Admin: { level: 'marker' },
};

export const OPERATIONS = Object.keys(OPERATION_RULES) as readonly Operation[];

/** The address an operation asks about. `key` may be raw bytes when it is not UTF-8. */
export interface AuthTarget {
  bucket?: string;
  key?: string | Uint8Array;
}

function deny(op: Operation, why: string): ServiceError {
  // The message names the operation and the missing grant, never the address: denial must not
  // echo back anything that could serve as an existence oracle.
  return new ServiceError('permission_denied', `permission denied: ${op} ${why}`);
}

function covers(grant: Grant, rule: Rule, bucket: string | undefined, encodedKey: string | undefined): boolean {
  if (grant.action !== rule.action) return false;
  switch (rule.level) {
    case 'all':
      return isWildcard(grant.bucket) && isWildcard(grant.key);
    case 'bucket':
      return bucket !== undefined && isWildcard(grant.key) && matches(grant.bucket, bucket);
    case 'stream':
      return bucket !== undefined && encodedKey !== undefined &&
        matches(grant.bucket, bucket) && matches(grant.key, encodedKey);
    case 'marker':
      return false;
  }
}

/**
 * Allow or throw ServiceError('permission_denied'). Trusted principals pass everything; `svc:admin`
 * passes everything; `svc:node` passes SettleStar and nothing else; otherwise a resource grant must
 * cover the operation at its level. Grants are a union with no deny statements.
 */
export function authorize(principal: Principal, op: Operation, target: AuthTarget = {}): void {
  if (principal.kind === 'anonymous-trusted') return;
  if (principal.admin) return;
  const rule = OPERATION_RULES[op];
  if (rule.level === 'marker') {
    if (rule.nodeOk && principal.node) return;
    throw deny(op, rule.nodeOk ? 'needs svc:admin or svc:node' : 'needs svc:admin');
  }
  if ((rule.level === 'stream' || rule.level === 'bucket') && !target.bucket) {
    // A route that forgot its address fails closed rather than matching nothing-as-everything.
    throw deny(op, 'has no bucket to authorize against');
  }
  if (rule.level === 'stream' && target.key === undefined) throw deny(op, 'has no key to authorize against');
  const encodedKey = target.key === undefined ? undefined : encodeKeyForMatch(target.key);
  for (const grant of principal.grants) {
    if (covers(grant, rule, target.bucket, encodedKey)) return;
  }
  const needs =
    rule.level === 'all' ? `needs svc:${rule.action}:*:*` :
    rule.level === 'bucket' ? `needs svc:${rule.action} on the bucket with key match '*'` :
    `needs a covering svc:${rule.action} grant`;
  throw deny(op, needs);
}

/** authorize() as a boolean, for callers that branch (the dashboard, tests). */
export function isAuthorized(principal: Principal, op: Operation, target: AuthTarget = {}): boolean {
  try {
    authorize(principal, op, target);
    return true;
  } catch (err) {
    if (err instanceof ServiceError && err.code === 'permission_denied') return false;
    throw err;
  }
}

/** Operations bound by a credential's svc_aux.fencing_token pin. */
const PINNED_OPERATIONS: ReadonlySet<Operation> = new Set(['Append', 'AppendSession', 'Fence']);

/**
 * The svc_aux.fencing_token pin: a credential carrying one may append, open a session or fence only
 * while presenting exactly that token. Called once the request's fencing token is known (after the
 * body is parsed), apart from authorize(), which sees only the address. A mismatch is a credential
 * limit, so it is 403, not the 412 that would echo the stream's installed token.
 */
export function checkFencingPin(principal: Principal, op: Operation, presented: string | undefined): void {
  const pinned = principal.aux.fencing_token;
  if (pinned === undefined || !PINNED_OPERATIONS.has(op)) return;
  if ((presented ?? '') !== pinned) {
    throw new ServiceError('permission_denied', `permission denied: ${op} must present the credential's pinned fencing token`);
  }
}
