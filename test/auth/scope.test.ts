// The scope grammar: parsing, canonical forms, the 64-token rule, and key percent-encoding.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '../../src/core/errors.ts';
import {
  encodeKeyForMatch, formatGrant, formatScope, grantContains, parseScope, parseStoredScope,
} from '../../src/auth/scope.ts';

test('encodeKeyForMatch: unreserved bytes stay, everything else is uppercase %XX', () => {
  assert.equal(encodeKeyForMatch('orders/eu'), 'orders%2Feu');
  assert.equal(encodeKeyForMatch('a*b'), 'a%2Ab');
  assert.equal(encodeKeyForMatch('AZaz09-._~'), 'AZaz09-._~');
  assert.equal(encodeKeyForMatch('a b:c%'), 'a%20b%3Ac%25');
  assert.equal(encodeKeyForMatch('é'), '%C3%A9'); // strings are UTF-8
  assert.equal(encodeKeyForMatch(new Uint8Array([0x00, 0xff, 0x41])), '%00%FFA');
  assert.equal(encodeKeyForMatch(''), '');
});

test('parseScope: grants, markers, non-svc entries ignored', () => {
  const s = parseScope('openid svc:admin profile svc:read:orders:eu%2F* svc:node  svc:trim:b*:*');
  assert.equal(s.admin, true);
  assert.equal(s.node, true);
  assert.deepEqual(s.grants.map(formatGrant), ['svc:read:orders:eu%2F*', 'svc:trim:b*:*']);
  assert.deepEqual(s.grants[0], {
    action: 'read', bucket: { value: 'orders', prefix: false }, key: { value: 'eu%2F', prefix: true },
  });
});

test('parseScope: malformed svc: tokens are skipped and reported, never fatal', () => {
  const skipped: string[] = [];
  const s = parseScope([
    'svc:read:b:k', // good
    'svc:write:b:k', // unknown action
    'svc:read:b', // too few fields
    'svc:read:b:k:extra', // too many
    'svc:read::k', // empty bucket
    'svc:read:b:', // empty key
    'svc:read:b*x:k', // * inside bucket
    'svc:read:b:a*b', // raw * inside key
    'svc:read:b:a/b', // unencoded slash
    'svc:read:b:%2', // truncated escape
    'svc:read:b:%ZZ', // bad hex
    'svc:', 'svc:Admin', 'svc:nodes',
  ].join(' '), (token) => skipped.push(token));
  assert.equal(s.grants.length, 1);
  assert.equal(s.admin, false);
  assert.equal(s.node, false);
  assert.equal(skipped.length, 13);
});

test('parseScope: a key match must be rule 3\'s encoding (uppercase hex, unreserved bytes plain); a prefix may stop inside an escape', () => {
  const skipped: string[] = [];
  const s = parseScope('svc:read:b:eu%2Feu svc:read:b:A%2A* svc:read:b:a%2* svc:read:b:a%* svc:read:b:eu%2feu svc:read:b:%41 svc:read:b:%7E svc:read:b:a%2 svc:read:b:a%2f*', (t) => skipped.push(t));
  assert.deepEqual(s.grants.map(formatGrant), ['svc:read:b:eu%2Feu', 'svc:read:b:A%2A*', 'svc:read:b:a%2*', 'svc:read:b:a%*']);
  assert.deepEqual(skipped, ['svc:read:b:eu%2feu', 'svc:read:b:%41', 'svc:read:b:%7E', 'svc:read:b:a%2', 'svc:read:b:a%2f*']);
});

test('parseScope: duplicates collapse', () => {
  assert.equal(parseScope('svc:read:b:k svc:read:b:k').grants.length, 1);
});

test('parseScope: 64 svc: tokens pass, 65 reject the credential (malformed and markers count)', () => {
  const tokens = (n: number) => Array.from({ length: n }, (_, i) => `svc:read:b${i}:*`);
  assert.equal(parseScope(tokens(64).join(' ')).grants.length, 64);
  // non-svc entries do not count
  assert.equal(parseScope([...tokens(64), ...Array.from({ length: 100 }, (_, i) => `x${i}`)].join(' ')).grants.length, 64);
  for (const extra of ['svc:read:b65:*', 'svc:admin', 'svc:bogus']) {
    assert.throws(() => parseScope([...tokens(64), extra].join(' ')), (err: unknown) =>
      err instanceof ServiceError && err.code === 'unauthenticated');
  }
});

test('parseStoredScope skips malformed tokens, reporting them, and refuses oversize scopes as InvalidArgument', () => {
  const skipped: string[] = [];
  const p = parseStoredScope('svc:read:b:k svc:nope', (token) => skipped.push(token));
  assert.deepEqual([p.grants.length, skipped], [1, ['svc:nope']]);
  const big = Array.from({ length: 65 }, (_, i) => `svc:read:b${i}:*`).join(' ');
  assert.throws(() => parseStoredScope(big), (e: unknown) => e instanceof ServiceError && e.code === 'invalid_argument');
  assert.equal(parseStoredScope('svc:admin').admin, true);
});

test('formatScope round-trips', () => {
  const text = 'svc:admin svc:node svc:append:b:k svc:list:*:*';
  assert.equal(formatScope(parseScope(text)), text);
});

test('grantContains: narrowing only shrinks', () => {
  const g = (t: string) => parseScope(t).grants[0];
  assert.ok(grantContains(g('svc:read:*:*'), g('svc:read:b:k')));
  assert.ok(grantContains(g('svc:read:or*:*'), g('svc:read:orders:eu*')));
  assert.ok(grantContains(g('svc:read:b:eu*'), g('svc:read:b:eu%2Fx')));
  assert.ok(grantContains(g('svc:read:b:k'), g('svc:read:b:k')));
  assert.ok(!grantContains(g('svc:read:b:k'), g('svc:read:b:k*')));
  assert.ok(!grantContains(g('svc:read:b:eu*'), g('svc:read:b:e*')));
  assert.ok(!grantContains(g('svc:read:b*:*'), g('svc:read:*:*')));
  assert.ok(!grantContains(g('svc:read:b:*'), g('svc:append:b:k')));
});
