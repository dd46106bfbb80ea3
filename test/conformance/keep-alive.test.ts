// One keep-alive connection stays usable across early answers (raw sockets, both engines): a HEAD
// answer never carries a body, an error's included, so the next answer is not misread; and an answer
// given before the body was read (a 404 on an unknown path) waits for a small body to arrive, so the
// connection is neither reset nor confused by the body's bytes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, startServer, type RunningServer } from '../helpers/server.ts';
import { stopServer } from './client.ts';
import { rawConn } from '../helpers/raw-conn.ts';

/** How long to wait for the answers a step expects. */
const ANSWER_WAIT_MS = 5000;

/** Waits until `count` answers (status lines) arrived, or the wait runs out. */
async function answers(c: { text(): string }, count: number): Promise<string[]> {
  const t0 = Date.now();
  for (;;) {
    const lines = c.text().match(/HTTP\/1\.1 \d{3}/g) ?? [];
    if (lines.length >= count || Date.now() - t0 > ANSWER_WAIT_MS) return lines;
    await new Promise((r) => setTimeout(r, 10));
  }
}

for (const engine of ENGINES) {
  describe(`keep-alive across early answers (${engine})`, () => {
    let srv: RunningServer;
    before(async () => { srv = await startServer({ engine }); });
    after(() => stopServer(srv));

    test('a HEAD that fails answers without a body, and the next request on the connection is served', async () => {
      const c = await rawConn(srv.port);
      try {
        c.sock.write('HEAD /v1/no/such/path HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
        assert.deepEqual(await answers(c, 2), ['HTTP/1.1 404', 'HTTP/1.1 200']);
        const head = c.text().slice(0, c.text().indexOf('HTTP/1.1 200'));
        assert.ok(head.endsWith('\r\n\r\n'), `the HEAD answer ends at its headers: ${JSON.stringify(head)}`);
        assert.match(c.text(), /\{"status":"ok"\}/);
      } finally {
        c.sock.destroy();
      }
    });

    test('a 204 carries no Content-Length (RFC 9110 8.6), and the next request on the connection is served', async () => {
      const base = `http://127.0.0.1:${srv.port}`;
      assert.equal((await fetch(`${base}/v1/buckets/nocl`, { method: 'POST', body: '{}' })).status, 201);
      assert.equal((await fetch(`${base}/v1/streams/nocl/s`, { method: 'POST', body: '{}' })).status, 201);
      const c = await rawConn(srv.port);
      try {
        c.sock.write('DELETE /v1/streams/nocl/s HTTP/1.1\r\nHost: x\r\n\r\n');
        assert.deepEqual(await answers(c, 1), ['HTTP/1.1 204']);
        c.sock.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
        assert.deepEqual(await answers(c, 2), ['HTTP/1.1 204', 'HTTP/1.1 200']);
        const answer204 = c.text().slice(0, c.text().indexOf('HTTP/1.1 200'));
        assert.ok(answer204.endsWith('\r\n\r\n'), `the 204 ends at its headers: ${JSON.stringify(answer204)}`);
        assert.doesNotMatch(answer204, /content-length/i);
      } finally {
        c.sock.destroy();
      }
    });

    test('a HEAD of a resource answers GET\'s status and headers, with GET\'s Content-Length, without a body', async () => {
      const base = `http://127.0.0.1:${srv.port}`;
      assert.equal((await fetch(`${base}/v1/buckets/headb`, { method: 'POST', body: '{}' })).status, 201);
      const get = await fetch(`${base}/v1/buckets/headb`);
      const getLength = (await get.text()).length;
      const c = await rawConn(srv.port);
      try {
        c.sock.write('HEAD /v1/buckets/headb HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
        assert.deepEqual(await answers(c, 2), ['HTTP/1.1 200', 'HTTP/1.1 200']);
        const head = c.text().slice(0, c.text().indexOf('HTTP/1.1 200', 1));
        assert.ok(head.endsWith('\r\n\r\n'), `the HEAD answer ends at its headers: ${JSON.stringify(head)}`);
        assert.match(head, /content-type: application\/json/i);
        const length = /content-length: (\d+)/i.exec(head)?.[1];
        // RFC 9110 §8.6: a HEAD's Content-Length, when sent, is GET's.
        assert.equal(Number(length), getLength, head);
        assert.equal((head.match(/content-length:/gi) ?? []).length, 1, head);
      } finally {
        c.sock.destroy();
      }
    });

    // uWS closes a connection whose next request arrives while an answer is pending (README: request
    // heads); node:http takes pipelined requests, and must take effect in the order they were sent.
    test('pipelined requests take effect in the order sent: a large append before a small one, then a bucket and a tail behind them', { skip: engine === 'uws' ? 'uWS closes pipelined connections (README, request heads)' : false }, async () => {
      const base = `http://127.0.0.1:${srv.port}`;
      assert.equal((await fetch(`${base}/v1/buckets/pipe`, { method: 'POST', body: '{}' })).status, 201);
      assert.equal((await fetch(`${base}/v1/streams/pipe/s`, { method: 'POST', body: '{}' })).status, 201);
      const post = (path: string, body: string): string => `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      const c = await rawConn(srv.port);
      try {
        // The first body is large enough to be parsed off the event loop; the second is not.
        c.sock.write(post('/v1/streams/pipe/s/records', JSON.stringify({ records: [{ body: 'A'.repeat(400_000) }] }))
          + post('/v1/streams/pipe/s/records', '{"records":[{"body":"B"}]}')
          + post('/v1/buckets/pipe2', '{}')
          + 'GET /v1/buckets/pipe2 HTTP/1.1\r\nHost: x\r\n\r\n'
          + 'GET /v1/streams/pipe/s/records/tail HTTP/1.1\r\nHost: x\r\n\r\n');
        assert.deepEqual(await answers(c, 5), ['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 201', 'HTTP/1.1 200', 'HTTP/1.1 200']);
        assert.deepEqual([...c.text().matchAll(/"start":\{"seq_num":(\d+)/g)].map((m) => Number(m[1])), [0, 1], 'acked in the order sent');
        assert.match(c.text(), /\{"seq_num":2,"timestamp_ms":\d+\}$/, 'the tail behind them sees both');
      } finally {
        c.sock.destroy();
      }
      const read = await (await fetch(`${base}/v1/streams/pipe/s/records?seq_num=0`)).json() as { records: { body: string }[] };
      assert.deepEqual(read.records.map((r) => r.body[0]), ['A', 'B'], 'stored in the order sent');
    });

    test('a 404 given before a small body arrived waits for it; the connection keeps serving', async () => {
      const c = await rawConn(srv.port);
      try {
        c.sock.write('POST /v1/no/such/path HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n');
        await new Promise((r) => setTimeout(r, 100)); // the body comes in a later packet
        c.sock.write('{"a":"bc"}\n');
        c.sock.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
        assert.deepEqual(await answers(c, 2), ['HTTP/1.1 404', 'HTTP/1.1 200']);
        assert.match(c.text(), /\{"error":"[^"]+"\}/);
        assert.equal(c.closed(), false);
      } finally {
        c.sock.destroy();
      }
    });

    test('a body that stalls is not waited for: the early answer comes, with the connection closed', async () => {
      const c = await rawConn(srv.port);
      try {
        c.sock.write('POST /v1/no/such/path HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":');
        assert.deepEqual(await answers(c, 1), ['HTTP/1.1 404'], 'answered although 93 body bytes never came');
        for (let i = 0; i < 100 && !c.closed(); i++) await new Promise((r) => setTimeout(r, 20));
        assert.equal(c.closed(), true, 'and the connection is closed, since the rest of the body is unread');
      } finally {
        c.sock.destroy();
      }
    });

    test('a request that asks to close (Connection: close) is answered with Connection: close once, and the connection is closed (RFC 9112 9.6)', async () => {
      for (const [what, request] of [
        ['a GET', 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
        ['an answer with no body', 'DELETE /v1/buckets/no-such-bucket-here HTTP/1.1\r\nHost: x\r\nconnection: keep-alive, Close\r\n\r\n'],
        ['a POST', 'POST /v1/buckets/no-such/x HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}'],
        ['a HEAD (fetch asks to close after every HEAD)', 'HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
      ] as const) {
        const c = await rawConn(srv.port);
        try {
          c.sock.write(request);
          for (let i = 0; i < ANSWER_WAIT_MS / 20 && !c.closed(); i++) await new Promise((r) => setTimeout(r, 20));
          const head = c.text().slice(0, c.text().indexOf('\r\n\r\n'));
          assert.match(head, /^HTTP\/1\.1 \d{3} /, `${what}: answered`);
          assert.equal(head.match(/^connection: close$/gim)?.length ?? 0, 1, `${what}: one Connection: close in ${JSON.stringify(head)}`);
          assert.equal(c.closed(), true, `${what}: the connection is closed`);
          // A HEAD still says its GET's length (RFC 9110 8.6): /healthz answers {"status":"ok"}.
          if (request.startsWith('HEAD')) assert.match(head, /^content-length: 15$/im, `${what}: GET's Content-Length`);
        } finally {
          c.sock.destroy();
        }
      }
    });

    test('a subscribe sent with an 8 MiB body opens its stream, and the star keeps serving', async () => {
      const c = await rawConn(srv.port);
      try {
        await fetch(`${srv.baseUrl}/v1/buckets/ka`, { method: 'POST', body: '{}' });
        await fetch(`${srv.baseUrl}/v1/streams/ka/s`, { method: 'POST', body: '{}' });
        const chunk = 'x'.repeat(1 << 20);
        c.sock.write(`GET /v1/streams/ka/s/records/subscribe?seq_num=0 HTTP/1.1\r\nHost: x\r\nContent-Length: ${8 * chunk.length}\r\n\r\n`);
        for (let i = 0; i < 8; i++) c.sock.write(chunk);
        assert.deepEqual(await answers(c, 1), ['HTTP/1.1 200'], 'the stream opens');
        assert.match(c.text(), /text\/event-stream/);
        assert.equal((await fetch(`${srv.baseUrl}/healthz`)).status, 200, 'the star keeps serving');
      } finally {
        c.sock.destroy();
      }
    });
  });
}
