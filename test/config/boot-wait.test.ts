// waitAtBoot: a start-time check tries a temporary failure again until its bound, and gives any other
// failure, and the last temporary one, back at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { waitAtBoot } from '../../src/config/boot-error.ts';

class Away extends Error {}
class No extends Error {}
const temporary = (err: unknown): boolean => err instanceof Away;
const bounds = { waitMs: 200, retryMs: 20 };

test('a temporary failure is tried again, and the check passes once it does; onWait is told once', async () => {
  let tries = 0;
  const told: unknown[] = [];
  const got = await waitAtBoot(async () => { if (++tries < 4) throw new Away(`try ${tries}`); return 'up'; }, temporary, bounds, (err) => told.push(err));
  assert.equal(got, 'up');
  assert.equal(tries, 4);
  assert.equal(told.length, 1);
  assert.equal((told[0] as Error).message, 'try 1');
});

test('a failure that is not temporary is thrown at the first try', async () => {
  let tries = 0;
  await assert.rejects(waitAtBoot(async () => { tries++; throw new No('no'); }, temporary, bounds), No);
  assert.equal(tries, 1);
});

test('a temporary failure that outlasts the bound is thrown, after more than one try', async () => {
  let tries = 0;
  await assert.rejects(waitAtBoot(async () => { tries++; throw new Away('still away'); }, temporary, bounds), /still away/);
  assert.ok(tries > 1 && tries <= bounds.waitMs / bounds.retryMs + 1, `tries ${tries}`);
});
