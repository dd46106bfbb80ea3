// An event stream that ends while its consumer is not reading keeps the connection at most
// STREAM_END_FLUSH_MS_MAX. Here the streams end at their credential's exp: the SSE pump writes
// `auth-expired` and ends, the Durable Streams reader ends with a write still waiting for room.
// The stall bound (60 s by default) no longer applies once a stream has ended, so without this bound
// node:http held such a socket for as long as the consumer did not read, and the DS reader waited
// out the stall bound before it saw that its stream was over. On uWS, its own 10 s timeout is the bound.
//
// What the consumer sees, reading on after the bound: the connection closes (what the kernel had
// already taken still arrives first). A stream still held instead ends once read, and its keep-alive
// connection stays open.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { STREAM_END_FLUSH_MS_MAX } from '../../src/config/limits.ts';
import { ENGINES, assertStatus, bearer, mint, nowS, request, startStar, streamPath, type Star } from '../auth-http/kit.ts';

const SECRET = 'stream-end-secret-0123456789abcdef';
const AUD = 'svcd-stream-end';
/** A token's life: whole seconds, so the subscribe reaches the star before exp on a loaded machine. */
const TOKEN_LIFE_S = 4;
/** Past the bound, how much longer the consumer waits before reading on. */
const AFTER_BOUND_MS = 5000;
/** Reading on, the longest the rest of the stream may take to arrive and close: under uWS's own 10 s
 *  idle close of a keep-alive connection, so a stream that ended cleanly once read does not pass. */
const READ_ON_WAIT_MS_MAX = 6_000;
/** Appends made while the consumer is paused: far more than the kernel's socket buffers hold. */
const PAUSED_APPENDS = 40;
const PAYLOAD = 'z'.repeat(256 * 1024);

/** A raw subscriber that stops reading once the response's head is in. */
async function pausedSubscriber(port: number, path: string, token: string): Promise<Socket> {
  const s = connect(port, '127.0.0.1');
  s.on('error', () => undefined);
  s.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${token}\r\n\r\n`);
  const head = await new Promise<string>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`no head; got ${text.slice(0, 300)}`)), READ_ON_WAIT_MS_MAX);
    const onData = (c: Buffer): void => {
      text += c.toString('latin1');
      if (!text.includes('\r\n\r\n')) return;
      clearTimeout(timer);
      s.off('data', onData);
      s.pause();
      resolve(text);
    };
    s.on('data', onData);
  });
  assert.match(head, /^HTTP\/1\.1 200/, head.slice(0, 300));
  return s;
}

/** Reads on until the connection closes: whether it did within READ_ON_WAIT_MS_MAX, and how much came. */
function readOn(s: Socket): Promise<{ closed: boolean; bytes: number }> {
  return new Promise((resolve) => {
    let bytes = 0;
    const done = (closed: boolean): void => {
      clearTimeout(timer);
      resolve({ closed, bytes });
      s.destroy();
    };
    const timer = setTimeout(() => done(false), READ_ON_WAIT_MS_MAX);
    s.on('data', (c: Buffer) => { bytes += c.length; });
    s.on('close', () => done(true));
    s.resume();
  });
}

/** Waits until `expS` (a token's exp) plus the bound, plus a margin. */
async function pastTheBound(expS: number): Promise<void> {
  const waitMs = expS * 1000 + STREAM_END_FLUSH_MS_MAX + AFTER_BOUND_MS - Date.now();
  await new Promise((r) => setTimeout(r, Math.max(0, waitMs)));
}

function assertDropped(r: { closed: boolean; bytes: number }): void {
  assert.equal(r.closed, true, `the connection is still open after ${r.bytes} bytes read on: the ended stream held it`);
}

// Each case waits out a token's life and the bound (about 17 s): the engines and cases run side by side.
describe('an event stream that ends on a consumer not reading', { concurrency: true }, () => {
  for (const engine of ENGINES) {
    describe(engine, { concurrency: true }, () => {
      let star: Star;
      let admin: string;
      const req = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
        request(star.baseUrl, method, path, { headers: { ...bearer(admin), ...headers }, body });

      before(async () => {
        star = await startStar({
          engine,
          args: ['--auth', 'jwt', '--insecure-auth', '--jwt-audience', AUD],
          env: { SVCD_JWT_HMAC_SECRET: SECRET },
        });
        admin = await mint(SECRET, 'svc:admin', { aud: AUD });
        assertStatus(await req('POST', '/v1/buckets/logs', {}), 201, 'bucket');
      });
      after(() => star?.stop());

      test(`the SSE pump's stream, ended by auth-expired, is dropped within ${STREAM_END_FLUSH_MS_MAX} ms`, { timeout: 120_000 }, async () => {
        const path = streamPath('logs', 'paused');
        assertStatus(await req('POST', path, {}), 201, 'create');
        const exp = nowS() + TOKEN_LIFE_S;
        const short = await mint(SECRET, 'svc:read:logs:*', { aud: AUD, exp });
        const s = await pausedSubscriber(star.port, `${path}/records/subscribe?seq_num=0`, short);
        try {
          for (let i = 0; i < PAUSED_APPENDS; i++) {
            assertStatus(await req('POST', `${path}/records`, { records: Array.from({ length: 4 }, () => ({ body: PAYLOAD })) }), 200, `append ${i}`);
          }
          await pastTheBound(exp);
          assertDropped(await readOn(s));
        } finally { s.destroy(); }
      });

      test(`the Durable Streams reader's stream, ended at exp with a write waiting, is dropped within ${STREAM_END_FLUSH_MS_MAX} ms`, { timeout: 120_000 }, async () => {
        const path = '/ds/v1/stream/paused';
        const put = await req('PUT', path, undefined, { 'content-type': 'text/plain' });
        assert.ok(put.status === 201 || put.status === 200, `PUT ${put.status}`);
        const exp = nowS() + TOKEN_LIFE_S;
        const short = await mint(SECRET, 'svc:read:ds:*', { aud: AUD, exp });
        const s = await pausedSubscriber(star.port, `${path}?offset=-1&live=sse`, short);
        try {
          for (let i = 0; i < PAUSED_APPENDS; i++) {
            const r = await fetch(star.baseUrl + path, { method: 'POST', headers: { ...bearer(admin), 'content-type': 'text/plain' }, body: PAYLOAD.repeat(4) });
            assert.ok(r.status >= 200 && r.status < 300, `append ${i}: ${r.status}`);
            await r.arrayBuffer();
          }
          await pastTheBound(exp);
          assertDropped(await readOn(s));
        } finally { s.destroy(); }
      });
    });
  }
});
