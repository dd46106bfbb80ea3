// A wall-clock deadline (a credential's exp) as a timer. Node timers hold at most TIMER_DELAY_MS_MAX
// (about 24.8 days; a longer delay fires after 1 ms), so a later time re-arms until it is in reach.

import { TIMER_DELAY_MS_MAX } from '../config/limits.ts';

/** Runs `fn` at wall-clock `atMs` (at once, on the next turn, when that has passed); returns the
 *  cancel. `nowMs` is the clock it reads, Date.now unless a test gives its own. */
export function atWallClock(atMs: number, fn: () => void, nowMs: () => number = Date.now): () => void {
  let timer: ReturnType<typeof setTimeout>;
  const arm = (): void => {
    const left = atMs - nowMs();
    timer = left > TIMER_DELAY_MS_MAX ? setTimeout(arm, TIMER_DELAY_MS_MAX) : setTimeout(fn, Math.max(0, left));
  };
  arm();
  return () => clearTimeout(timer);
}
