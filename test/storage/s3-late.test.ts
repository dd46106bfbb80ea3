// A star restarted while its S3 does not answer (a short outage during a rolling restart) waits for it
// and comes up once it answers, rather than exiting and staying down with no supervisor to restart it
// (chaos audit F4). One that S3 answers no (a bucket that is not there) still refuses at once. A real
// star and a real s3rver, started on the star's endpoint only after the star.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, startServer, tempDir } from '../helpers/server.ts';
import { startS3 } from '../helpers/s3.ts';
import { S3_BOOT_WAIT_MS_MAX } from '../../src/config/limits.ts';
import { closedPort } from '../helpers/ports.ts';

/** How long the star is left facing a dead endpoint before s3rver comes up (well inside its wait). */
const S3_LATE_MS = 2000;

test(`a star whose S3 comes up ${S3_LATE_MS} ms after it starts waits for it (up to ${S3_BOOT_WAIT_MS_MAX / 1000} s) and serves`, { timeout: 120_000 }, async () => {
  const port = await closedPort();
  const dataDir = tempDir();
  const env = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
  const starting = startServer({
    dataDir, env,
    args: ['--object-store', 's3', '--s3-bucket', 'late', '--s3-endpoint', `http://127.0.0.1:${port}`, '--s3-force-path-style'],
  });
  // Seen by the test as a rejection if the star exits before listening.
  starting.catch(() => undefined);
  await new Promise((r) => setTimeout(r, S3_LATE_MS));
  const s3 = await startS3('late', [], port);
  try {
    const star = await starting;
    try {
      assert.match(star.output(), /objects: s3 bucket late at http:\/\/127\.0\.0\.1:\d+ did not answer: .*; waiting up to \d+ s for it/);
      const post = (path: string, body: unknown): Promise<Response> => fetch(`${star.baseUrl}${path}`, { method: 'POST', body: JSON.stringify(body) });
      assert.equal((await post('/v1/buckets/b', {})).status, 201);
      assert.equal((await post('/v1/streams/b/s/records', { records: [{ body: 'x' }] })).status, 404, 'served: the stream does not exist yet');
    } finally {
      await star.stop();
    }
  } finally {
    await s3.close();
    removeDir(dataDir);
  }
});

test('a star whose S3 answers that the bucket does not exist refuses to start at once, in one line', { timeout: 60_000 }, async () => {
  const s3 = await startS3('present');
  const dataDir = tempDir();
  try {
    await assert.rejects(startServer({
      dataDir, env: s3.env,
      args: ['--object-store', 's3', '--s3-bucket', 'absent', '--s3-endpoint', s3.endpoint, '--s3-force-path-style'],
    }), (err: Error) => /exited \(2\) before listening/.test(err.message) && /objects: s3 bucket absent at .* did not answer: .*\(HTTP 404\)/.test(err.message) && !/waiting up to/.test(err.message));
  } finally {
    await s3.close();
    removeDir(dataDir);
  }
});
