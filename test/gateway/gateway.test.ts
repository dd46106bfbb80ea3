// The Gateway as a real child process (`svcd gateway`) in front of a real star: virtual hosts,
// /healthz outside everything, event streams through it, edge verification answering 401/403
// before the star is reached, the svc_aux.limits ceilings, and its refusals to start.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, type IncomingHttpHeaders } from 'node:http';
import { removeDir, startServer, type RunningServer } from '../helpers/server.ts';
import { GATEWAY_START_WAIT_MS, runRefusedGateway, startGatewayChild, type Gateway } from './child.ts';
import { JWT_SECRET, mint } from '../grpc/child.ts';
import { SSE_HEARTBEAT_MS, STREAM_END_FLUSH_MS_MAX } from '../../src/config/limits.ts';
import { closedPort } from '../helpers/ports.ts';
import { rawConn } from '../helpers/raw-conn.ts';

const START_WAIT_MS = GATEWAY_START_WAIT_MS;
const ZONE = 'svc.test';
/** A head the gateway refuses is answered within this long, or the test fails instead of waiting. */
const RAW_ANSWER_WAIT_MS = 5000;
/** How long after a paused stream's frame its heartbeat (due SSE_HEARTBEAT_MS after it) may come
 *  before the test calls it missing: a liveness bound, inside the test's 50 s of read debt. */
const HEARTBEAT_WAIT_MS_MAX = SSE_HEARTBEAT_MS + 25_000;

interface Answer { status: number; headers: IncomingHttpHeaders; text: string }

