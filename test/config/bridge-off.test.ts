// A star started with the data bridge off (`--listen ''`, gRPC only) says so at start, instead of
// announcing an HTTP address nothing listens on; a ReadPlan asking it for presigned URLs, which only
// the bridge serves, is refused as something this deployment does not do (not a retryable state).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { removeDir, spawnStar, tempDir } from '../helpers/server.ts';
import { bytes, call, connect, failure } from '../grpc/client.ts';

test('with --listen \'\' the start line says the data bridge is off, and gRPC listens', async () => {
  const dataDir = tempDir();
  const star = await spawnStar(['--listen', '', '--grpc-listen', '127.0.0.1:0', '--data-dir', dataDir], {}, /svcd grpc listening on/);
  try {
    assert.match(star.output(), /^svcd data bridge off \(--listen ''\) data-dir /m);
    assert.doesNotMatch(star.output(), /svcd listening on http/);
    const port = Number(/svcd grpc listening on [^\s]*:(\d+)/.exec(star.output())?.[1]);
    const c = connect(port);
    try {
      await call(c.data.CreateBucket.bind(c.data), { bucket: 'nb', config: {} });
      await call(c.data.CreateStream.bind(c.data), { bucket: 'nb', key: bytes('s') });
      const refused = await failure(c.data.ReadPlan.bind(c.data), { bucket: 'nb', key: bytes('s'), seq_num: 0, mode: 'VENDING_MODE_PRESIGNED' });
      assert.equal(refused.code, grpc.status.UNIMPLEMENTED, refused.details);
      assert.match(refused.details, /data bridge/);
    } finally {
      c.close();
    }
  } finally {
    star.proc.kill('SIGKILL');
    removeDir(dataDir);
  }
});
