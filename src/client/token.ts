// Tokens from the api-key exchange, refreshed before they expire. `ExchangeTokenSource.provider` is
// a TokenProvider for SvcClient: it hands out the cached token until `refreshBeforeExpMs` before its
// exp, then exchanges again; `refresh: true` (a 401, an auth-expired subscription) forces a new one.
// Concurrent callers share one exchange. Browser-safe.

import type { ExchangeRequest, SvcClient } from './http/client.ts';
import type { TokenProvider } from './http/transport.ts';
import type { ExchangedToken } from './types.ts';

/** Refresh this long before exp by default: far more than one request's deadline... */
export const REFRESH_BEFORE_EXP_MS_DEFAULT = 60_000;
/** ...but never more than this share of the token's lifetime, so short-lived tokens are still used. */
const REFRESH_LIFETIME_SHARE_MAX = 0.5;

export interface TokenSourceOptions extends Omit<ExchangeRequest, 'signal'> {
  refreshBeforeExpMs?: number;
  /** The clock (ms since the epoch); tests pass their own. */
  now?: () => number;
}

export class ExchangeTokenSource {
  /** Exchanges made so far. */
  exchanges = 0;
  private current: (ExchangedToken & { refreshAtMs: number }) | undefined;
  private inflight: Promise<string> | undefined;
  private readonly now: () => number;

  /** `exchanger` is a client pointed at the server (it needs no token itself). */
  constructor(private readonly exchanger: Pick<SvcClient, 'exchangeToken'>, private readonly opts: TokenSourceOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** The token to use now. */
  async token(refresh = false): Promise<string> {
    const c = this.current;
    if (!refresh && c && this.now() < c.refreshAtMs) return c.token;
    this.inflight ??= this.exchange().finally(() => { this.inflight = undefined; });
    return await this.inflight;
  }

  /** The expiry of the current token, when one is held. */
  get expiresAtMs(): number | undefined {
    return this.current?.expires_at_unix_ms;
  }

  readonly provider: TokenProvider = ({ refresh }) => this.token(refresh);

  private async exchange(): Promise<string> {
    const issuedAt = this.now();
    const t = await this.exchanger.exchangeToken(this.opts);
    this.exchanges++;
    const lifetime = Math.max(0, t.expires_at_unix_ms - issuedAt);
    const before = Math.min(this.opts.refreshBeforeExpMs ?? REFRESH_BEFORE_EXP_MS_DEFAULT, lifetime * REFRESH_LIFETIME_SHARE_MAX);
    this.current = { ...t, refreshAtMs: t.expires_at_unix_ms - before };
    return t.token;
  }
}
