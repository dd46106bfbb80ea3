// Flag parsing: durations, origin lists, and one-line refusals for bad values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, durationMs, loadConfig } from '../../src/config/config.ts';

test('durations take ms, s, m and h, and a bare number is milliseconds', () => {
  assert.equal(durationMs('250ms', 'x'), 250);
  assert.equal(durationMs('30s', 'x'), 30_000);
  assert.equal(durationMs('5m', 'x'), 300_000);
  assert.equal(durationMs('1h', 'x'), 3_600_000);
  assert.equal(durationMs('1.5s', 'x'), 1500);
  assert.equal(durationMs('120000', 'x'), 120_000);
  for (const bad of ['', '0', '0s', '-5m', '5 minutes', '5d', 'm']) {
    assert.throws(() => durationMs(bad, 'readplan-ttl'), ConfigError, `"${bad}" is refused`);
  }
});

test('--readplan-ttl defaults to 5 minutes and reads its variable', () => {
  assert.equal(loadConfig([], {}).readplanTtlMs, 300_000);
  assert.equal(loadConfig([], { SVCD_READPLAN_TTL: '90s' }).readplanTtlMs, 90_000);
  assert.equal(loadConfig(['--readplan-ttl', '2m'], { SVCD_READPLAN_TTL: '90s' }).readplanTtlMs, 120_000, 'the flag wins');
});

test('--cors-allowed-origins is a trimmed comma list; empty allows none', () => {
  assert.deepEqual(loadConfig([], {}).corsAllowedOrigins, []);
  assert.deepEqual(loadConfig(['--cors-allowed-origins', ' https://a.example, https://b.example ,'], {}).corsAllowedOrigins, ['https://a.example', 'https://b.example']);
  assert.deepEqual(loadConfig([], { SVCD_CORS_ALLOWED_ORIGINS: '*' }).corsAllowedOrigins, ['*']);
});
