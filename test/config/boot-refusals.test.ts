// Starts an operator can fix are refused in one line with exit 2, never a crash with a stack trace
// (exit 1) and never a silent fallback: a port of the ops or gRPC listener in use, a data dir that is
// a file or cannot be made (under /proc Node's recursive mkdir used to spin forever), half a TLS
// configuration (it used to serve plain HTTP without a word), TLS files missing or not a pair. Each
// runs the real main as a child process. (PostgreSQL at start: test/storage/pg-late.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer } from 'node:net';
import { once } from 'node:events';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { bootToExit, removeDir, startServer, tempDir, waitForOutput } from '../helpers/server.ts';
import { makeCerts } from '../auth-http/kit.ts';

const boot = (args: string[]): ReturnType<typeof bootToExit> => bootToExit(['--listen', '127.0.0.1:0', ...args]);

function refusedInOneLine(r: { code: number | null; err: string }, re: RegExp, what: string): void {
  assert.equal(r.code, 2, `${what}: exit ${r.code}\n${r.err}`);
  const lines = r.err.trim().split('\n').filter((l) => l.startsWith('svcd: '));
  assert.equal(lines.length, 1, `${what}: one line: ${r.err}`);
  assert.match(lines[0], re, what);
  assert.doesNotMatch(r.err, /^\s+at /m, `${what}: no stack trace`);
}

test('boots an operator can fix are refused in one line, exit 2', { timeout: 240_000 }, async () => {
  const dir = tempDir('svcd-boot-');
  const taken = createServer();
  taken.listen(0, '127.0.0.1');
  await once(taken, 'listening');
  const takenPort = (taken.address() as { port: number }).port;
  const certs = makeCerts();
  try {
    refusedInOneLine(await boot(['--data-dir', join(dir, 'a'), '--metrics-listen', `127.0.0.1:${takenPort}`]), /cannot listen on 127\.0\.0\.1:\d+ \(ops\): .*EADDRINUSE/, 'ops port in use');
    refusedInOneLine(await boot(['--data-dir', join(dir, 'b'), '--grpc-listen', `127.0.0.1:${takenPort}`]), /cannot listen on 127\.0\.0\.1:\d+ \(gRPC\)/, 'gRPC port in use');
    const file = join(dir, 'a-file');
    writeFileSync(file, 'x');
    refusedInOneLine(await boot(['--data-dir', file]), /data dir .*a-file.*: (not a directory|ENOTDIR)/, 'data dir is a file');
    refusedInOneLine(await boot(['--data-dir', '/proc/svcd-no-such-dir']), /data dir \/proc\/svcd-no-such-dir: cannot be created/, 'data dir under /proc');
    refusedInOneLine(await boot(['--data-dir', join(dir, 'c'), '--tls-cert', certs.serverCert]), /--tls-cert and --tls-key go together/, 'half a TLS configuration');
    refusedInOneLine(await boot(['--data-dir', join(dir, 'c'), '--tls-cert', join(dir, 'none.pem'), '--tls-key', certs.serverKey]), /tls: cannot read --tls-cert .*none\.pem: ENOENT/, 'a TLS file missing');
    refusedInOneLine(await boot(['--data-dir', join(dir, 'c'), '--tls-cert', certs.serverKey, '--tls-key', certs.serverCert]), /not a usable certificate and key/, 'certificate and key swapped');
  } finally {
    taken.close();
    removeDir(dir);
    removeDir(certs.dir);
  }
});

test('IPv6 literals: the gRPC and ops listeners take [::1]:port and log it in brackets (gRPC was given ::1:port, which it took for a DNS name)', { timeout: 60_000 }, async (t) => {
  const star = await startServer({ args: ['--grpc-listen', '[::1]:0', '--metrics-listen', '[::1]:0'] });
  t.after(async () => { await star.stop(); removeDir(star.dataDir); });
  const grpcPort = Number((await waitForOutput(star, /svcd grpc listening on \[::1\]:(\d+)/))[1]);
  const ops = (await waitForOutput(star, /svcd ops on (http:\/\/\[::1\]:\d+)/))[1];
  assert.equal((await fetch(`${ops}/healthz`)).status, 200, 'the logged ops URL works as written');
  const sock = connect({ host: '::1', port: grpcPort });
  await once(sock, 'connect');
  sock.destroy();
});
