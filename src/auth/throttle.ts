// Throttles failed credential checks (the api-key exchange): each key (a key id, a client address)
// holds a token bucket of `burst` failures refilling at `perS` a second. A failure takes one token;
// while a key has less than one, every attempt under it is refused with 429 before the secret is
// even looked at, so a guesser gets `perS` guesses a second, right or wrong. Successes take nothing,
// so a caller that holds its secret is never slowed by its own traffic.
//
// Unknown key ids are tracked exactly like known ones: throttling only real ones would tell a
// guesser which key ids exist, which the exchange must not (spec: unknown id and wrong secret are
// indistinguishable). The map is bounded; the least recently failed keys are forgotten first.

import { ServiceError } from '../protocol/errors.ts';

export interface ThrottleRule {
  /** Failures allowed in a burst. */
  burst: number;
  /** Failures a second the allowance refills with (at least 1, so `Retry-After: 1` holds). */
  perS: number;
  /** Keys remembered at most. */
  keysMax: number;
  /** Named in the 429's message: 'key id', 'client address'. */
  what: string;
}

interface Bucket {
  tokens: number;
  atMs: number;
}

export class FailureThrottle {
  /** Insertion order is least recently failed first (a failure re-inserts its key). */
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly rule: ThrottleRule, private readonly nowMs: () => number = Date.now) {
    if (!(rule.burst >= 1 && rule.perS > 0 && rule.keysMax >= 1)) throw new Error('FailureThrottle: burst and keysMax must be at least 1, perS positive');
  }

  private tokens(b: Bucket, now: number): number {
    return Math.min(this.rule.burst, b.tokens + ((now - b.atMs) * this.rule.perS) / 1000);
  }

  /** Milliseconds until an attempt under `key` is admitted; 0 when it is admitted now. */
  waitMs(key: string): number {
    const b = this.buckets.get(key);
    if (b === undefined) return 0;
    const now = this.nowMs();
    const t = this.tokens(b, now);
    return t >= 1 ? 0 : Math.ceil(((1 - t) * 1000) / this.rule.perS);
  }

  /** Throws ResourceExhausted (429) while `key` has spent its failures. */
  check(key: string): void {
    const ms = this.waitMs(key);
    if (ms > 0) {
      throw new ServiceError('resource_exhausted', `too many failed token exchanges from this ${this.rule.what}; retry in ${Math.ceil(ms / 1000)} s`);
    }
  }

  /** Counts one failed attempt under `key`. */
  failed(key: string): void {
    const now = this.nowMs();
    const b = this.buckets.get(key);
    const tokens = b === undefined ? this.rule.burst : this.tokens(b, now);
    if (b !== undefined) this.buckets.delete(key);
    else if (this.buckets.size >= this.rule.keysMax) this.forgetOldest(now);
    this.buckets.set(key, { tokens: tokens - 1, atMs: now });
  }

  /** Drops refilled buckets (they are what an absent key means), then the least recently failed,
   *  down to 90 % of the bound, so the scan runs once per tenth of the bound, not per failure. */
  private forgetOldest(now: number): void {
    for (const [key, b] of this.buckets) {
      if (this.tokens(b, now) >= this.rule.burst) this.buckets.delete(key);
    }
    const target = Math.floor(this.rule.keysMax * 0.9);
    while (this.buckets.size > target) {
      const oldest = this.buckets.keys().next();
      if (oldest.done) break;
      this.buckets.delete(oldest.value);
    }
  }

  get trackedKeys(): number { return this.buckets.size; }
}
