// The Gateway's upstream capacity, shared fairly between tenants (issue 18: one read-only tenant's
// 520 event streams took all 512 upstream sockets, and every other tenant's requests hung).
//
// Two pools, each with a per-tenant share:
//   - requests: short exchanges. Up to `socketsMax` run at once, up to `queueMax` more wait for a
//     socket; a tenant holds at most `perTenantMax` of them (in use or waiting);
//   - streams: subscriptions, which hold a socket for as long as they live, so they never queue
//     (a wait would be as long as someone else's stream) and never touch the request pool.
// Past its share a tenant is told 429 (its own problem, Retry-After: 1); past a pool's size every
// caller is told 503 (the Gateway's, convergible). Nobody waits without a bound.

import { ServiceError } from '../protocol/errors.ts';

export interface PoolRule {
  /** Slots in use at once. */
  socketsMax: number;
  /** More that may wait for a slot (0: none wait). */
  queueMax: number;
  /** Named in refusals: 'requests', 'subscriptions'. */
  what: string;
}

/** Releases a slot; idempotent. */
export type Release = () => void;

export class UpstreamPool {
  private total = 0;
  /** Tenants holding nothing are not kept: the map is bounded by the slots in use. */
  private readonly byTenant = new Map<string, number>();

  constructor(private readonly rule: PoolRule) {}

  /** Takes a slot for `tenant`, whose share is `tenantMax`; throws 429 past the share and 503 when
   *  the pool and its queue are full. */
  acquire(tenant: string, tenantMax: number): Release {
    const mine = this.byTenant.get(tenant) ?? 0;
    if (mine >= tenantMax) {
      throw new ServiceError('resource_exhausted', `${this.rule.what} ceiling: ${tenantMax} concurrent ${this.rule.what} per caller at this gateway; retry shortly`);
    }
    if (this.total >= this.rule.socketsMax + this.rule.queueMax) {
      throw new ServiceError('unavailable', `the gateway's upstream ${this.rule.what} are all in use; retry shortly`);
    }
    this.total += 1;
    this.byTenant.set(tenant, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      const left = (this.byTenant.get(tenant) ?? 1) - 1;
      if (left > 0) this.byTenant.set(tenant, left);
      else this.byTenant.delete(tenant);
    };
  }

  get inUse(): number { return this.total; }
  held(tenant: string): number { return this.byTenant.get(tenant) ?? 0; }
  get tenants(): number { return this.byTenant.size; }
}
