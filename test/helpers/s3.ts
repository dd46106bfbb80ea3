// An S3-protocol server for tests: s3rver on loopback, started by the test itself, with one bucket,
// its files in a temp dir; and the environment a star (or the SDK in this process) needs to reach it.
import S3rver from 's3rver';
import { removeDir, tempDir } from './server.ts';

export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** AWS_* credentials s3rver accepts (its fixed pair), for a star's environment. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** s3rver's fixed credentials. */
const S3RVER_KEY = 'S3RVER';

/** `port` 0: any free one. */
export async function startS3(bucket = 'svcd-test', extraBuckets: string[] = [], port = 0): Promise<TestS3> {
  const dir = tempDir('svcd-s3rver-');
  const server = new S3rver({ port, address: '127.0.0.1', silent: true, directory: dir, configureBuckets: [bucket, ...extraBuckets].map((name) => ({ name })) });
  const { port: bound } = await server.run();
  const env = {
    AWS_ACCESS_KEY_ID: S3RVER_KEY, AWS_SECRET_ACCESS_KEY: S3RVER_KEY, AWS_REGION: 'us-east-1',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  return {
    endpoint: `http://127.0.0.1:${bound}`,
    bucket,
    env,
    async close() {
      await stopS3rver(server);
      removeDir(dir);
    },
  };
}

/** Star flags for the s3 object store on `s3`, under `prefix`. */
export function s3Args(s3: TestS3, prefix: string): string[] {
  return ['--object-store', 's3', '--s3-bucket', s3.bucket, '--s3-endpoint', s3.endpoint, '--s3-force-path-style', '--s3-prefix', prefix];
}

/** Stops s3rver at once, as a crashed store would: its listener closes and every open connection is
 *  cut. (close() alone waits for busy keep-alive connections, which a star under load keeps reusing,
 *  so it could wait as long as the load goes on.) */
export async function stopS3rver(server: S3rver): Promise<void> {
  const closing = server.close();
  (server as unknown as { httpServer?: { closeAllConnections(): void } }).httpServer?.closeAllConnections();
  await closing;
}
