// The Gateway's upstream pools (capacity.ts): a share per tenant (429 past it), the pool's size and
// its bounded queue (503 past them), releases that free exactly one slot once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UpstreamPool } from '../../src/gateway/capacity.ts';
import { ServiceError } from '../../src/core/errors.ts';
import { httpStatusOf } from '../../src/api/http-status.ts';

const statusOf = (fn: () => unknown): number => {
  try { fn(); return 0; } catch (e) { return e instanceof ServiceError ? httpStatusOf(e.code) : -1; }
};

test('a tenant past its share is 429; the others are not touched', () => {
  const pool = new UpstreamPool({ socketsMax: 10, queueMax: 0, what: 'subscriptions' });
  const held = [pool.acquire('a', 3), pool.acquire('a', 3), pool.acquire('a', 3)];
  assert.equal(statusOf(() => pool.acquire('a', 3)), 429);
  assert.match((() => { try { pool.acquire('a', 3); } catch (e) { return (e as Error).message; } return ''; })(), /subscriptions ceiling: 3 concurrent subscriptions per caller/);
  pool.acquire('b', 3);
  held[0]();
  held[0]();
  pool.acquire('a', 3);
  assert.equal(statusOf(() => pool.acquire('a', 3)), 429, 'a second release of one slot frees nothing');
  assert.equal(pool.held('a'), 3);
});

test('past the pool and its queue every caller is 503; idle tenants are not kept', () => {
  const pool = new UpstreamPool({ socketsMax: 2, queueMax: 1, what: 'requests' });
  const r = [pool.acquire('a', 10), pool.acquire('b', 10), pool.acquire('c', 10)];
  assert.equal(statusOf(() => pool.acquire('d', 10)), 503);
  for (const release of r) release();
  assert.equal(pool.inUse, 0);
  assert.equal(pool.tenants, 0);
});
