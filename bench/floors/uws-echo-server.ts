// The transport floor (a child process): a bare native uWebSockets.js server that reads each request
// body whole, as svcd's adapter does, and answers a fixed append-shaped JSON. No parsing, no
// sequencing, no disk: what is left is the cost of HTTP on this machine.
import { loadNativeUws } from '../../src/api/uws.ts';
import { toParent } from '../lib/child.ts';

const ANSWER = JSON.stringify({
  start: { seq_num: 0, timestamp_ms: 0 },
  end: { seq_num: 1, timestamp_ms: 0 },
  tail: { seq_num: 1, timestamp_ms: 0 },
});

const loaded = loadNativeUws();
if (!('uws' in loaded)) {
  toParent({ type: 'error', message: loaded.error });
  process.exit(2);
}
const uws = loaded.uws;

uws.App()
  .any('/*', (res) => {
    let aborted = false;
    const chunks: Buffer[] = [];
    res.onAborted(() => { aborted = true; });
    res.onData((ab, isLast) => {
      chunks.push(Buffer.from(new Uint8Array(ab))); // ab is only valid during the callback; a view copies into the pool
      if (!isLast || aborted) return;
      res.cork(() => { res.writeHeader('Content-Type', 'application/json').end(ANSWER); });
    });
  })
  .listen('127.0.0.1', 0, (token) => {
    if (!token) { toParent({ type: 'error', message: 'uWS echo: listen failed' }); process.exit(1); }
    toParent({ type: 'listening', port: uws.us_socket_local_port(token as unknown as Parameters<typeof uws.us_socket_local_port>[0]) });
  });

process.on('SIGTERM', () => process.exit(0));
process.on('disconnect', () => process.exit(0));
