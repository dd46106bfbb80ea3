// atWallClock: a deadline past what one Node timer holds (2^31-1 ms, about 24.8 days) fires at its
// time, not at the bound and not at once (a Node timer given a longer delay fires after 1 ms).
import { test, mock } from 'node:test';
import assert from 'node:assert/strict';
import { TIMER_DELAY_MS_MAX } from '../../src/config/limits.ts';
import { atWallClock } from '../../src/core/wall-timer.ts';

const DAY_MS = 24 * 3600 * 1000;

test('a deadline 30 days out fires at 30 days, past the first timer bound', () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    let now = 1_000_000;
    let fired = 0;
    atWallClock(now + 30 * DAY_MS, () => { fired += 1; }, () => now);
    const step = (ms: number): void => { now += ms; mock.timers.tick(ms); };
    step(1);
    assert.equal(fired, 0, 'not at once');
    step(TIMER_DELAY_MS_MAX);
    assert.equal(fired, 0, 'not at the first bound (24.8 days)');
    step(30 * DAY_MS - TIMER_DELAY_MS_MAX - 2);
    assert.equal(fired, 0, 'not a millisecond early');
    step(1);
    assert.equal(fired, 1, 'at 30 days');
    step(TIMER_DELAY_MS_MAX);
    assert.equal(fired, 1, 'once');
  } finally { mock.timers.reset(); }
});

test('a passed deadline fires on the next turn; a cancelled one never, even after it re-armed; one not cancelled fires', () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    let now = 5_000;
    const fired: string[] = [];
    const step = (ms: number): void => { now += ms; mock.timers.tick(ms); };
    atWallClock(now - 10, () => fired.push('passed'), () => now);
    const cancel = atWallClock(now + 40 * DAY_MS, () => fired.push('cancelled'), () => now);
    atWallClock(now + 40 * DAY_MS, () => fired.push('kept'), () => now);
    assert.deepEqual(fired, [], 'not synchronously');
    step(0);
    assert.deepEqual(fired, ['passed']);
    step(TIMER_DELAY_MS_MAX); // both re-armed once
    cancel();
    step(40 * DAY_MS - TIMER_DELAY_MS_MAX);
    step(TIMER_DELAY_MS_MAX);
    assert.deepEqual(fired, ['passed', 'kept']);
  } finally { mock.timers.reset(); }
});
