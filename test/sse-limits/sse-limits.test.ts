// SSE bounds on a real server with short settings: heartbeats, the per-host connection cap (503 with
// Retry-After: 1), and the stalled-consumer cut-off. Every wait is bounded.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { ENGINES, startServer, type RunningServer } from '../helpers/server.ts';

/** Longest any single wait in this file may take. */
const WAIT_MS = 15_000;

async function post(base: string, path: string, body: unknown): Promise<Response> {
  return fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** A raw subscriber: we decide when (and whether) to read. */
function rawSubscribe(port: number, path: string): Socket {
  const s = connect(port, '127.0.0.1');
  s.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`);
  return s;
}

/** Waits past the stall bound (1 s in these stars), then reads on: true when the server had ended the
 *  stream (the socket closes within WAIT_MS), false when it is still open. */
async function closedOnceResumed(s: Socket): Promise<boolean> {
  await new Promise((r) => setTimeout(r, 2500));
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), WAIT_MS);
    s.on('close', () => { clearTimeout(timer); resolve(true); });
    s.on('error', () => undefined);
    s.resume();
  });
}

function readUntil(s: Socket, pred: (text: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => { cleanup(); reject(new Error(`timed out; got ${text.slice(0, 300)}`)); }, WAIT_MS);
    const onData = (c: Buffer): void => { text += c.toString('latin1'); if (pred(text)) { cleanup(); resolve(text); } };
    const onEnd = (): void => {
      cleanup();
      if (pred(text)) resolve(text);
      else reject(new Error(`ended; got ${text.slice(0, 300)}`));
    };
    const cleanup = (): void => { clearTimeout(timer); s.off('data', onData); s.off('end', onEnd); };
    s.on('data', onData);
    s.on('end', onEnd);
  });
}

for (const engine of ENGINES) {
  describe(`SSE limits (${engine})`, () => {
    let srv: RunningServer;
    before(async () => {
      srv = await startServer({ engine, args: ['--sse-heartbeat-ms', '200', '--sse-stall-ms', '1000', '--sse-connections-max', '3'] });
      assert.equal((await post(srv.baseUrl, '/v1/buckets/lim', {})).status, 201);
    });
    after(() => srv.stop());

    test('an idle subscription receives `: hb` heartbeats', async () => {
      assert.equal((await post(srv.baseUrl, '/v1/streams/lim/hb', {})).status, 201);
      const s = rawSubscribe(srv.port, '/v1/streams/lim/hb/records/subscribe?seq_num=0');
      try {
        const text = await readUntil(s, (t) => t.includes('\n: hb\n'));
        assert.match(text, /^HTTP\/1\.1 200/);
        assert.match(text, /content-type: text\/event-stream/i);
      } finally { s.destroy(); }
    });

    test('past the connection cap a subscribe is 503 with Retry-After: 1', async () => {
      assert.equal((await post(srv.baseUrl, '/v1/streams/lim/cap', {})).status, 201);
      const open = [0, 1, 2].map(() => rawSubscribe(srv.port, '/v1/streams/lim/cap/records/subscribe?seq_num=0'));
      try {
        await Promise.all(open.map((s) => readUntil(s, (t) => t.includes('\r\n\r\n'))));
        const res = await fetch(`${srv.baseUrl}/v1/streams/lim/cap/records/subscribe?seq_num=0`);
        assert.equal(res.status, 503);
        assert.equal(res.headers.get('retry-after'), '1');
        assert.equal(typeof ((await res.json()) as { error: unknown }).error, 'string');
        // A subscribe that can never succeed is 400 at the cap too, never a 503 to retry forever.
        const startless = await fetch(`${srv.baseUrl}/v1/streams/lim/cap/records/subscribe`);
        assert.equal(startless.status, 400, 'no start');
        await startless.arrayBuffer();
        const badFormat = await fetch(`${srv.baseUrl}/v1/streams/lim/cap/records/subscribe?seq_num=0&format=hex`);
        assert.equal(badFormat.status, 400, 'unknown format');
        await badFormat.arrayBuffer();
      } finally { for (const s of open) s.destroy(); }
      // Closed subscriptions free their slots.
      const deadline = Date.now() + WAIT_MS;
      let status = 0;
      while (Date.now() < deadline) {
        const ac = new AbortController();
        const res = await fetch(`${srv.baseUrl}/v1/streams/lim/cap/records/subscribe?seq_num=0`, { signal: ac.signal });
        status = res.status;
        ac.abort();
        if (status === 200) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(status, 200);
    });

    test('a consumer that stops reading is cut off after the stall limit', async () => {
      assert.equal((await post(srv.baseUrl, '/v1/streams/lim/stall', {})).status, 201);
      const s = rawSubscribe(srv.port, '/v1/streams/lim/stall/records/subscribe?seq_num=0');
      await readUntil(s, (t) => t.includes('\r\n\r\n'));
      s.pause(); // stop reading: the kernel buffers fill, the server sees backpressure
      const body = 'x'.repeat(256 * 1024);
      for (let i = 0; i < 40; i++) {
        const r = await post(srv.baseUrl, '/v1/streams/lim/stall/records', { records: Array.from({ length: 4 }, () => ({ body })) });
        assert.equal(r.status, 200);
      }
      // Wait past the stall limit, then read on: the server must have ended the stream.
      assert.equal(await closedOnceResumed(s), true);
    });

    test('a Durable Streams event stream whose consumer stops reading is cut after the same stall limit', async () => {
      const ds = `${srv.baseUrl}/ds/v1/stream/stall`;
      const put = await fetch(ds, { method: 'PUT', headers: { 'Content-Type': 'text/plain' } });
      assert.ok(put.status === 201 || put.status === 200, `PUT ${put.status}`);
      await put.arrayBuffer();
      const s = rawSubscribe(srv.port, '/ds/v1/stream/stall?offset=-1&live=sse');
      await readUntil(s, (t) => t.includes('\r\n\r\n'));
      s.pause();
      const body = 'y'.repeat(256 * 1024);
      for (let i = 0; i < 40; i++) {
        const r = await fetch(ds, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body });
        assert.ok(r.status >= 200 && r.status < 300, `append ${i}: ${r.status}`);
        await r.arrayBuffer();
      }
      // Past --sse-stall-ms (1 s here; the reader had a fixed 60 s before), then read on: it must end.
      assert.equal(await closedOnceResumed(s), true);
    });
  });
}

/** uWebSockets.js closes a socket 10 s after a write found it full (its own timeout, which
 *  JavaScript cannot set). A consumer paused longer than that, well within the spec's 60 s stall
 *  bound, must lose nothing: before, the uws engine cut it at 10 s. */
const PAUSE_PAST_UWS_TIMEOUT_MS = 12_000;
/** Appends made while the consumer is paused: far more than the kernel's socket buffers hold. */
const PAUSED_APPENDS = 40;
const RECORDS_PER_APPEND = 4;

/** Reads on until `marker` has arrived (matched across chunk edges without keeping the stream). */
function readUntilMarker(s: Socket, marker: string, waitMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let carry = '';
    let bytes = 0;
    const timer = setTimeout(() => { cleanup(); reject(new Error(`no ${JSON.stringify(marker)} after ${bytes} bytes`)); }, waitMs);
    const onData = (c: Buffer): void => {
      bytes += c.length;
      const text = carry + c.toString('latin1');
      if (text.includes(marker)) { cleanup(); resolve(); return; }
      carry = text.slice(-marker.length);
    };
    const onEnd = (): void => { cleanup(); reject(new Error(`the stream ended after ${bytes} bytes without ${JSON.stringify(marker)}`)); };
    const cleanup = (): void => { clearTimeout(timer); s.off('data', onData); s.off('end', onEnd); };
    s.on('data', onData);
    s.on('end', onEnd);
  });
}

/** On a fresh star of each engine: a subscriber from seq 0 stops reading; `appends` appends of
 *  `recordsPerAppend` records of `bodyBytes` each are made; past uWS's own timeout it reads on, and must
 *  get every record. */
async function pausedConsumerKeepsStream(name: string, appends: number, recordsPerAppend: number, bodyBytes: number): Promise<void> {
  await Promise.all(ENGINES.map(async (engine) => {
    const srv = await startServer({ engine });
    const key = `/v1/streams/lim/${name}-${engine}`;
    try {
      assert.equal((await post(srv.baseUrl, '/v1/buckets/lim', {})).status, 201);
      assert.equal((await post(srv.baseUrl, key, {})).status, 201);
      const s = rawSubscribe(srv.port, `${key}/records/subscribe?seq_num=0`);
      try {
        await readUntil(s, (t) => t.includes('\r\n\r\n'));
        s.pause();
        const body = 'x'.repeat(bodyBytes);
        for (let i = 0; i < appends; i++) {
          const r = await post(srv.baseUrl, `${key}/records`, { records: Array.from({ length: recordsPerAppend }, () => ({ body })) });
          assert.equal(r.status, 200);
        }
        await new Promise((r) => setTimeout(r, PAUSE_PAST_UWS_TIMEOUT_MS));
        const done = readUntilMarker(s, `id: ${appends * recordsPerAppend}\n`, WAIT_MS * 2);
        s.resume();
        await done;
      } finally { s.destroy(); }
    } finally {
      await srv.stop();
    }
  }));
}

test('a consumer paused past uWS\'s own 10 s, within the 60 s stall bound, keeps its stream and gets every record (both engines)', { timeout: 120_000 }, async () => {
  await pausedConsumerKeepsStream('paused', PAUSED_APPENDS, RECORDS_PER_APPEND, 256 * 1024);
});

/** Appends made one at a time while a caught-up consumer is paused, each delivered as its own cohort
 *  round while the socket has room: enough to fill the kernel's buffers on loopback several times. */
const CAUGHT_UP_APPENDS = 200;
const CAUGHT_UP_BODY_BYTES = 64 * 1024;

test('a caught-up consumer that pauses past uWS\'s own 10 s while its stream\'s rounds fill its socket keeps its stream and gets every record (both engines)', { timeout: 120_000 }, async () => {
  // The test above fills the socket from the subscriber's own pump (it is behind from the first
  // append). Here each append is written by the stream's cohort while the subscriber is caught up,
  // until a round's write finds the socket full; the subscriber then leaves the cohort and waits for
  // the drain, and uWS's timer must be re-armed on that path too (SseSink.filled).
  await pausedConsumerKeepsStream('caught-up', CAUGHT_UP_APPENDS, 1, CAUGHT_UP_BODY_BYTES);
});

/** A heartbeat period long against the appends' spacing (a round every APPEND_EVERY_MS), so only a
 *  stall of the whole star longer than it would let a heartbeat fall due while the stream is busy. */
const BUSY_HEARTBEAT_MS = 3000;
const APPEND_EVERY_MS = 100;
/** Appends in the busy phase: two heartbeat periods of them. */
const BUSY_APPENDS = 66;

test('a subscriber fed by its stream\'s rounds gets no heartbeat while they come within the period, and one once the stream goes quiet (both engines)', { timeout: 120_000 }, async () => {
  // The heartbeat is for quiet streams (proxies' idle timeouts), as the Gateway's relay sends it: at
  // 16,384 subscribers of busy streams one each per period was a burst of 16,384 socket writes.
  await Promise.all(ENGINES.map(async (engine) => {
    const srv = await startServer({ engine, args: ['--sse-heartbeat-ms', String(BUSY_HEARTBEAT_MS)] });
    const key = `/v1/streams/lim/busy-${engine}`;
    try {
      assert.equal((await post(srv.baseUrl, '/v1/buckets/lim', {})).status, 201);
      assert.equal((await post(srv.baseUrl, key, {})).status, 201);
      const s = rawSubscribe(srv.port, `${key}/records/subscribe?seq_num=0`);
      try {
        let text = '';
        let seen: (() => void) | undefined;
        s.on('data', (c: Buffer) => { text += c.toString('latin1'); seen?.(); });
        /** Resolves once what arrived holds `marker` (bounded by WAIT_MS). */
        const arrived = (marker: string): Promise<void> => new Promise((resolve, reject) => {
          const timer = setTimeout(() => { seen = undefined; reject(new Error(`no ${JSON.stringify(marker)} in ${text.length} bytes`)); }, WAIT_MS);
          seen = () => { if (text.includes(marker)) { clearTimeout(timer); seen = undefined; resolve(); } };
          seen();
        });
        await arrived('\r\n\r\n');
        for (let i = 0; i < BUSY_APPENDS; i++) {
          assert.equal((await post(srv.baseUrl, `${key}/records`, { records: [{ body: `r${i}` }] })).status, 200);
          await new Promise((r) => setTimeout(r, APPEND_EVERY_MS));
        }
        await arrived(`id: ${BUSY_APPENDS}\n`);
        const busy = text;
        assert.equal(busy.split(': hb\n').length - 1, 0, `no heartbeat while records came every ${APPEND_EVERY_MS} ms (period ${BUSY_HEARTBEAT_MS} ms)`);
        // Quiet now: the heartbeat comes (within a period of the last round; bounded by WAIT_MS).
        await arrived(': hb\n');
      } finally { s.destroy(); }
    } finally {
      await srv.stop();
    }
  }));
});
