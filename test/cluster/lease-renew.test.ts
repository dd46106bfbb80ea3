// How often a star renews its leases (ClusterService, leaseRenewMs): every LEASE_RENEW_MS for the
// default term, and three times a term for a shorter --lease-ttl-ms, so one renewal may fail or come
// late and the next still lands before the lease (less LEASE_SAFETY_MARGIN_MS) runs out. No PostgreSQL:
// the cadence alone; the cluster suites run it against real stars killed under load.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { leaseRenewMs } from '../../src/cluster/cluster-service.ts';
import { LEASE_RENEW_MS, LEASE_SAFETY_MARGIN_MS, LEASE_TTL_MS } from '../../src/config/limits.ts';

test('leases renew every LEASE_RENEW_MS at the default term, and three times a term under it', () => {
  assert.equal(leaseRenewMs(LEASE_TTL_MS), LEASE_RENEW_MS);
  assert.equal(leaseRenewMs(60_000), LEASE_RENEW_MS, 'a long term renews no less often than the default');
  assert.equal(leaseRenewMs(1500), 500, 'the tests\' 1.5 s term');
  assert.equal(leaseRenewMs(1), 1, 'never a zero interval');
  for (const ttl of [1000, 1500, 2000, LEASE_TTL_MS, 10_000]) {
    // A renewal missed: the one after it still comes before the lease, less the margin, runs out.
    assert.ok(2 * leaseRenewMs(ttl) < ttl - LEASE_SAFETY_MARGIN_MS, `term ${ttl} ms: renewed every ${leaseRenewMs(ttl)} ms`);
  }
});
