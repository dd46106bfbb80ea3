// Per-sub ceilings from the token's svc_aux.limits (spec: Claims, Limits), enforced per Gateway
// instance: `rps` (every request), `write_Bps` (request-body bytes: a declared length up front, a
// chunked body as its bytes arrive) and `read_Bps` (served bytes). Each rate is a token bucket
// holding at most one second of its rate. A full bucket admits one unit of any size, going into debt
// for the rest, so a ceiling is a rate and never a size: `rps` 0.5 admits a request every 2 s, and a
// 5 kB body under `write_Bps` 3000 passes, the next one 1.7 s later. Past a ceiling a request is 429
// naming how long until it fits; an event stream whose byte budget is spent pauses until it refills
// rather than being dropped (spec: Events, rule 8).
// `connections` (concurrent subscriptions) is a share of the upstream stream pool: capacity.ts.

import { GATEWAY_SUBS_TRACKED_MAX } from '../config/limits.ts';
import { ServiceError } from '../protocol/errors.ts';
import type { TokenLimits } from '../auth/index.ts';

class TokenBucket {
  private tokens: number;
  private at: number;

  constructor(private readonly ratePerS: number, nowMs: number) {
    this.tokens = ratePerS;
    this.at = nowMs;
  }

  private refill(nowMs: number): void {
    this.tokens = Math.min(this.ratePerS, this.tokens + ((nowMs - this.at) * this.ratePerS) / 1000);
    this.at = nowMs;
  }

  /** Takes `n` when there are that many, or when the bucket is full (one second of the rate) and `n`
   *  is more than it holds: then into debt. False (nothing taken) otherwise. */
  tryTake(n: number, nowMs: number): boolean {
    this.refill(nowMs);
    if (this.tokens < Math.min(n, this.ratePerS)) return false;
    this.tokens -= n;
    return true;
  }

  /** Seconds until `n` would be taken (whole seconds, at least 1), for the refusal's words. */
  waitS(n: number): number {
    return Math.max(1, Math.ceil((Math.min(n, this.ratePerS) - this.tokens) / this.ratePerS));
  }

  /** The bucket holds one second of its rate. */
  full(nowMs: number): boolean {
    this.refill(nowMs);
    return this.tokens >= this.ratePerS;
  }

  /** Takes `n` even into debt (bytes already served). */
  charge(n: number, nowMs: number): void {
    this.refill(nowMs);
    this.tokens -= n;
  }

  /** Milliseconds until the bucket is out of debt (0 when it is not in debt). */
  debtMs(nowMs: number): number {
    this.refill(nowMs);
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens * 1000) / this.ratePerS);
  }
}

/** How a body without a declared length is being charged (GatewayLimiter.chargeWrite). */
export type ChunkedBody = 'debt' | 'fits';

interface SubState {
  rps?: TokenBucket;
  write?: TokenBucket;
  read?: TokenBucket;
  /** The rates the buckets were made for: a new token with other limits starts fresh buckets. */
  key: string;
}

const exhausted = (why: string): ServiceError => new ServiceError('resource_exhausted', why);

export class GatewayLimiter {
  private readonly subs = new Map<string, SubState>();

  constructor(private readonly nowMs: () => number, private readonly subsMax = GATEWAY_SUBS_TRACKED_MAX) {}

  private state(sub: string, limits: TokenLimits): SubState {
    const key = `${limits.rps ?? ''}/${limits.write_Bps ?? ''}/${limits.read_Bps ?? ''}`;
    let s = this.subs.get(sub);
    if (s) {
      this.subs.delete(sub); // re-inserted below: the map's order is least recently used first
    } else {
      if (this.subs.size >= this.subsMax) this.evictIdle();
      s = { key: '' };
    }
    if (s.key !== key) {
      const now = this.nowMs();
      s.key = key;
      // A ceiling of 0 (or none) is no ceiling, as 0 is unbounded for every bound of the spec.
      s.rps = limits.rps ? new TokenBucket(limits.rps, now) : undefined;
      s.write = limits.write_Bps ? new TokenBucket(limits.write_Bps, now) : undefined;
      s.read = limits.read_Bps ? new TokenBucket(limits.read_Bps, now) : undefined;
    }
    this.subs.set(sub, s);
    return s;
  }

  /** Forgets the least recently seen subs, down to 90 % of the cap: a forgotten sub starts again
   *  with full buckets, which is at most one second of its rates. */
  private evictIdle(): void {
    const target = Math.floor(this.subsMax * 0.9);
    for (const sub of this.subs.keys()) {
      if (this.subs.size <= target) break;
      this.subs.delete(sub);
    }
  }

  /** Admits one request of `declaredBodyBytes`, or throws 429 naming the ceiling it hit. */
  admit(sub: string, limits: TokenLimits, declaredBodyBytes: number): void {
    const s = this.state(sub, limits);
    const now = this.nowMs();
    if (s.read && s.read.debtMs(now) > 0) throw exhausted('read_Bps ceiling reached; retry shortly');
    if (s.rps && !s.rps.tryTake(1, now)) throw exhausted(`rps ceiling reached; retry in ${s.rps.waitS(1)} s`);
    if (s.write && declaredBodyBytes > 0 && !s.write.tryTake(declaredBodyBytes, now)) {
      throw exhausted(`write_Bps ceiling: a ${declaredBodyBytes}-byte body fits in ${s.write.waitS(declaredBodyBytes)} s; retry then`);
    }
  }

  /** Charges `bytes` of a body that declared no length, as they arrive; `held` is what the last call
   *  answered for this body (undefined before its first bytes). A body whose first bytes find the
   *  budget full is admitted as a declared body of any size is: all it sends goes into debt ('debt').
   *  One whose first bytes find it partly spent must keep fitting what is left ('fits'), so only one
   *  body at a time can go into debt, chunked or not. Undefined (nothing taken) refuses the body. */
  chargeWrite(sub: string, limits: TokenLimits, bytes: number, held: ChunkedBody | undefined): ChunkedBody | undefined {
    if (!limits.write_Bps) return 'fits';
    const bucket = this.state(sub, limits).write!;
    const now = this.nowMs();
    if (held === 'debt' || (held === undefined && bucket.full(now))) {
      bucket.charge(bytes, now);
      return 'debt';
    }
    return bucket.tryTake(bytes, now) ? 'fits' : undefined;
  }

  /** Counts `bytes` served; answers how long to pause before serving more (0: go on). */
  served(sub: string, limits: TokenLimits, bytes: number): number {
    if (!limits.read_Bps) return 0;
    const s = this.state(sub, limits);
    const now = this.nowMs();
    s.read!.charge(bytes, now);
    return s.read!.debtMs(now);
  }

  get trackedSubs(): number { return this.subs.size; }
}
