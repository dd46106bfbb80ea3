// A star stopped with SIGTERM while its clients have stopped reading still stops, exit 0: a gRPC
// subscriber whose process is frozen (SIGSTOP) with megabytes on their way to it, and an event stream
// whose socket is never read. Before, the gRPC listener's close waited for every http2 session to
// close, and Node ends a destroyed session's socket by waiting for the peer to read what is buffered:
// the star never exited (seen at 5 minutes), and a supervisor had to SIGKILL it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { connect as tcpConnect, type Socket } from 'node:net';
import { REPO_ROOT, removeDir, startServer, waitForOutput, type Engine } from '../helpers/server.ts';

/** What the subscribers are behind by when the star stops: far more than the sockets' buffers. */
const BACKLOG_BATCHES = 10;
const BATCH_RECORDS = 100;
const RECORD_BYTES = 50_000;

/** A gRPC subscriber from seq 0 that prints `first` on its first message; the test then freezes it. */
const FROZEN_SUBSCRIBER = `
import grpc from '@grpc/grpc-js';
import loader from '@grpc/proto-loader';
const def = loader.loadSync('svc/v1/data.proto', { includeDirs: ['proto'], keepCase: true, longs: String });
const { svc } = grpc.loadPackageDefinition(def);
const client = new svc.v1.DataService('127.0.0.1:' + process.argv[1], grpc.credentials.createInsecure());
const call = client.Subscribe({ bucket: 'b', key: Buffer.from('s'), seq_num: 0 });
let seen = false;
call.on('data', () => { if (!seen) { seen = true; process.stdout.write('first\\n'); } });
call.on('error', (err) => process.stdout.write('error ' + err.code + '\\n'));
`;

for (const engine of ['uws', 'node'] as Engine[]) {
  describe(`SIGTERM with clients that stopped reading (${engine})`, () => {
    test('a frozen gRPC subscriber and an unread event stream do not hold the stop: exit 0', { timeout: 90_000 }, async () => {
      const star = await startServer({ engine, args: ['--grpc-listen', '127.0.0.1:0'] });
      const grpcPort = Number((await waitForOutput(star, /svcd grpc listening on 127\.0\.0\.1:(\d+)/))[1]);
      const url = star.baseUrl;
      let subscriber: ReturnType<typeof spawn> | undefined;
      let sse: Socket | undefined;
      try {
        assert.equal((await fetch(`${url}/v1/buckets/b`, { method: 'POST', body: '{}' })).status, 201);
        assert.equal((await fetch(`${url}/v1/streams/b/s`, { method: 'POST', body: '{}' })).status, 201);
        const batch = JSON.stringify({ records: Array.from({ length: BATCH_RECORDS }, () => ({ body: 'x'.repeat(RECORD_BYTES) })) });
        for (let i = 0; i < BACKLOG_BATCHES; i++) {
          const r = await fetch(`${url}/v1/streams/b/s/records`, { method: 'POST', body: batch });
          assert.equal(r.status, 200, await r.text());
        }

        subscriber = spawn(process.execPath, ['--input-type=module', '-e', FROZEN_SUBSCRIBER, String(grpcPort)], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
        let said = '';
        await new Promise<void>((resolve, reject) => {
          subscriber!.stdout!.on('data', (c: Buffer) => { said += c.toString(); if (said.includes('first')) resolve(); });
          subscriber!.once('exit', (code) => reject(new Error(`the subscriber exited (${code}): ${said}`)));
        });
        subscriber.kill('SIGSTOP');

        // An event stream from seq 0 on a socket this process never reads.
        sse = tcpConnect(star.port, '127.0.0.1');
        sse.pause();
        sse.write('GET /v1/streams/b/s/records/subscribe?seq_num=0 HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n');
        sse.on('error', () => undefined);
        // Both are behind once the star has filled what their sockets hold: the star has written
        // at least one frame of the stream's first batch to each (one 50 kB record is a frame).
        await new Promise((r) => setTimeout(r, 1000));

        await star.stop(); // SIGKILLs past its bound, leaving no exit code
        assert.equal(star.proc.exitCode, 0, star.output());
        assert.match(star.output(), /svcd: stopped in \d+ ms/);
      } finally {
        subscriber?.kill('SIGKILL');
        sse?.destroy();
        await star.kill();
        removeDir(star.dataDir);
      }
    });
  });
}
