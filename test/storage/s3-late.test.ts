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

/** The star's line saying it waits for S3: s3rver starts once it is printed (not after a fixed delay,
 *  which a loaded machine's star may not have used to look yet). */
const WAITING_LINE = /objects: s3 bucket late at http:\/\/127\.0\.0\.1:\d+ did not answer: .*; waiting up to \d+ s for it/;

test(`a star whose S3 comes up while it waits for it (up to ${S3_BOOT_WAIT_MS_MAX / 1000} s) starts and serves`, { timeout: 120_000 }, async () => {
  const port = await closedPort();
  const dataDir = tempDir();
  const env = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
  let s3: ReturnType<typeof startS3> | undefined;
  const starting = startServer({
    dataDir, env,
    args: ['--object-store', 's3', '--s3-bucket', 'late', '--s3-endpoint', `http://127.0.0.1:${port}`, '--s3-force-path-style'],
    onOutput: (out) => { if (s3 === undefined && WAITING_LINE.test(out)) s3 = startS3('late', [], port); },
  });
  // Seen by the test as a rejection if the star exits before listening.
  starting.catch(() => undefined);
  try {
    const star = await starting;
    try {
      assert.match(star.output(), WAITING_LINE);
      const post = (path: string, body: unknown): Promise<Response> => fetch(`${star.baseUrl}${path}`, { method: 'POST', body: JSON.stringify(body) });
      assert.equal((await post('/v1/buckets/b', {})).status, 201);
      assert.equal((await post('/v1/streams/b/s/records', { records: [{ body: 'x' }] })).status, 404, 'served: the stream does not exist yet');
    } finally {
      await star.stop();
    }
  } finally {
    await (await s3)?.close();
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
