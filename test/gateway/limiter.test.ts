// The Gateway's per-sub ceilings on a clock the test moves: each rate holds one second of itself,
// refills with time, admits one unit of any size when full (a rate, never a size), and is kept per sub; connections count open subscriptions; a spent read budget
// asks the stream to pause for as long as it takes to refill.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayLimiter } from '../../src/gateway/limiter.ts';
import { ServiceError } from '../../src/core/errors.ts';
import { httpStatusOf } from '../../src/api/http-status.ts';

const exhausted = (fn: () => unknown): boolean => {
  try { fn(); return false; } catch (e) { return e instanceof ServiceError && httpStatusOf(e.code) === 429; }
};

test('rps: a second of requests, then 429 until time refills it; subs are apart', () => {
  let now = 1_000_000;
  const l = new GatewayLimiter(() => now);
  for (let i = 0; i < 3; i++) l.admit('alice', { rps: 3 }, 0);
  assert.ok(exhausted(() => l.admit('alice', { rps: 3 }, 0)));
  l.admit('bob', { rps: 3 }, 0);
  now += 334;
  l.admit('alice', { rps: 3 }, 0);
  assert.ok(exhausted(() => l.admit('alice', { rps: 3 }, 0)));
  now += 10_000;
  for (let i = 0; i < 3; i++) l.admit('alice', { rps: 3 }, 0);
  assert.ok(exhausted(() => l.admit('alice', { rps: 3 }, 0)), 'refill stops at one second of the rate');
});

test('write_Bps: declared bodies draw on the budget; a body over the whole budget passes a full one, into debt', () => {
  let now = 0;
  const l = new GatewayLimiter(() => now);
  l.admit('big', { write_Bps: 1000 }, 2500); // a ceiling is a rate, not a size
  assert.ok(exhausted(() => l.admit('big', { write_Bps: 1000 }, 1)), 'in debt: 1500 bytes');
  now += 2400;
  assert.ok(exhausted(() => l.admit('big', { write_Bps: 1000 }, 2500)), 'not yet full again');
  now += 100;
  l.admit('big', { write_Bps: 1000 }, 2500);
  l.admit('a', { write_Bps: 1000 }, 600);
  assert.ok(exhausted(() => l.admit('a', { write_Bps: 1000 }, 600)));
  l.admit('a', { write_Bps: 1000 }, 0); // a request without a body is not a write
  now += 200;
  l.admit('a', { write_Bps: 1000 }, 600);
});

test('read_Bps: served bytes go into debt; the stream pauses until it is repaid, and new requests are 429 meanwhile', () => {
  let now = 0;
  const l = new GatewayLimiter(() => now);
  assert.equal(l.served('r', { read_Bps: 1000 }, 900), 0);
  assert.equal(l.served('r', { read_Bps: 1000 }, 600), 500, '500 bytes of debt at 1000 B/s');
  assert.ok(exhausted(() => l.admit('r', { read_Bps: 1000 }, 0)));
  now += 500;
  l.admit('r', { read_Bps: 1000 }, 0);
  assert.equal(l.served('r', {}, 10_000), 0, 'no ceiling, no pause');
});

test('rps below one: a request every 1/rps seconds, never a permanent refusal', () => {
  let now = 0;
  const l = new GatewayLimiter(() => now);
  l.admit('slow', { rps: 0.5 }, 0);
  let refusal = '';
  try { l.admit('slow', { rps: 0.5 }, 0); } catch (e) { refusal = (e as Error).message; }
  assert.match(refusal, /rps ceiling reached; retry in 2 s/);
  now += 1999;
  assert.ok(exhausted(() => l.admit('slow', { rps: 0.5 }, 0)));
  now += 1;
  l.admit('slow', { rps: 0.5 }, 0);
});

test('write_Bps of a body without a declared length: admitted on a full budget it goes into debt; on a partly spent one it must keep fitting', () => {
  let now = 0;
  const l = new GatewayLimiter(() => now);
  const w = { write_Bps: 100 };
  assert.equal(l.chargeWrite('c', w, 60, undefined), 'debt', 'a full budget: this body may go into debt');
  assert.equal(l.chargeWrite('c', w, 60, undefined), undefined, 'a second body finds the budget spent');
  now += 1200;
  let held = l.chargeWrite('c', w, 50, undefined);
  assert.equal(held, 'debt');
  for (let i = 0; i < 100; i++) held = l.chargeWrite('c', w, 50, held);
  assert.equal(held, 'debt', 'a body admitted on a full budget is never cut (a rate, not a size)');
  assert.equal(l.chargeWrite('c', w, 1, undefined), undefined, 'the next body waits until the debt is repaid');
  now += 51_000;
  assert.equal(l.chargeWrite('c', w, 80, undefined), 'debt');
  now += 300; // 20 + 30 bytes: the budget is partly spent
  let small = l.chargeWrite('c', w, 10, undefined);
  assert.equal(small, 'fits', 'a body that starts on a partly spent budget');
  const other = l.chargeWrite('c', w, 10, undefined);
  assert.equal(other, 'fits', 'a second one alongside, within what is left');
  small = l.chargeWrite('c', w, 25, small);
  assert.equal(small, 'fits');
  assert.equal(l.chargeWrite('c', w, 40, small), undefined, 'past what is left: refused, not into debt (only one body at a time goes into debt)');
  assert.equal(l.chargeWrite('c', {}, 1e9, undefined), 'fits', 'no ceiling');
});

test('0 is no ceiling; new limits on a sub start fresh buckets; idle subs are forgotten past the cap', () => {
  const l = new GatewayLimiter(() => 0, 10);
  for (let i = 0; i < 50; i++) l.admit('z', { rps: 0, write_Bps: 0, read_Bps: 0, connections: 0 }, 100);
  l.admit('n', { rps: 1 }, 0);
  assert.ok(exhausted(() => l.admit('n', { rps: 1 }, 0)));
  l.admit('n', { rps: 2 }, 0);
  for (let i = 0; i < 40; i++) l.admit(`sub-${i}`, { rps: 5 }, 0);
  assert.ok(l.trackedSubs <= 10);
});
