// Flag parsing: durations, origin lists, and one-line refusals for bad values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, durationMs, loadConfig } from '../../src/config/config.ts';
import { LEASE_TTL_MS_MIN } from '../../src/config/limits.ts';

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

test('refused at parse: --ds-bucket api in any case, --lease-ttl-ms 0, an empty --data-dir, a port that is empty or not decimal; --audit-scrub-interval 0 means once', () => {
  for (const args of [['--ds-bucket', 'api'], ['--ds-bucket', 'API'], ['--lease-ttl-ms', '0'], ['--data-dir', ''], ['--data-dir', ' '],
    ['--listen', '127.0.0.1:'], ['--listen', '127.0.0.1:0x1f90'], ['--metrics-listen', '127.0.0.1:1e3'], ['--grpc-listen', ':+80']]) {
    assert.throws(() => loadConfig(args, {}), ConfigError, args.join(' '));
  }
  assert.throws(() => loadConfig([], { SVCD_DS_BUCKET: 'Api' }), /api is reserved/);
  assert.equal(loadConfig(['--listen', '127.0.0.1:0'], {}).listen?.port, 0, 'port 0 still picks a free one');
  assert.equal(loadConfig(['--audit-scrub-interval', '0'], {}).auditScrubMs, 0);
  assert.equal(loadConfig(['--audit-scrub-interval', '0m'], {}).auditScrubMs, 0);
  assert.throws(() => loadConfig(['--audit-scrub-interval', '-1'], {}), /or 0: each segment is verified once/);
});

test('--lease-ttl-ms is at least LEASE_TTL_MS_MIN: a shorter lease would renew every few milliseconds, or never let its leader serve', () => {
  assert.equal(loadConfig(['--lease-ttl-ms', String(LEASE_TTL_MS_MIN)], {}).leaseTtlMs, LEASE_TTL_MS_MIN);
  for (const v of [String(LEASE_TTL_MS_MIN - 1), '250', '3']) {
    assert.throws(() => loadConfig(['--lease-ttl-ms', v], {}), /--lease-ttl-ms must be at least/, v);
  }
  assert.throws(() => loadConfig([], { SVCD_LEASE_TTL_MS: '10' }), /--lease-ttl-ms must be at least/);
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

test('--metadata is local by default; postgres takes a postgres:// URL and a plain schema name', () => {
  assert.deepEqual(loadConfig([], {}).metadata, { backend: 'local' });
  assert.deepEqual(loadConfig(['--metadata', 'postgres'], { SVCD_POSTGRES_SCHEMA: 'star_1' }).metadata, {
    backend: 'postgres', url: 'postgres://postgres@127.0.0.1:5432/postgres', schema: 'star_1',
  });
  assert.deepEqual(loadConfig([], { SVCD_METADATA: 'postgres', SVCD_POSTGRES_URL: 'postgresql://u@db:5433/m' }).metadata, {
    backend: 'postgres', url: 'postgresql://u@db:5433/m', schema: 'svcd',
  });
  assert.throws(() => loadConfig(['--metadata', 'etcd'], {}), ConfigError);
  assert.throws(() => loadConfig(['--metadata', 'postgres', '--postgres-url', 'mysql://x'], {}), ConfigError);
  for (const schema of ['Svcd', 'a-b', 'x;drop', '1abc', '']) {
    assert.throws(() => loadConfig(['--metadata', 'postgres', '--postgres-schema', schema], {}), ConfigError, `schema "${schema}" is refused`);
  }
});

test('--object-store is fs by default; s3 needs a valid --s3-bucket and takes an http(s) endpoint', () => {
  assert.deepEqual(loadConfig([], {}).objectStore, { backend: 'fs' });
  assert.deepEqual(loadConfig(['--object-store', 's3', '--s3-bucket', 'segs', '--s3-force-path-style'], { SVCD_S3_ENDPOINT: 'http://127.0.0.1:9000', SVCD_S3_PREFIX: 'a/' }).objectStore, {
    backend: 's3', bucket: 'segs', prefix: 'a/', region: 'us-east-1', endpoint: 'http://127.0.0.1:9000', forcePathStyle: true,
  });
  assert.throws(() => loadConfig(['--object-store', 's3'], {}), ConfigError, 'no bucket');
  assert.throws(() => loadConfig(['--object-store', 's3', '--s3-bucket', 'Bad_Bucket'], {}), ConfigError);
  assert.throws(() => loadConfig(['--object-store', 's3', '--s3-bucket', 'ok-b', '--s3-endpoint', 'ftp://x'], {}), ConfigError);
  assert.throws(() => loadConfig(['--object-store', 'gcs'], {}), ConfigError);
});
