// endBounded (api/end-bounded.ts): a node:http answer ended while its consumer is not reading lets go
// of the socket after STREAM_END_FLUSH_MS_MAX without progress, as uWS does; a consumer still reading,
// however slowly, keeps it; an answer read to its end keeps its keep-alive connection. Real sockets on
// loopback; only the bound's interval runs on mock timers, so no test waits out 10 s.
import { afterEach, beforeEach, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { endBounded } from '../../src/api/end-bounded.ts';
import { STREAM_END_FLUSH_MS_MAX } from '../../src/config/limits.ts';

/** The answer: far more than loopback's socket buffers hold, in event-stream-sized writes. */
const CHUNK_BYTES = 64 * 1024;
const CHUNKS = 640;
/** What the slow consumer reads in one round at most: enough to free room in the server's socket
 *  buffer (so its side sees the read), far less than the answer. */
const ROUND_READ_BYTES_MAX = 4 * 1024 * 1024;
/** A liveness bound on each real wait (a socket event), never a measure of speed. */
const EVENT_WAIT_MS_MAX = 10_000;

let server: Server;
let answered: Promise<ServerResponse>;
let client: Socket;
/** This test's client: a socket closing in the last test's afterEach must not touch it. */
let seen: { received: number; closed: boolean };

/** Waits (on real timers) until `cond` holds. */
async function until(what: string, cond: () => boolean): Promise<void> {
  for (const end = Date.now() + EVENT_WAIT_MS_MAX; !cond();) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

/** The kernel's and node's hold on the server's side of the connection: changes as the client reads. */
function serverBacklog(res: ServerResponse): string {
  const s = res.socket as (Socket & { _handle?: { writeQueueSize?: number } }) | null;
  return `${s?.writableLength}/${s?._handle?.writeQueueSize}`;
}

beforeEach(async () => {
  mock.timers.enable({ apis: ['setInterval'] });
  const mine = { received: 0, closed: false };
  seen = mine;
  let resolve!: (res: ServerResponse) => void;
  answered = new Promise((r) => { resolve = r; });
  server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < CHUNKS; i++) res.write(Buffer.alloc(CHUNK_BYTES, 0x61));
    endBounded(res);
    resolve(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  client = connect((server.address() as AddressInfo).port, '127.0.0.1');
  client.on('data', (d: Buffer) => { mine.received += d.length; });
  client.on('close', () => { mine.closed = true; });
  client.on('error', () => undefined);
  client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  await until('the first bytes', () => seen.received > 0);
  client.pause();
});

afterEach(async () => {
  mock.timers.reset();
  client.destroy();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

test('a consumer that does not read is dropped once the bound passes without progress', async () => {
  const res = await answered;
  mock.timers.tick(STREAM_END_FLUSH_MS_MAX - 1);
  assert.equal(res.destroyed, false, 'dropped before the bound');
  mock.timers.tick(1);
  assert.equal(res.destroyed, true, 'held past the bound with nothing taken');
  client.resume();
  await until('the close', () => seen.closed);
  assert.ok(seen.received < CHUNKS * CHUNK_BYTES, 'the whole answer arrived: it was not dropped');
});

test('a consumer reading slowly keeps the connection, bound after bound, until it stops', async () => {
  const res = await answered;
  for (let round = 0; round < 3; round++) {
    const backlog = serverBacklog(res);
    // Reads at most ROUND_READ_BYTES_MAX, then stops, until the server sees some of its answer taken:
    // left reading until then, a loaded machine's client read the whole answer first.
    const from = seen.received;
    const cap = (): void => { if (seen.received - from >= ROUND_READ_BYTES_MAX) client.pause(); };
    client.on('data', cap);
    client.resume();
    await until('the server to see a read', () => serverBacklog(res) !== backlog);
    client.pause();
    client.off('data', cap);
    assert.equal(res.writableFinished, false, `round ${round}: the whole answer was read; a slow read was meant`);
    mock.timers.tick(STREAM_END_FLUSH_MS_MAX);
    assert.equal(res.destroyed, false, `round ${round}: a reading consumer was dropped`);
  }
  mock.timers.tick(STREAM_END_FLUSH_MS_MAX);
  assert.equal(res.destroyed, true, 'a consumer that stopped reading was kept');
});

test('an answer read to its end takes the bound back: its keep-alive connection stays', async () => {
  const res = await answered;
  client.resume();
  await until('the whole answer', () => res.writableFinished && seen.received >= CHUNKS * CHUNK_BYTES);
  await until('the response to close', () => res.closed);
  mock.timers.tick(STREAM_END_FLUSH_MS_MAX * 3);
  assert.equal(res.socket?.destroyed ?? false, false, 'the finished answer\'s connection was dropped');
  assert.equal(seen.closed, false);
});
