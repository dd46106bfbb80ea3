// Backoff between retries: exponential with full jitter, capped, honouring a server's Retry-After,
// and a sleep that an AbortSignal ends early. Browser-safe.

import { SvcError } from './errors.ts';

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  attemptsMax: number;
  /** First backoff ceiling. */
  backoffMsMin: number;
  /** Largest backoff. */
  backoffMsMax: number;
}

export const DEFAULT_RETRY: Readonly<RetryPolicy> = { attemptsMax: 6, backoffMsMin: 50, backoffMsMax: 2_000 };

/** How long to wait before attempt number `attempt` + 1 (attempt counts from 1). */
export function backoffMs(policy: RetryPolicy, attempt: number, retryAfterMs?: number): number {
  const ceiling = Math.min(policy.backoffMsMax, policy.backoffMsMin * 2 ** Math.min(attempt - 1, 20));
  const jittered = ceiling / 2 + Math.random() * (ceiling / 2);
  return Math.max(jittered, Math.min(retryAfterMs ?? 0, policy.backoffMsMax));
}

export function abortError(signal: AbortSignal): SvcError {
  return new SvcError('aborted', 'cancelled by the caller', { cause: signal.reason });
}

/** Resolves after `ms`, or rejects with an `aborted` SvcError as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) { reject(abortError(signal)); return; }
    const onAbort = (): void => { clearTimeout(timer); reject(abortError(signal!)); };
    const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
