// Conformance: SSE subscriptions. Every wait is bounded (a frame or the end within FRAME_WAIT_MS, else fail);
// nothing asserts on timing.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, startServer, type RunningServer } from '../helpers/server.ts';
import { rawConn } from '../helpers/raw-conn.ts';
import { Client, streamPath, assertError, bodies, qs, type Query, stopServer } from './client.ts';

const FRAME_WAIT_MS = 10_000;

interface Frame { id?: string; event?: string; data?: string; json?: any }

/** Reads an SSE body with bounded waits. */
class SseReader {
  private buf = '';
  private readonly decoder = new TextDecoder();
  private ended = false;
  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>, private readonly ac: AbortController) {}

  /** One chunk or the end, or throws when nothing arrives within ms. */
  private async readChunk(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => { timer = setTimeout(() => resolve('timeout'), ms); });
    try {
      const r = await Promise.race([this.reader.read(), timeout]);
      if (r === 'timeout') throw new Error(`no SSE data within ${ms} ms; buffered: ${JSON.stringify(this.buf)}`);
      if (r.done) { this.ended = true; return false; }
      this.buf += this.decoder.decode(r.value, { stream: true });
      return true;
    } finally {
      clearTimeout(timer);
    }
  }

  private takeFrame(): Frame | undefined {
    for (;;) {
      this.buf = this.buf.replace(/\r\n/g, '\n');
      const idx = this.buf.indexOf('\n\n');
      if (idx < 0) return undefined;
      const block = this.buf.slice(0, idx);
      this.buf = this.buf.slice(idx + 2);
      const frame: Frame = {};
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line === '' || line.startsWith(':')) continue; // comment (heartbeat)
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'id') frame.id = value;
        else if (field === 'event') frame.event = value;
        else if (field === 'data') data.push(value);
      }
      if (data.length === 0 && frame.id === undefined && frame.event === undefined) continue; // comment-only block
      if (data.length > 0) {
        frame.data = data.join('\n');
        try { frame.json = JSON.parse(frame.data); } catch { /* left undefined; asserted by callers */ }
      }
      return frame;
    }
  }

  /** The next frame (heartbeats skipped), or undefined when the stream ended; fails after FRAME_WAIT_MS. */
  async nextFrame(): Promise<Frame | undefined> {
    const deadline = Date.now() + FRAME_WAIT_MS;
    for (;;) {
      const f = this.takeFrame();
      if (f) return f;
      if (this.ended) return undefined;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no SSE frame within ${FRAME_WAIT_MS} ms; buffered: ${JSON.stringify(this.buf)}`);
      await this.readChunk(left);
    }
  }

  /** Batch frames until at least n records have arrived. */
  async records(n: number): Promise<{ records: any[]; frames: Frame[] }> {
    const records: any[] = [];
    const frames: Frame[] = [];
    while (records.length < n) {
      const f = await this.nextFrame();
      assert.ok(f, `stream ended after ${records.length} of ${n} records`);
      assert.ok(f.json, `frame data should be JSON: ${JSON.stringify(f)}`);
      frames.push(f);
      records.push(...f.json.records);
    }
    return { records, frames };
  }

  /** Waits for the stream to end (done or a transport error). Frames before the end are returned. */
  async end(): Promise<Frame[]> {
    const frames: Frame[] = [];
    for (;;) {
      let f: Frame | undefined;
      try {
        f = await this.nextFrame();
      } catch (err) {
        if (String(err).includes('no SSE')) throw err;
        return frames; // the connection was cut: an end too
      }
      if (!f) return frames;
      frames.push(f);
    }
  }

  close(): void {
    this.reader.cancel().catch(() => {});
    this.ac.abort();
  }
}

/** The body of a chunked answer as a strict decoder releases it: only chunks whose closing CRLF has
 *  arrived (RFC 9112 7.1). */
function strictChunked(raw: string): string {
  let at = raw.indexOf('\r\n\r\n');
  if (at < 0) return '';
  at += 4;
  let out = '';
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    if (eol < 0) return out;
    const size = parseInt(raw.slice(at, eol), 16);
    if (!Number.isFinite(size) || size === 0) return out;
    const dataAt = eol + 2;
    if (raw.length < dataAt + size + 2) return out;
    assert.equal(raw.slice(dataAt + size, dataAt + size + 2), '\r\n', `a chunk not closed by CRLF: ${JSON.stringify(raw)}`);
    out += raw.slice(dataAt, dataAt + size);
    at = dataAt + size + 2;
  }
}

for (const engine of ENGINES) {
  describe(`sse (${engine})`, () => {
    let srv: RunningServer;
    let c: Client;
    const open: SseReader[] = [];
    before(async () => { srv = await startServer({ engine }); c = new Client(srv.baseUrl); });
    after(async () => {
      for (const r of open) r.close();
      await stopServer(srv);
    });

    function subscribeUrl(bucket: string, key: string, query: Query): string {
      return `${srv.baseUrl}${streamPath(bucket, key)}/records/subscribe${qs(query)}`;
    }

    /** Starts a subscription; the response promise resolves when headers arrive (bounded). */
    function startSubscribe(bucket: string, key: string, query: Query, headers: Record<string, string> = {}):
    { response: Promise<Response>; ac: AbortController } {
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(new Error(`no SSE response headers within ${FRAME_WAIT_MS} ms`)), FRAME_WAIT_MS);
      const response = fetch(subscribeUrl(bucket, key, query), {
        headers: { accept: 'text/event-stream', ...headers }, signal: ac.signal,
      }).finally(() => clearTimeout(timer));
      return { response, ac };
    }

    async function subscribe(bucket: string, key: string, query: Query, headers: Record<string, string> = {}):
    Promise<{ res: Response; sse: SseReader }> {
      const { response, ac } = startSubscribe(bucket, key, query, headers);
      const res = await response;
      assert.equal(res.status, 200, `subscribe: ${res.status}`);
      const sse = new SseReader(res.body!.getReader(), ac);
      open.push(sse);
      return { res, sse };
    }

    test('subscribe answers 200 text/event-stream with Cache-Control no-cache and delivers history', async () => {
      const { bucket, key } = await c.freshStream();
      await c.appendOk(bucket, key, bodies(3));
      const { res, sse } = await subscribe(bucket, key, { seq_num: 0 });
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.match(res.headers.get('cache-control') ?? '', /no-cache/);
      const { records, frames } = await sse.records(3);
      assert.deepEqual(records.map((r) => r.seq_num), [0, 1, 2]);
      assert.deepEqual(records.map((r) => r.body), ['r0', 'r1', 'r2']);
      for (const f of frames) {
        assert.ok(f.json.records.length > 0, 'empty batches are never emitted');
        const last = f.json.records[f.json.records.length - 1];
        assert.equal(f.id, String(last.seq_num + 1), 'the frame id is the next seq_num');
        assert.equal(f.json.tail.seq_num, last.seq_num + 1, 'tail is the position after the batch');
        assert.equal(typeof f.json.tail.timestamp_ms, 'number');
      }
      sse.close();
    });

    test('subscribe from the middle starts at that seq_num', async () => {
      const { bucket, key } = await c.freshStream();
      await c.appendOk(bucket, key, bodies(5));
      const { sse } = await subscribe(bucket, key, { seq_num: 3 });
      const { records } = await sse.records(2);
      assert.deepEqual(records.map((r) => r.seq_num), [3, 4]);
      sse.close();
    });

    test('Last-Event-ID overrides the query start', async () => {
      const { bucket, key } = await c.freshStream();
      await c.appendOk(bucket, key, bodies(4));
      const { sse } = await subscribe(bucket, key, { seq_num: 0 }, { 'last-event-id': '2' });
      const { records } = await sse.records(2);
      assert.deepEqual(records.map((r) => r.seq_num), [2, 3]);
      sse.close();
    });

    test('Last-Event-ID alone is a valid start', async () => {
      const { bucket, key } = await c.freshStream();
      await c.appendOk(bucket, key, bodies(3));
      const { sse } = await subscribe(bucket, key, {}, { 'last-event-id': '1' });
      const { records } = await sse.records(2);
      assert.deepEqual(records.map((r) => r.seq_num), [1, 2]);
      sse.close();
    });

    test('two Last-Event-ID fields are 400: a subscribe never resumes from whichever came first', async () => {
      const { bucket, key } = await c.freshStream();
      for (const [first, second] of [['1', '3'], ['', '3']]) {
        const conn = await rawConn(srv.port);
        try {
          conn.sock.write(`GET ${streamPath(bucket, key)}/records/subscribe HTTP/1.1\r\nHost: x\r\nLast-Event-ID: ${first}\r\nLast-Event-ID: ${second}\r\nConnection: close\r\n\r\n`);
          // The answer's head is enough: a wrongly opened stream would never close.
          await new Promise<void>((resolve) => { const t = setInterval(() => { if (conn.closed() || conn.text().includes('\r\n\r\n')) { clearInterval(t); resolve(); } }, 10); });
          assert.match(conn.text(), /^HTTP\/1\.1 400 /, `'${first}' then '${second}': ${conn.text()}`);
        } finally {
          conn.sock.destroy();
        }
      }
    });

    test('each frame reaches a client that parses chunked framing strictly as it is written, not with the next write', async () => {
      // urllib3 (Python's requests) and http.client release a chunk only once its closing CRLF is in.
      // uWS wrote that CRLF before the next chunk, so such clients saw each event one write late and
      // the newest only at the next heartbeat (15 s, past this wait).
      const { bucket, key } = await c.freshStream();
      const conn = await rawConn(srv.port);
      try {
        conn.sock.write(`GET ${streamPath(bucket, key)}/records/subscribe?seq_num=0 HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n`);
        const waitFor = async (what: string, seen: () => boolean): Promise<void> => {
          const deadline = Date.now() + FRAME_WAIT_MS;
          while (!seen()) {
            if (Date.now() > deadline) assert.fail(`${what} within ${FRAME_WAIT_MS} ms; received: ${JSON.stringify(conn.text())}`);
            await new Promise((r) => setTimeout(r, 10));
          }
        };
        await waitFor('the opening comment on the wire', () => conn.text().includes(': open'));
        await c.appendOk(bucket, key, bodies(1, 'strict'));
        await waitFor('the frame on the wire', () => conn.text().includes('strict0'));
        await waitFor('the frame, strictly decoded', () => strictChunked(conn.text()).includes('strict0'));
        await c.appendOk(bucket, key, bodies(1, 'again'));
        await waitFor('the next frame, strictly decoded', () => strictChunked(conn.text()).includes('again0'));
        assert.match(conn.text(), /^HTTP\/1\.1 200 /);
      } finally {
        conn.sock.destroy();
      }
    });

    test('resuming with the last frame id skips and repeats nothing', async () => {
      const { bucket, key } = await c.freshStream();
      await c.appendOk(bucket, key, bodies(3, 'a'));
      const first = await subscribe(bucket, key, { seq_num: 0 });
      const got = await first.sse.records(3);
      const lastId = got.frames[got.frames.length - 1].id!;
      first.sse.close();
      await c.appendOk(bucket, key, bodies(2, 'b'));
      const second = await subscribe(bucket, key, { seq_num: 0 }, { 'last-event-id': lastId });
      const more = await second.sse.records(2);
      assert.deepEqual(more.records.map((r) => r.body), ['b0', 'b1']);
      assert.equal(more.records[0].seq_num, 3);
      second.sse.close();
    });

    test('subscribe from timestamp_ms starts at the first record stamped at or after it', async () => {
      const { bucket, key } = await c.freshStream();
      await c.appendOk(bucket, key, [
        { body: 'a', timestamp_ms: 1000 }, { body: 'b', timestamp_ms: 2000 }, { body: 'c', timestamp_ms: 3000 },
      ]);
      const { sse } = await subscribe(bucket, key, { timestamp_ms: 1500 });
      const { records } = await sse.records(2);
      assert.deepEqual(records.map((r) => r.body), ['b', 'c']);
      sse.close();
    });

    test('subscribe from tail_offset starts that many records before the tail (as a read and gRPC Subscribe do); with another start it is 400', async () => {
      const { bucket, key } = await c.freshStream();
      await c.appendOk(bucket, key, bodies(5));
      const { sse } = await subscribe(bucket, key, { tail_offset: 2 });
      const { records } = await sse.records(2);
      assert.deepEqual(records.map((r) => r.seq_num), [3, 4]);
      sse.close();
      assertError(await c.get(`${streamPath(bucket, key)}/records/subscribe?tail_offset=1&seq_num=0`), 400, 'two starts');
    });

    test('subscribe without a start is 400', async () => {
      const { bucket, key } = await c.freshStream();
      const res = await c.get(`${streamPath(bucket, key)}/records/subscribe`);
      assertError(res, 400);
    });

    test('subscribe to a missing stream is 404', async () => {
      const bucket = await c.createBucket();
      assertError(await c.get(`${streamPath(bucket, 'nope')}/records/subscribe?seq_num=0`), 404);
    });

    test('subscribe to a deleted stream is 404', async () => {
      const { bucket, key } = await c.freshStream();
      await c.appendOk(bucket, key, bodies(1));
      assert.equal((await c.del(streamPath(bucket, key))).status, 204);
      assertError(await c.get(`${streamPath(bucket, key)}/records/subscribe?seq_num=0`), 404);
    });

    test('a subscription pending at the tail delivers records as they are appended', async () => {
      const { bucket, key } = await c.freshStream();
      // Start the subscription before anything exists; the server may hold headers until the first frame.
      const { response, ac } = startSubscribe(bucket, key, { seq_num: 0 });
      await c.appendOk(bucket, key, bodies(1, 'first'));
      const res = await response;
      assert.equal(res.status, 200);
      const sse = new SseReader(res.body!.getReader(), ac);
      open.push(sse);
      const one = await sse.records(1);
      assert.deepEqual(one.records.map((r) => r.body), ['first0']);
      // The subscription is now certainly live and caught up: a later append must arrive.
      await c.appendOk(bucket, key, bodies(2, 'live'));
      const two = await sse.records(2);
      assert.deepEqual(two.records.map((r) => [r.seq_num, r.body]), [[1, 'live0'], [2, 'live1']]);
      await c.appendOk(bucket, key, bodies(1, 'again'));
      const three = await sse.records(1);
      assert.deepEqual(three.records.map((r) => r.seq_num), [3]);
      sse.close();
    });

    test('a subscription starting at the tail delivers only new records', async () => {
      const { bucket, key } = await c.freshStream();
      await c.appendOk(bucket, key, bodies(2, 'old'));
      const { response, ac } = startSubscribe(bucket, key, { seq_num: 2 });
      await c.appendOk(bucket, key, bodies(1, 'new'));
      const res = await response;
      assert.equal(res.status, 200);
      const sse = new SseReader(res.body!.getReader(), ac);
      open.push(sse);
      const { records } = await sse.records(1);
      assert.deepEqual(records.map((r) => [r.seq_num, r.body]), [[2, 'new0']]);
      sse.close();
    });

    test('a start past the tail pends until the stream reaches it and starts there: nothing below it is sent', async () => {
      const { bucket, key } = await c.freshStream();
      let tail = (await c.appendOk(bucket, key, bodies(3, 'old'))).end.seq_num;
      for (const by of ['query', 'last-event-id']) {
        const start = tail + 2;
        const { response, ac } = by === 'query' ? startSubscribe(bucket, key, { seq_num: start }) : startSubscribe(bucket, key, {}, { 'last-event-id': String(start) });
        const res = await response;
        assert.equal(res.status, 200);
        const sse = new SseReader(res.body!.getReader(), ac);
        open.push(sse);
        tail = (await c.appendOk(bucket, key, bodies(4, 'new'))).end.seq_num; // one batch from below the start to past it
        const { records } = await sse.records(tail - start);
        assert.deepEqual(records.map((r) => r.seq_num), Array.from({ length: tail - start }, (_, i) => start + i), `${by}: starts at ${start}`);
        sse.close();
      }
    });

    test('records carry bodies, headers and base64 per field as in reads', async () => {
      const { bucket, key } = await c.freshStream();
      const bin = Buffer.from([0xff, 0x00, 0xfe]);
      await c.appendOk(bucket, key, [
        { body: 'text', headers: [{ name: 'h', value: 'v' }] },
        { body_b64: bin.toString('base64') },
      ]);
      const { sse } = await subscribe(bucket, key, { seq_num: 0 });
      const { records } = await sse.records(2);
      assert.equal(records[0].body, 'text');
      assert.deepEqual(records[0].headers, [{ name: 'h', value: 'v' }]);
      assert.equal(records[1].body_b64, bin.toString('base64'));
      assert.ok(!('body' in records[1]));
      assert.ok(!('headers' in records[1]), 'headers omitted when empty');
      sse.close();
    });

    test('many records arrive in order across batches', async () => {
      const { bucket, key } = await c.freshStream();
      await c.appendOk(bucket, key, Array.from({ length: 2500 }, (_, i) => ({ body: `m${i}` })));
      const { sse } = await subscribe(bucket, key, { seq_num: 0 });
      const { records, frames } = await sse.records(2500);
      assert.equal(records.length, 2500);
      records.forEach((r, i) => assert.equal(r.seq_num, i));
      let expectNext = 0;
      for (const f of frames) {
        assert.equal(f.json.records[0].seq_num, expectNext, 'frames tile the stream');
        expectNext = Number(f.id);
      }
      sse.close();
    });

    test('deleting the stream ends the SSE stream', async () => {
      const { bucket, key } = await c.freshStream();
      await c.appendOk(bucket, key, bodies(1));
      const { sse } = await subscribe(bucket, key, { seq_num: 0 });
      await sse.records(1);
      assert.equal((await c.del(streamPath(bucket, key))).status, 204);
      const after = await sse.end();
      for (const f of after) assert.ok(!f.json?.records?.length, 'no record is delivered after the delete');
      sse.close();
    });

    test('a subscriber disconnecting does not disturb the stream or other subscribers', async () => {
      const { bucket, key } = await c.freshStream();
      await c.appendOk(bucket, key, bodies(1));
      const a = await subscribe(bucket, key, { seq_num: 0 });
      const b = await subscribe(bucket, key, { seq_num: 0 });
      await a.sse.records(1);
      await b.sse.records(1);
      a.sse.close();
      await c.appendOk(bucket, key, bodies(1, 'x'));
      const { records } = await b.sse.records(1);
      assert.deepEqual(records.map((r) => r.body), ['x0']);
      b.sse.close();
      assert.equal((await c.tail(bucket, key)).seq_num, 2);
    });
  });
}
