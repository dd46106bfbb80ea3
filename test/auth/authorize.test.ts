// The authorization table: grants × operations × addresses, the coverage table exactly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '../../src/core/errors.ts';
import {
  authorize, checkFencingPin, isAuthorized, OPERATIONS, type AuthTarget, type Operation,
} from '../../src/auth/authorize.ts';
import { operatorPrincipal, TRUSTED_PRINCIPAL, type Principal } from '../../src/auth/principal.ts';
import { parseScope } from '../../src/auth/scope.ts';
import { httpStatusOf } from '../../src/api/http-status.ts';

function tokenPrincipal(scope: string, aux: Principal['aux'] = {}): Principal {
  const s = parseScope(scope);
  return { kind: 'token', grants: s.grants, admin: s.admin, node: s.node, expMs: Date.now() + 60_000, aux };
}

const STREAM_OPS = {
  append: ['Append', 'AppendSession', 'Fence'],
  read: ['Read', 'Subscribe', 'CheckTail', 'GetStream', 'ReadPlan'],
  create: ['CreateStream', 'ReconfigureStream'],
  delete: ['DeleteStream'],
  trim: ['Trim'],
} as const satisfies Record<string, readonly Operation[]>;
const BUCKET_OPS = {
  read: ['GetBucket'],
  list: ['ListStreams'],
  create: ['CreateBucket', 'UpdateBucket'],
  delete: ['DeleteBucket'],
} as const satisfies Record<string, readonly Operation[]>;

const ORD_EU: AuthTarget = { bucket: 'orders', key: 'eu/1' };

type Row = [scope: string, op: Operation, target: AuthTarget, allowed: boolean];

const table: Row[] = [];
// Each action covers exactly its operations, at stream level, and nothing else.
for (const [action, ops] of Object.entries(STREAM_OPS)) {
  for (const op of OPERATIONS) {
    if (op === 'ListBuckets' || op === 'SettleStar' || op === 'Admin') continue;
    const covered = (ops as readonly Operation[]).includes(op) ||
      ((BUCKET_OPS as Record<string, readonly Operation[]>)[action] ?? []).includes(op);
    table.push([`svc:${action}:orders:*`, op, ORD_EU, covered]);
  }
}
table.push(
  // exact key, encoded
  ['svc:read:orders:eu%2F1', 'Read', ORD_EU, true],
  ['svc:read:orders:eu%2f1', 'Read', ORD_EU, false], // lowercase hex: not rule 3's encoding, skipped
  ['svc:read:orders:e%75%2F1', 'Read', ORD_EU, false], // an unreserved byte escaped: skipped
  ['svc:read:orders:eu%2*', 'Read', ORD_EU, true], // a prefix that stops inside an escape
  ['svc:read:orders:eu%2*', 'Read', { bucket: 'orders', key: 'eu-1' }, false],
  ['svc:read:orders:eu/1', 'Read', ORD_EU, false], // unencoded: malformed, skipped
  ['svc:read:orders:eu%2F1', 'Read', { bucket: 'orders', key: 'eu/10' }, false],
  ['svc:read:orders:eu%2F', 'Read', ORD_EU, false],
  // key prefix
  ['svc:read:orders:eu%2F*', 'Read', ORD_EU, true],
  ['svc:read:orders:eu*', 'Read', ORD_EU, true],
  ['svc:read:orders:eu%2F*', 'Read', { bucket: 'orders', key: 'us/1' }, false],
  ['svc:read:orders:eu%2F*', 'Read', { bucket: 'orders', key: 'eu' }, false],
  // literal * in a key is %2A; a trailing raw * is the prefix wildcard
  ['svc:read:orders:a%2A', 'Read', { bucket: 'orders', key: 'a*' }, true],
  ['svc:read:orders:a%2A', 'Read', { bucket: 'orders', key: 'ab' }, false],
  ['svc:read:orders:a*', 'Read', { bucket: 'orders', key: 'a*' }, true],
  ['svc:read:orders:%C3%A9*', 'Read', { bucket: 'orders', key: 'été' }, true],
  ['svc:read:orders:%FF', 'Read', { bucket: 'orders', key: new Uint8Array([0xff]) }, true],
  ['svc:read:orders:%00', 'Read', { bucket: 'orders', key: new Uint8Array([0]) }, true],
  // bucket exact and prefix
  ['svc:read:orders:*', 'Read', { bucket: 'orders2', key: 'k' }, false],
  ['svc:read:ord*:*', 'Read', { bucket: 'orders2', key: 'k' }, true],
  ['svc:read:ord*:*', 'Read', { bucket: 'or', key: 'k' }, false],
  ['svc:read:*:*', 'Read', { bucket: 'anything', key: 'k' }, true],
  // bucket-level operations need a lone * key match
  ['svc:read:orders:*', 'GetBucket', { bucket: 'orders' }, true],
  ['svc:read:orders:eu*', 'GetBucket', { bucket: 'orders' }, false],
  ['svc:read:orders:k', 'GetBucket', { bucket: 'orders' }, false],
  ['svc:list:orders:*', 'ListStreams', { bucket: 'orders' }, true],
  ['svc:list:orders:eu*', 'ListStreams', { bucket: 'orders' }, false], // outside the matcher: denied, not filtered
  ['svc:list:orders:*', 'ListStreams', { bucket: 'other' }, false],
  ['svc:list:ord*:*', 'ListStreams', { bucket: 'orders' }, true],
  ['svc:create:*:*', 'CreateBucket', { bucket: 'new' }, true],
  ['svc:create:new:k', 'CreateBucket', { bucket: 'new' }, false],
  ['svc:delete:b:*', 'DeleteBucket', { bucket: 'b' }, true],
  ['svc:delete:b:k*', 'DeleteBucket', { bucket: 'b' }, false],
  // ListBuckets needs *:*
  ['svc:list:*:*', 'ListBuckets', {}, true],
  ['svc:list:orders:*', 'ListBuckets', {}, false],
  ['svc:list:o*:*', 'ListBuckets', {}, false],
  ['svc:list:*:k*', 'ListBuckets', {}, false],
  ['svc:read:*:*', 'ListBuckets', {}, false],
  // trim never bundled
  ['svc:append:*:* svc:read:*:* svc:create:*:* svc:delete:*:* svc:list:*:*', 'Trim', ORD_EU, false],
  ['svc:trim:orders:eu*', 'Trim', ORD_EU, true],
  ['svc:trim:*:*', 'Append', ORD_EU, false],
  // union: any one covering grant suffices
  ['svc:read:x:* svc:append:orders:eu%2F1', 'Append', ORD_EU, true],
  // markers
  ['svc:admin', 'Append', ORD_EU, true],
  ['svc:admin', 'ListBuckets', {}, true],
  ['svc:admin', 'Trim', ORD_EU, true],
  ['svc:admin', 'Admin', {}, true],
  ['svc:admin', 'SettleStar', {}, true],
  ['svc:node', 'SettleStar', {}, true],
  ['svc:node', 'Read', ORD_EU, false],
  ['svc:node', 'Append', ORD_EU, false],
  ['svc:node', 'Admin', {}, false],
  ['svc:node', 'GetBucket', { bucket: 'orders' }, false],
  ['svc:read:*:* svc:append:*:* svc:list:*:*', 'Admin', {}, false],
  ['svc:read:*:*', 'SettleStar', {}, false],
  // nothing at all
  ['', 'Read', ORD_EU, false],
  ['openid profile', 'Read', ORD_EU, false],
  // a route that forgot its address fails closed
  ['svc:read:*:*', 'Read', { bucket: 'orders' }, false],
  ['svc:read:*:*', 'GetBucket', {}, false],
);

