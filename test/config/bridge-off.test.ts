// A star started with the data bridge off (`--listen ''`, gRPC only) says so at start, instead of
// announcing an HTTP address nothing listens on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, spawnStar, tempDir } from '../helpers/server.ts';

test('with --listen \'\' the start line says the data bridge is off, and gRPC listens', async () => {
  const dataDir = tempDir();
  const star = await spawnStar(['--listen', '', '--grpc-listen', '127.0.0.1:0', '--data-dir', dataDir], {}, /svcd grpc listening on/);
  try {
    assert.match(star.output(), /^svcd data bridge off \(--listen ''\) data-dir /m);
    assert.doesNotMatch(star.output(), /svcd listening on http/);
  } finally {
    star.proc.kill('SIGKILL');
    removeDir(dataDir);
  }
});
