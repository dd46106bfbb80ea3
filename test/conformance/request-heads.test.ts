// Malformed request heads (issue 18; the 200 KB head of issue 14) over raw sockets, on both engines.
// node:http answers every one with the error envelope and the status that fits (400, 404, 405 with
// Allow, 408, 431) and closes the connection; heads that do not arrive whole are answered 408 after
// REQUEST_HEAD_MS_MAX. uWS (20.30) answers what reaches JavaScript (a repeated Content-Length, a
// CONNECT) and drops the rest in native code before any handler runs (README: "Request heads");
// there the test holds it to closing the connection rather than holding it open, and to serving on.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, startServer, type Engine, type RunningServer } from '../helpers/server.ts';
import { rawConn } from '../helpers/raw-conn.ts';
import { healthz, stopServer } from './client.ts';
import { REQUEST_HEAD_BYTES_MAX, REQUEST_HEAD_CHECK_MS, REQUEST_HEAD_MS_MAX, REQUEST_HEADERS_MAX } from '../../src/config/limits.ts';

/** uWS closes an idle HTTP connection after its fixed 10 s timeout, checked every few seconds. */
const UWS_IDLE_CLOSE_MS_MAX = 20_000;
/** How long a step waits for an answer or a close it expects (a bounded wait, not a timed assertion). */
const WAIT_MS = REQUEST_HEAD_MS_MAX + REQUEST_HEAD_CHECK_MS + UWS_IDLE_CLOSE_MS_MAX;

interface Outcome { text: string; closed: boolean }

/** Sends `bytes` on a fresh connection; resolves once the star closed it, or answered whole and
 *  `keepOpen` holds, or WAIT_MS passed. */
async function exchange(port: number, bytes: string | Buffer, keepOpen = false): Promise<Outcome> {
  const c = await rawConn(port);
  c.sock.on('error', () => undefined);
  c.sock.write(bytes);
  const t0 = Date.now();
  const whole = (): boolean => {
    const t = c.text();
    const end = t.indexOf('\r\n\r\n');
    const len = /content-length: (\d+)/i.exec(t.slice(0, end));
    return end >= 0 && len !== null && t.length >= end + 4 + Number(len[1]);
  };
  while (!c.closed() && !(keepOpen && whole()) && Date.now() - t0 < WAIT_MS) await new Promise((r) => setTimeout(r, 20));
  const out = { text: c.text(), closed: c.closed() };
  c.sock.destroy();
  return out;
}

function answer(o: Outcome): { status: number; headers: string; body: any } {
  const end = o.text.indexOf('\r\n\r\n');
  assert.ok(end > 0, `an answer came: ${JSON.stringify(o.text.slice(0, 200))}`);
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(o.text)?.[1]);
  let body: any;
  try { body = JSON.parse(o.text.slice(end + 4)); } catch { body = undefined; }
  return { status, headers: o.text.slice(0, end), body };
}

/** The spec's envelope with `status`, and the connection closed. */
function assertRefused(o: Outcome, status: number, what: string): string {
  const a = answer(o);
  assert.equal(a.status, status, `${what}: ${o.text.slice(0, 300)}`);
  assert.match(a.headers, /^content-type: application\/json/im, what);
  assert.equal(typeof a.body?.error, 'string', `${what}: envelope`);
  assert.match(a.headers, /^connection: close/im, `${what}: Connection: close`);
  assert.equal(o.closed, true, `${what}: the connection is closed`);
  return a.headers;
}

/** uWS drops the head natively: no answer, but the connection is closed, never held. */
function assertDropped(o: Outcome, what: string): void {
  assert.equal(o.text, '', `${what}: uWS answers nothing here`);
  assert.equal(o.closed, true, `${what}: the connection is closed rather than held open`);
}

const head = (lines: string[]): string => `${lines.join('\r\n')}\r\n\r\n`;
const fields = (n: number): string[] => Array.from({ length: n }, (_, i) => `X-F${i}: v`);

interface Case {
  name: string;
  bytes: string;
  /** What each engine does: a refusal with a status (and Allow) and a close, an answer like any other
   *  (the connection kept), or a native drop. */
  expect: Record<Engine, { refused: number; allow?: string } | { served: number; allow?: string } | 'dropped'>;
}

