// A star started with the data bridge off (`--listen ''`, gRPC only) says so at start, instead of
// announcing an HTTP address nothing listens on.
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { REPO_ROOT, removeDir, starEntry, tempDir } from '../helpers/server.ts';

/** How long the star may take to print its gRPC line. A bound, not a speed. */
const START_WAIT_MS_MAX = 30_000;

test('with --listen \'\' the start line says the data bridge is off, and gRPC listens', async () => {
  const dataDir = tempDir();
  const proc = spawn(process.execPath, [...starEntry(), '--listen', '', '--grpc-listen', '127.0.0.1:0', '--data-dir', dataDir], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  proc.stderr.on('data', (d: Buffer) => { out += d.toString(); });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no gRPC line:\n${out}`)), START_WAIT_MS_MAX);
      proc.stdout.on('data', () => { if (/svcd grpc listening on/.test(out)) { clearTimeout(timer); resolve(); } });
      proc.once('exit', (code) => { clearTimeout(timer); reject(new Error(`exited ${code}:\n${out}`)); });
    });
    assert.match(out, /^svcd data bridge off \(--listen ''\) data-dir /m);
    assert.doesNotMatch(out, /svcd listening on http/);
  } finally {
    proc.kill('SIGKILL');
    removeDir(dataDir);
  }
});