test('authorization table', () => {
  for (const [scope, op, target, allowed] of table) {
    const got = isAuthorized(tokenPrincipal(scope), op, target);
    assert.equal(got, allowed, `${scope || '(empty)'} ${op} ${JSON.stringify(target, (_k, v: unknown) => v instanceof Uint8Array ? [...v] : v)}`);
  }
});

test('denial is permission_denied and names no address', () => {
  assert.throws(() => authorize(tokenPrincipal('svc:read:orders:*'), 'Append', { bucket: 'secret-bucket', key: 'secret-key' }),
    (err: unknown) => err instanceof ServiceError && err.code === 'permission_denied' && httpStatusOf(err.code) === 403 &&
      !err.message.includes('secret'));
});

test('trusted principals pass every check', () => {
  for (const p of [TRUSTED_PRINCIPAL, operatorPrincipal('ops')]) {
    for (const op of OPERATIONS) assert.ok(isAuthorized(p, op, {}), op);
  }
});

test('fencing pin: pinned credential must present exactly its token on append, session and fence', () => {
  const pinned = tokenPrincipal('svc:append:*:*', { fencing_token: 'f1' });
  checkFencingPin(pinned, 'Append', 'f1');
  checkFencingPin(pinned, 'Read', undefined);
  for (const op of ['Append', 'AppendSession', 'Fence'] as const) {
    for (const presented of [undefined, '', 'f2']) {
      assert.throws(() => checkFencingPin(pinned, op, presented), (e: unknown) => e instanceof ServiceError && e.code === 'permission_denied');
    }
  }
  checkFencingPin(tokenPrincipal('svc:append:*:*'), 'Append', undefined);
});