const CASES: Case[] = [
  {
    name: 'an unknown method on a served path', bytes: head(['FOO /v1/buckets HTTP/1.1', 'Host: x']),
    expect: { node: { refused: 405, allow: 'GET, HEAD' }, uws: 'dropped' },
  },
  {
    name: 'an unknown method on an unknown path', bytes: head(['PURGEX /v1/nothing/here HTTP/1.1', 'Host: x']),
    expect: { node: { refused: 404 }, uws: 'dropped' },
  },
  {
    name: 'CONNECT to a served path', bytes: head(['CONNECT /v1/buckets HTTP/1.1', 'Host: x']),
    expect: { node: { refused: 405, allow: 'GET, HEAD' }, uws: { served: 405, allow: 'GET, HEAD' } },
  },
  {
    name: `more than ${REQUEST_HEADERS_MAX} header fields`, bytes: head(['GET /healthz HTTP/1.1', 'Host: x', ...fields(REQUEST_HEADERS_MAX + 20)]),
    expect: { node: { refused: 431 }, uws: 'dropped' },
  },
  {
    name: 'a 200 KB request head', bytes: head(['GET /healthz HTTP/1.1', 'Host: x', `X-Big: ${'a'.repeat(200 * 1024)}`]),
    expect: { node: { refused: 431 }, uws: 'dropped' },
  },
  {
    name: `a head just over ${REQUEST_HEAD_BYTES_MAX} bytes`, bytes: head(['GET /healthz HTTP/1.1', 'Host: x', `X-Big: ${'a'.repeat(REQUEST_HEAD_BYTES_MAX)}`]),
    expect: { node: { refused: 431 }, uws: { served: 200 } },
  },
  {
    name: 'Content-Length 2^31 on an append', bytes: head(['POST /v1/streams/b/k/records HTTP/1.1', 'Host: x', `Content-Length: ${2 ** 31}`]),
    expect: { node: { refused: 400 }, uws: 'dropped' },
  },
  {
    name: 'Content-Length 2^64', bytes: head(['POST /v1/streams/b/k/records HTTP/1.1', 'Host: x', 'Content-Length: 18446744073709551616']),
    expect: { node: { refused: 400 }, uws: 'dropped' },
  },
  {
    name: 'a negative Content-Length', bytes: head(['POST /v1/streams/b/k/records HTTP/1.1', 'Host: x', 'Content-Length: -1']),
    expect: { node: { refused: 400 }, uws: 'dropped' },
  },
  {
    name: 'two different Content-Length fields', bytes: `${head(['POST /v1/streams/b/k/records HTTP/1.1', 'Host: x', 'Content-Length: 2', 'Content-Length: 30'])}{}`,
    expect: { node: { refused: 400 }, uws: { refused: 400 } },
  },
  {
    name: 'two equal Content-Length fields', bytes: `${head(['POST /v1/buckets/cl2 HTTP/1.1', 'Host: x', 'Content-Length: 2', 'Content-Length: 2'])}{}`,
    expect: { node: { refused: 400 }, uws: { refused: 400 } },
  },
  {
    name: 'an absolute-form request line (RFC 9112 3.2.2: served)', bytes: head(['GET http://x/healthz HTTP/1.1', 'Host: x']),
    expect: { node: { served: 200 }, uws: 'dropped' },
  },
  {
    name: 'an HTTP/1.1 request without Host (RFC 9112 3.2)', bytes: head(['GET /v1/buckets HTTP/1.1']),
    expect: { node: { refused: 400 }, uws: 'dropped' },
  },
  {
    name: 'Host given twice (RFC 9112 3.2)', bytes: head(['GET /v1/buckets HTTP/1.1', 'Host: x', 'Host: y']),
    expect: { node: { refused: 400 }, uws: { refused: 400 } },
  },
  {
    name: 'Host given twice on an append (RFC 9112 3.2)', bytes: `${head(['POST /v1/streams/b/k/records HTTP/1.1', 'host: x', 'Content-Length: 2', 'HOST: x'])}{}`,
    expect: { node: { refused: 400 }, uws: { refused: 400 } },
  },
  {
    name: 'a head that never ends', bytes: 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n',
    expect: { node: { refused: 408 }, uws: 'dropped' },
  },
];

// The engines run side by side, each on its own star: each engine's cases wait out the 10 s head and idle timeouts.
describe('both engines', { concurrency: true }, () => {
  for (const engine of ENGINES) {
    describe(`malformed request heads (${engine})`, () => {
      let srv: RunningServer;
      before(async () => { srv = await startServer({ engine }); });
      after(() => stopServer(srv));

      // The cases run together: the slow ones wait out a timeout, and each has its own connection.
      test('each is answered with the status that fits and closed, or (uWS, natively) closed; the star keeps serving', async () => {
        const outcomes = await Promise.all(CASES.map((k) => {
          const e = k.expect[engine];
          return exchange(srv.port, k.bytes, typeof e === 'object' && 'served' in e);
        }));
        CASES.forEach((k, i) => {
          const e = k.expect[engine];
          const o = outcomes[i];
          if (e === 'dropped') assertDropped(o, k.name);
          else if ('served' in e) {
            // Answered as any request is, on a connection that stays open.
            const a = answer(o);
            assert.equal(a.status, e.served, `${k.name}: ${o.text.slice(0, 200)}`);
            if (e.allow) assert.equal(/^allow: (.*)$/im.exec(a.headers)?.[1], e.allow, `${k.name}: Allow`);
          } else {
            const headers = assertRefused(o, e.refused, k.name);
            if (e.allow) assert.equal(/^allow: (.*)$/im.exec(headers)?.[1], e.allow, `${k.name}: Allow`);
          }
        });
        assert.equal(await healthz(srv.baseUrl), 200, 'the star keeps serving');
      });
    });
  }
});