/** One request with its own Host header (fetch does not let a caller set Host). */
function onHost(host: string, url: string, method = 'GET', body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { host, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => { text += c.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
/** How long the expiry test waits for a stream whose token lives 2 s to end (a bound on a hang). */
const EXPIRY_FRAME_WAIT_MS = 30_000;
/** Frames a star sends in the held-frames test, one record each (far more than a 1 B/s budget passes). */
const HELD_FRAMES = 20;
/** Pipelined append-then-tail pairs, each on a new connection. */
const PIPELINE_ROUNDS = 4;
/** Appends (4 records of STALLED_BODY each) made before a caller that stops reading subscribes. */
const STALLED_APPENDS = 12;
const STALLED_BODY = 's'.repeat(512 * 1024);
const bearer = (token: string, init: RequestInit = {}): RequestInit => ({ ...init, headers: { ...(init.headers as Record<string, string> ?? {}), authorization: `Bearer ${token}` } });

describe('gateway: hosts, health and event streams (auth off)', () => {
  let star: RunningServer;
  let gw: Gateway;
  before(async () => {
    star = await startServer();
    gw = await startGatewayChild(['--upstream', star.baseUrl, '--dns-zone', ZONE]);
  });
  after(async () => {
    await gw.stop();
    await star.stop();
    removeDir(star.dataDir);
  });

  test('bucket hosts carry the bucket; api and other hosts are path-style; other paths on a bucket host are 404', async () => {
    let r = await onHost(`api.${ZONE}`, `${gw.url}/v1/buckets/orders`, 'POST', '{"create_stream_on_append":true}');
    assert.equal(r.status, 201, r.text);
    r = await onHost(`orders.${ZONE}`, `${gw.url}/v1/streams/eu%2F1/records`, 'POST', '{"records":[{"body":"via host"}]}');
    assert.equal(r.status, 200, r.text);
    const read = await fetch(`${gw.url}/v1/streams/orders/eu%2F1/records?seq_num=0`);
    assert.equal(read.status, 200);
    assert.deepEqual(((await read.json()) as { records: { body: string }[] }).records.map((x) => x.body), ['via host'], 'path-style sees the same stream');
    r = await onHost(`orders.${ZONE}:8080`, `${gw.url}/v1/streams/eu%2F1/records/tail`);
    assert.equal(r.status, 200, 'a port in Host changes nothing');
    assert.equal(r.headers.uwebsockets, undefined, 'the star\'s engine header is not relayed');
    assert.equal((JSON.parse(r.text) as { seq_num: number }).seq_num, 1);
    // A dotted bucket name is a bucket host too, the whole label before the zone.
    r = await onHost(`api.${ZONE}`, `${gw.url}/v1/buckets/eu.orders`, 'POST', '{"create_stream_on_append":true}');
    assert.equal(r.status, 201, r.text);
    r = await onHost(`eu.orders.${ZONE}`, `${gw.url}/v1/streams/k/records`, 'POST', '{"records":[{"body":"dotted"}]}');
    assert.equal(r.status, 200, r.text);
    // A label that is no bucket name (a space, '?', '/') names no bucket host: 404, not spliced into the
    // path (a space was a 500, '?' and '/' reached other routes).
    for (const [host, path] of [
      [`orders.${ZONE}`, '/v1/buckets'], [`orders.${ZONE}`, '/v1/buckets/orders'],
      [`a b.${ZONE}`, '/v1/streams/k/records/tail'], [`orders?.${ZONE}`, '/v1/streams/x'], [`orders/eu%2F1/records.${ZONE}`, '/v1/streams/tail'],
    ]) {
      r = await onHost(host, `${gw.url}${path}`);
      assert.equal(r.status, 404, `${host}${path}`);
      assert.equal(r.headers['content-type'], 'application/json');
      assert.equal(typeof (JSON.parse(r.text) as { error: unknown }).error, 'string');
    }
    for (const name of ['api', 'API', 'Api']) {
      r = await onHost(`api.${ZONE}`, `${gw.url}/v1/buckets/${name}`, 'POST', '{}');
      assert.equal(r.status, 400, `${name}: api is reserved in any case (hosts ignore case), never a bucket`);
    }
    r = await onHost('elsewhere.example', `${gw.url}/v1/buckets/orders`);
    assert.equal(r.status, 200, 'a host outside the zone is path-style');
  });

  test('a star\'s answer given before it read a large body reaches the caller through the gateway, not a 503', async () => {
    // The star answers 415 (a compressed body) or 404 (a bad segment) at once; it used to hang up on a
    // body past 64 KiB, and the gateway, still sending it, lost the answer to the broken pipe.
    const big = 'a'.repeat(1024 * 1024);
    assert.equal((await fetch(`${gw.url}/v1/buckets/early`, { method: 'POST', body: '{}' })).status, 201);
    for (let i = 0; i < 4; i++) {
      let r = await fetch(`${gw.url}/v1/streams/early/k/records`, { method: 'POST', body: big, headers: { 'content-encoding': 'gzip' } });
      assert.equal(r.status, 415, await r.text());
      r = await fetch(`${gw.url}/v1/streams/early/%ZZ/records`, { method: 'POST', body: big });
      assert.equal(r.status, 404, await r.text());
    }
  });

  test('heads a uWS star would drop are answered by the gateway itself, at once, in the envelope', { timeout: 30_000 }, async () => {
    const port = Number(new URL(gw.url).port);
    /** One raw request on its own connection: the status line and the JSON body of its answer. */
    const raw = async (head: string): Promise<{ status: number; text: string }> => {
      const c = await rawConn(port);
      try {
        c.sock.write(head);
        for (const until = Date.now() + RAW_ANSWER_WAIT_MS; Date.now() < until && !/\r\n\r\n[\s\S]*\}/.test(c.text()) && !c.closed();) {
          await new Promise((r) => setTimeout(r, 10));
        }
        return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(c.text())?.[1] ?? 0), text: c.text() };
      } finally {
        c.sock.destroy();
      }
    };
    const envelope = (r: { status: number; text: string }, status: number, what: string): void => {
      assert.equal(r.status, status, `${what}: ${r.text}`);
      assert.match(r.text, /content-type: application\/json/i, what);
      assert.equal(typeof (JSON.parse(r.text.slice(r.text.indexOf('\r\n\r\n') + 4)) as { error?: unknown }).error, 'string', what);
    };
    assert.equal((await fetch(`${gw.url}/v1/buckets/heads`, { method: 'POST', body: '{}' })).status, 201);
    // An absolute-form target is served (RFC 9112 3.2.2), /healthz included.
    const r = await raw('GET http://gw.example/v1/buckets/heads HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.equal(r.status, 200, r.text);
    assert.match(r.text, /"name":"heads"/);
    assert.equal((await raw('GET http://gw.example/healthz HTTP/1.1\r\nHost: x\r\n\r\n')).status, 200);
    envelope(await raw('OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n'), 404, 'asterisk-form');
    const many = Array.from({ length: 120 }, (_, i) => `X-F${i}: v\r\n`).join('');
    envelope(await raw(`GET /v1/buckets/heads HTTP/1.1\r\nHost: x\r\n${many}\r\n`), 431, '120 header fields');
    envelope(await raw('POST /v1/streams/heads/s/records HTTP/1.1\r\nHost: x\r\nContent-Length: 1073741824\r\n\r\n{"rec'), 400, 'a body past every route\'s');
    envelope(await raw('POST /v1/buckets/heads HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}'), 400, 'Content-Length twice');
    envelope(await raw('FOO /v1/buckets/heads HTTP/1.1\r\nHost: x\r\n\r\n'), 405, 'an unknown method');
    envelope(await raw('CONNECT /v1/buckets/heads HTTP/1.1\r\nHost: x\r\n\r\n'), 405, 'CONNECT');
    // Methods node:http parses and uWS does not: the star would hang up, which the Gateway would
    // have answered 503 with Retry-After, for a request no retry can serve.
    for (const method of ['PROPFIND', 'QUERY', 'PURGE']) {
      const answered = await raw(`${method} /v1/buckets/heads HTTP/1.1\r\nHost: x\r\n\r\n`);
      envelope(answered, 405, method);
      assert.match(answered.text, /\r\nallow: POST, GET, HEAD, PUT, DELETE\r\n/i, method);
    }
    envelope(await raw('PROPFIND /v2/nothing HTTP/1.1\r\nHost: x\r\n\r\n'), 404, 'PROPFIND on no route');
    envelope(await raw(`GET /v1/buckets/heads HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`), 431, 'a 20 kB head');
  });

  test('/healthz answers 200 on any host; a star that does not answer is 503 with Retry-After', async () => {
    for (const host of [`orders.${ZONE}`, `api.${ZONE}`, 'elsewhere']) {
      const r = await onHost(host, `${gw.url}/healthz`);
      assert.equal(r.status, 200, host);
    }
    const lonely = await startGatewayChild(['--upstream', `http://127.0.0.1:${await closedPort()}`]);
    try {
      const r = await fetch(`${lonely.url}/v1/buckets`);
      assert.equal(r.status, 503);
      assert.equal(r.headers.get('retry-after'), '1');
      assert.equal((await fetch(`${lonely.url}/healthz`)).status, 200);
    } finally {
      await lonely.stop();
    }
  });

  test('an event stream flows through the gateway, on a bucket host, as records commit', async () => {
    assert.equal((await fetch(`${gw.url}/v1/streams/orders/live`, { method: 'POST', body: '{}' })).status, 201);
    const received = new Promise<string>((resolve, reject) => {
      const req = request(`${gw.url}/v1/streams/live/records/subscribe?seq_num=0`, { headers: { host: `orders.${ZONE}` } }, (res) => {
        if (res.statusCode !== 200 || !/text\/event-stream/.test(res.headers['content-type'] ?? '')) {
          reject(new Error(`subscribe answered ${res.statusCode} ${res.headers['content-type']}`));
          return;
        }
        let text = '';
        res.on('data', (c: Buffer) => {
          text += c.toString();
          if (text.includes('"pushed"')) { resolve(text); req.destroy(); }
        });
        // The append goes in once the stream is open, so the record arrives live.
        void fetch(`${gw.url}/v1/streams/orders/live/records`, { method: 'POST', body: '{"records":[{"body":"pushed"}]}' });
      });
      req.on('error', (err) => { if (!(err as NodeJS.ErrnoException).code?.includes('ECONNRESET')) reject(err); });
      req.end();
    });
    assert.match(await received, /id: 1\ndata: \{"records":\[\{"seq_num":0,/);
  });

  test('a request pipelined behind an append is answered after it: the tail it reads includes the append', async () => {
    assert.equal((await fetch(`${star.baseUrl}/v1/buckets/pipe`, { method: 'POST', body: '{"create_stream_on_append":true}' })).status, 201);
    for (let round = 0; round < PIPELINE_ROUNDS; round++) {
      const conn = await rawConn(Number(new URL(gw.url).port));
      try {
        const body = JSON.stringify({ records: [{ body: `r${round}` }] });
        conn.sock.write(`POST /v1/streams/pipe/k/records HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
          + 'GET /v1/streams/pipe/k/records/tail HTTP/1.1\r\nHost: x\r\n\r\n');
        const answered = (): RegExpMatchArray[] => [...conn.text().matchAll(/HTTP\/1\.1 (\d+)[^]*?\r\n\r\n(\{[^\r]*?\})(?=HTTP|$)/g)];
        for (const until = Date.now() + RAW_ANSWER_WAIT_MS; answered().length < 2 && Date.now() < until;) await new Promise((r) => setTimeout(r, 20));
        const [append, tail] = answered();
        assert.ok(append && tail, `two answers: ${conn.text()}`);
        const ack = JSON.parse(append[2]) as { end: { seq_num: number } };
        assert.equal((JSON.parse(tail[2]) as { seq_num: number }).seq_num, ack.end.seq_num, `round ${round}: the tail read before the append was answered`);
      } finally { conn.sock.destroy(); }
    }
  });

  test(`a caller that stops reading an event stream is disconnected by the gateway after --sse-stall-ms (the star's own cut is never seen through the paused relay)`, { timeout: 60_000 }, async () => {
    const stallMs = 3000;
    const edge = await startGatewayChild(['--upstream', star.baseUrl, '--sse-stall-ms', String(stallMs)]);
    const conn = await rawConn(Number(new URL(edge.url).port));
    try {
      assert.equal((await fetch(`${star.baseUrl}/v1/buckets/stall`, { method: 'POST', body: '{"create_stream_on_append":true,"create_stream_on_read":true}' })).status, 201);
      conn.sock.write('GET /v1/streams/stall/k/records/subscribe?seq_num=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      for (const until = Date.now() + RAW_ANSWER_WAIT_MS; !conn.text().includes('\r\n\r\n') && Date.now() < until;) await new Promise((r) => setTimeout(r, 20));
      assert.match(conn.text(), /^HTTP\/1\.1 200/, conn.text().slice(0, 300));
      conn.sock.pause(); // the caller stops reading
      for (let i = 0; i < STALLED_APPENDS; i++) {
        const r = await fetch(`${star.baseUrl}/v1/streams/stall/k/records`, { method: 'POST', body: JSON.stringify({ records: Array.from({ length: 4 }, () => ({ body: STALLED_BODY })) }) });
        assert.equal(r.status, 200, await r.text());
      }
      await new Promise((r) => setTimeout(r, stallMs + 5000));
      conn.sock.resume();
      for (const until = Date.now() + RAW_ANSWER_WAIT_MS; !conn.closed() && Date.now() < until;) await new Promise((r) => setTimeout(r, 50));
      assert.ok(conn.closed(), 'the stalled caller is still connected: it would be held for as long as it does not read');
    } finally {
      conn.sock.destroy();
      await edge.stop();
    }
  });
});

describe('gateway: edge verification and limits (auth jwt)', () => {
  const env = { SVCD_JWT_HMAC_SECRET: JWT_SECRET };
  let star: RunningServer;
  let gw: Gateway;
  before(async () => {
    star = await startServer({ args: ['--auth', 'jwt', '--insecure-auth'], env });
    gw = await startGatewayChild(['--upstream', star.baseUrl, '--auth', 'jwt', '--insecure-auth', '--gateway-limits'], env);
    const admin = await mint('svc:admin', 600);
    const r = await fetch(`${star.baseUrl}/v1/buckets/lim`, bearer(admin, { method: 'POST', body: '{"create_stream_on_append":true,"create_stream_on_read":true}' }));
    assert.equal(r.status, 201);
  });
  after(async () => {
    await gw.stop();
    await star.stop();
    removeDir(star.dataDir);
  });

  test('401 without a valid token and 403 without a grant, decided at the edge (the star is not even up)', async () => {
    const edge = await startGatewayChild(['--upstream', `http://127.0.0.1:${await closedPort()}`, '--auth', 'jwt', '--insecure-auth'], env);
    try {
      let r = await fetch(`${edge.url}/v1/streams/lim/k/records?seq_num=0`);
      assert.equal(r.status, 401);
      assert.equal(typeof ((await r.json()) as { error: unknown }).error, 'string');
      r = await fetch(`${edge.url}/v1/streams/lim/k/records?seq_num=0`, bearer('not.a.jwt'));
      assert.equal(r.status, 401);
      r = await fetch(`${edge.url}/v1/streams/lim/k/records?seq_num=0`, bearer(await mint('svc:read:other:*', 60)));
      assert.equal(r.status, 403);
      r = await fetch(`${edge.url}/v1/streams/lim/k/records?seq_num=0`, bearer(await mint('svc:read:lim:*', 60)));
      assert.equal(r.status, 503, 'a covered request passes the edge and finds no star');
      r = await fetch(`${edge.url}/v1/token/exchange`, { method: 'POST', body: '{}' });
      assert.equal(r.status, 503, 'the exchange is exempt from verification and goes upstream');
      r = await fetch(`${edge.url}/v1/streams/lim/k/records`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
      assert.equal(r.status, 503, 'a CORS preflight carries no credentials and goes upstream for the star to answer');
      // An unknown path or a method the path does not take is answered from the route table before
      // any credential, as a star answers it (they were 401 at the edge, 404 and 405 at the star).
      r = await fetch(`${edge.url}/v1/streams/lim/k/records`, { method: 'PUT', body: '{}' });
      assert.equal(r.status, 405);
      assert.deepEqual(r.headers.get('allow')?.split(', ').sort(), ['GET', 'HEAD', 'POST']);
      r = await fetch(`${edge.url}/v1/buckets`, { method: 'DELETE', ...bearer('not.a.jwt') });
      assert.equal(r.status, 405);
      r = await fetch(`${edge.url}/v1/nope`);
      assert.equal(r.status, 404);
      assert.equal(typeof ((await r.json()) as { error: unknown }).error, 'string');
    } finally {
      await edge.stop();
    }
  });

  test('--cors-allowed-origins: the Gateway answers preflights and its own 401, 403 and 429 are readable by an allowed origin; a denied one gets none', async () => {
    const edge = await startGatewayChild(['--upstream', star.baseUrl, '--auth', 'jwt', '--insecure-auth', '--gateway-limits', '--cors-allowed-origins', 'https://app.example'], env);
    try {
      const from = (origin: string, init: RequestInit = {}): RequestInit => ({ ...init, headers: { ...(init.headers as Record<string, string> | undefined), origin } });
      const allowed = 'https://app.example';
      const readable = (r: Response, what: string): void => {
        assert.equal(r.headers.get('access-control-allow-origin'), allowed, what);
        assert.match(r.headers.get('access-control-expose-headers') ?? '', /Retry-After/, what);
        assert.equal(r.headers.get('vary'), 'Origin', what);
      };
      let r = await fetch(`${edge.url}/v1/streams/lim/k/records`, from(allowed, { method: 'OPTIONS', headers: { 'access-control-request-method': 'POST' } }));
      assert.equal(r.status, 204, 'the star has no CORS policy: the Gateway answered the preflight');
      assert.equal(r.headers.get('access-control-max-age'), '600');
      assert.match(r.headers.get('access-control-allow-methods') ?? '', /POST/);
      r = await fetch(`${edge.url}/v1/streams/lim/k/records`, from('https://evil.example', { method: 'OPTIONS', headers: { 'access-control-request-method': 'POST' } }));
      assert.equal(r.status, 403);
      r = await fetch(`${edge.url}/v1/streams/lim/k/records?seq_num=0`, from(allowed));
      assert.equal(r.status, 401);
      readable(r, 'the edge\'s 401');
      r = await fetch(`${edge.url}/v1/streams/lim/k/records?seq_num=0`, bearer(await mint('svc:read:other:*', 60), from(allowed)));
      assert.equal(r.status, 403);
      readable(r, 'the edge\'s 403');
      const limited = await mint('svc:read:lim:*', 60, { limits: { rps: 0.01 } });
      r = await fetch(`${edge.url}/v1/streams/lim/k/records?seq_num=0`, bearer(limited, from(allowed)));
      assert.equal(r.status, 200, await r.text());
      readable(r, 'an answer relayed from the star, which sets no CORS headers itself');
      r = await fetch(`${edge.url}/v1/streams/lim/k/records?seq_num=0`, bearer(limited, from(allowed)));
      assert.equal(r.status, 429);
      readable(r, 'the Gateway\'s 429');
      r = await fetch(`${edge.url}/v1/streams/lim/k/records?seq_num=0`, from('https://evil.example'));
      assert.equal(r.status, 401);
      assert.equal(r.headers.get('access-control-allow-origin'), null, 'a denied origin\'s plain request is served without CORS headers');
      r = await fetch(`${edge.url}/healthz`, from(allowed));
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('access-control-allow-origin'), null, 'the policy is the data plane\'s (/v1): /healthz is outside it');
    } finally {
      await edge.stop();
    }
  });

  test('read_Bps: a stream paused deep in read debt still ends at the token\'s exp, with its auth-expired frame', { timeout: 60_000 }, async () => {
    const admin = await mint('svc:admin', 600);
    const append = await fetch(`${star.baseUrl}/v1/streams/lim/expiring/records`, bearer(admin, { method: 'POST', body: JSON.stringify({ records: [{ body: 'e'.repeat(6000) }] }) }));
    assert.equal(append.status, 200, await append.text());
    // 6 kB at 1 B/s: the stream is paused for 100 minutes after its first frame, far past exp.
    // 3-4 s of life (exp is whole seconds): time enough to reach the star on a loaded machine.
    const token = await mint('svc:read:lim:*', 4, { limits: { read_Bps: 1 } });
    const res = await fetch(`${gw.url}/v1/streams/lim/expiring/records/subscribe?seq_num=0`, bearer(token, { signal: AbortSignal.timeout(EXPIRY_FRAME_WAIT_MS) }));
    assert.equal(res.status, 200);
    const text = await res.text(); // the stream ends after the expiry frame (or the wait gives up)
    assert.match(text, /event: auth-expired\ndata: \{\}\n\n$/);
  });

  test('read_Bps: frames the star sent before exp and the pause held back are not relayed after it', { timeout: 60_000 }, async () => {
    const admin = await mint('svc:admin', 600);
    // About 1.5 frames a second pass; the star writes all of them into the sockets at once.
    const token = await mint('svc:read:lim:*', 3, { limits: { read_Bps: 1500 } });
    const res = await fetch(`${gw.url}/v1/streams/lim/held/records/subscribe?seq_num=0`, bearer(token, { signal: AbortSignal.timeout(EXPIRY_FRAME_WAIT_MS) }));
    assert.equal(res.status, 200);
    for (let i = 0; i < HELD_FRAMES; i++) {
      const r = await fetch(`${star.baseUrl}/v1/streams/lim/held/records`, bearer(admin, { method: 'POST', body: JSON.stringify({ records: [{ body: `${i}:`.padEnd(1000, 'h') }] }) }));
      assert.equal(r.status, 200, await r.text());
    }
    const text = await res.text();
    assert.match(text, /event: auth-expired\ndata: \{\}\n\n$/);
    const frames = text.match(/^id: /gm) ?? [];
    assert.ok(frames.length < HELD_FRAMES, `${frames.length} of ${HELD_FRAMES} frames relayed: the held ones went out after exp`);
  });

  test('connections: one subscription per sub at a time, 429 with Retry-After for the next, free again once it ends', async () => {
    const token = await mint('svc:read:lim:*', 600, { limits: { connections: 1 } });
    const ac = new AbortController();
    const first = await fetch(`${gw.url}/v1/streams/lim/s/records/subscribe?seq_num=0`, bearer(token, { signal: ac.signal }));
    assert.equal(first.status, 200);
    const second = await fetch(`${gw.url}/v1/streams/lim/s/records/subscribe?seq_num=0`, bearer(token));
    assert.equal(second.status, 429);
    assert.equal(second.headers.get('retry-after'), '1');
    ac.abort();
    const deadline = Date.now() + START_WAIT_MS;
    let again: Response;
    for (;;) {
      const ac2 = new AbortController();
      again = await fetch(`${gw.url}/v1/streams/lim/s/records/subscribe?seq_num=0`, bearer(token, { signal: ac2.signal }));
      ac2.abort();
      if (again.status === 200 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(again.status, 200, 'the slot comes back when the first stream ends');
  });

  test('write_Bps is a rate, not a size: a full budget passes a body past it, then every body is 429 until the debt is repaid', async () => {
    // 10 B/s against a 425-byte body: a debt of about 40 s, which no stall between the two requests
    // repays (at 200 B/s the second had to come within 260 ms to see the wait this test names).
    const token = await mint('svc:append:lim:*', 600, { limits: { write_Bps: 10 } });
    const big = JSON.stringify({ records: [{ body: 'x'.repeat(400) }] });
    const startedAt = Date.now();
    let r = await fetch(`${gw.url}/v1/streams/lim/w/records`, bearer(token, { method: 'POST', body: big }));
    assert.equal(r.status, 200, await r.text());
    r = await fetch(`${gw.url}/v1/streams/lim/w/records`, bearer(token, { method: 'POST', body: '{"records":[{"body":"ok"}]}' }));
    assert.equal(r.status, 429);
    const m = /write_Bps ceiling: a \d+-byte body fits in (\d+) s/.exec(((await r.json()) as { error: string }).error);
    assert.ok(m, 'the refusal says how long until the body fits');
    const waitS = Number(m[1]);
    // The wait is the debt (the big body less the one second the bucket held) plus the second it takes
    // to refill the 10 tokens the next body needs: big.length / 10 s. What has passed since the first
    // request (an upper bound on what was repaid) is all that may shorten it.
    const repaidS = (Date.now() - startedAt) / 1000;
    const lowS = Math.floor(big.length / 10 - repaidS);
    assert.ok(waitS >= lowS && waitS <= Math.ceil((big.length + 27) / 10), `the wait is the debt's, at 10 B/s: ${waitS} s (at least ${lowS})`);
  });

  test(`read_Bps: a stream the Gateway ends at exp while its caller is not reading lets go of the socket within ${STREAM_END_FLUSH_MS_MAX} ms`, { timeout: 90_000 }, async () => {
    const admin = await mint('svc:admin', 600);
    // Far more than the sockets between the Gateway and the caller hold.
    for (let i = 0; i < STALLED_APPENDS; i++) {
      const r = await fetch(`${star.baseUrl}/v1/streams/lim/stalled/records`, bearer(admin, { method: 'POST', body: JSON.stringify({ records: Array.from({ length: 4 }, () => ({ body: STALLED_BODY })) }) }));
      assert.equal(r.status, 200, await r.text());
    }
    // A budget the stream never reaches: the Gateway paces it, so it ends it at exp itself.
    const token = await mint('svc:read:lim:*', 4, { limits: { read_Bps: 1 << 30 } });
    const expMs = (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { exp: number }).exp * 1000;
    const conn = await rawConn(Number(new URL(gw.url).port));
    conn.sock.write(`GET /v1/streams/lim/stalled/records/subscribe?seq_num=0 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    try {
      for (const until = Date.now() + RAW_ANSWER_WAIT_MS; !conn.text().includes('\r\n\r\n') && Date.now() < until;) await new Promise((r) => setTimeout(r, 20));
      assert.match(conn.text(), /^HTTP\/1\.1 200/, conn.text().slice(0, 300));
      conn.sock.pause(); // the caller stops reading
      await new Promise((r) => setTimeout(r, Math.max(0, expMs + STREAM_END_FLUSH_MS_MAX + 5000 - Date.now())));
      conn.sock.resume();
      for (const until = Date.now() + RAW_ANSWER_WAIT_MS; !conn.closed() && Date.now() < until;) await new Promise((r) => setTimeout(r, 50));
      // Held, the answer would end once read (its last chunk, then the connection kept alive).
      assert.ok(!conn.text().endsWith('0\r\n\r\n'), 'the ended answer was held until the caller read it all');
      assert.ok(conn.closed(), 'the connection is still open');
    } finally { conn.sock.destroy(); }
  });

  test('read_Bps: a token living past a Node timer\'s 24.8 days keeps its stream (the expiry timer re-arms; it fired at once before)', { timeout: 30_000 }, async () => {
    const token = await mint('svc:read:lim:* svc:append:lim:*', 30 * 24 * 3600, { limits: { read_Bps: 100_000 } });
    const ac = new AbortController();
    const res = await fetch(`${gw.url}/v1/streams/lim/long-lived/records/subscribe?seq_num=0`, bearer(token, { signal: ac.signal }));
    assert.equal(res.status, 200);
    const append = await fetch(`${star.baseUrl}/v1/streams/lim/long-lived/records`, bearer(token, { method: 'POST', body: JSON.stringify({ records: [{ body: 'still-here' }] }) }));
    assert.equal(append.status, 200, await append.text());
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('"still-here"')) {
      const { value, done } = await reader.read();
      assert.ok(!done, `the stream ended: ${text}`);
      text += Buffer.from(value).toString();
    }
    assert.ok(!text.includes('auth-expired'), text);
    ac.abort();
  });

  test('read_Bps: an event stream past its byte budget is paused, not dropped: every record still arrives', { timeout: 30_000 }, async () => {
    const token = await mint('svc:read:lim:* svc:append:lim:*', 600, { limits: { read_Bps: 4000 } });
    const bodies = Array.from({ length: 12 }, (_, i) => `${i}:`.padEnd(900, 'r'));
    const ac = new AbortController();
    const res = await fetch(`${gw.url}/v1/streams/lim/slow/records/subscribe?seq_num=0`, bearer(token, { signal: ac.signal }));
    assert.equal(res.status, 200);
    // One append per record, straight to the star: each commits as its own frame, about 11 KB in
    // all against a 4000 B/s budget, so the stream has to pause between frames.
    const appender = await mint('svc:append:lim:*', 600);
    for (const body of bodies) {
      const append = await fetch(`${star.baseUrl}/v1/streams/lim/slow/records`, bearer(appender, { method: 'POST', body: JSON.stringify({ records: [{ body }] }) }));
      assert.equal(append.status, 200, await append.text());
    }
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes(`"${bodies[bodies.length - 1]}"`)) {
      const { value, done } = await reader.read();
      assert.ok(!done, 'the stream was dropped');
      text += Buffer.from(value).toString();
    }
    for (const body of bodies) assert.ok(text.includes(`"${body}"`), `record ${body.slice(0, 3)} arrived`);
    ac.abort();
  });

  test('read_Bps: a stream paused on its byte budget still gets a heartbeat every 15 s, at a frame boundary', { timeout: 60_000 }, async () => {
    // One 5 KB frame against 100 B/s: about 50 s of debt, during which the relay holds the star's
    // own bytes (its heartbeat included) back. A proxy idle timeout just above 15 s, as the spec asks
    // operators to set, would cut the stream unless the Gateway speaks meanwhile.
    const appender = await mint('svc:append:lim:*', 600);
    const append = await fetch(`${star.baseUrl}/v1/streams/lim/hb/records`, bearer(appender, { method: 'POST', body: JSON.stringify({ records: [{ body: 'h'.repeat(5000) }] }) }));
    assert.equal(append.status, 200, await append.text());
    const token = await mint('svc:read:lim:*', 600, { limits: { read_Bps: 100 } });
    const ac = new AbortController();
    const res = await fetch(`${gw.url}/v1/streams/lim/hb/records/subscribe?seq_num=0`, bearer(token, { signal: ac.signal }));
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    let text = '';
    let frameAt = 0;
    const reading = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        text += Buffer.from(value).toString();
        if (!frameAt && text.includes('"tail"')) frameAt = Date.now();
      }
    })().catch(() => {});
    while (!frameAt) await new Promise((r) => setTimeout(r, 20));
    // Still inside the debt (about 50 s): only the Gateway can have spoken since the frame. Its
    // heartbeat is due SSE_HEARTBEAT_MS after it; a loaded machine may be late, up to a liveness bound.
    const heard = (): boolean => text.indexOf(': hb', text.indexOf('"tail"')) >= 0;
    while (!heard() && Date.now() - frameAt < HEARTBEAT_WAIT_MS_MAX) await new Promise((r) => setTimeout(r, 50));
    ac.abort();
    await reading;
    assert.match(text.slice(text.indexOf('"tail"')), /\n\n: hb\n\n/, `a heartbeat within ${HEARTBEAT_WAIT_MS_MAX} ms of the frame: ${JSON.stringify(text.slice(-60))}`);
    assert.ok(text.indexOf(': hb') > text.indexOf('"tail"'), 'the heartbeat follows the whole frame');
  });

  test('edge verification alone enforces the token\'s limits (--gateway-limits defaults to on with it); --gateway-limits=false turns them off', async () => {
    const limited = await mint('svc:read:lim:*', 60, { limits: { rps: 0.01 } });
    for (const [args, after] of [[[], 429], [['--gateway-limits=false'], 200]] as const) {
      const edge = await startGatewayChild(['--upstream', star.baseUrl, '--auth', 'jwt', '--insecure-auth', ...args], env);
      try {
        let r = await fetch(`${edge.url}/v1/streams/lim/k/records/tail`, bearer(limited));
        assert.equal(r.status, 200, await r.text());
        r = await fetch(`${edge.url}/v1/streams/lim/k/records/tail`, bearer(limited));
        assert.equal(r.status, after, `the second request in a second at rps 0.01, ${args.join(' ') || 'no --gateway-limits'}`);
      } finally {
        await edge.stop();
      }
    }
  });

  test('a token without limits is not limited', async () => {
    const token = await mint('svc:read:lim:*', 600);
    for (let i = 0; i < 20; i++) {
      const r = await fetch(`${gw.url}/v1/streams/lim/w/records/tail`, bearer(token));
      assert.equal(r.status, 200);
    }
  });
});

test('the gateway refuses to start with limits but no edge verification, or a bad upstream', async () => {
  let g = await runRefusedGateway(['--gateway-limits']);
  assert.ok(!g.started && g.code === 2, 'limits without --auth jwt');
  assert.match(g.out, /--gateway-limits needs edge verification/);
  g = await runRefusedGateway(['--upstream', 'ftp://x']);
  assert.ok(!g.started && g.code === 2);
  g = await runRefusedGateway(['--auth', 'basic', '--insecure-auth', '--admin-username', 'a'], { SVCD_ADMIN_PASSWORD: 'p' });
  assert.ok(!g.started && g.code === 2, 'basic is not an edge mode');
  // Told so at once, never sent after flags of a mode it does not serve (--admin-username,
  // --tls-client-ca are not Gateway flags).
  for (const mode of ['basic', 'mtls']) {
    g = await runRefusedGateway(['--auth', mode]);
    assert.ok(!g.started && g.code === 2, mode);
    assert.match(g.out, new RegExp(`the Gateway verifies JWTs only: --auth off or jwt, not ${mode}`));
    assert.doesNotMatch(g.out, /admin-username|tls-client-ca/);
  }
});
