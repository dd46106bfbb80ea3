// The Gateway shares its upstream capacity fairly (issue 18: one read-only tenant opening 520 event
// streams took all 512 upstream sockets, and another tenant's GET …/tail got no answer until the
// first disconnected). A real star and the real Gateway as child processes, real sockets:
//   - subscriptions ride a pool of their own, capped per tenant (the token's `connections`, or the
//     Gateway's default): 429 past the share, and the other tenants' requests keep answering;
//   - tokens the exchange mints carry `connections`, and the Gateway holds them to it;
//   - requests are capped per tenant in the request pool: one tenant's stalled uploads leave the
//     other tenants' requests answered;
//   - `write_Bps` charges a chunked body by the bytes that arrive, so it cannot slip past the limit;
//   - the exchange is throttled per client address at the Gateway.
// Every request here is bounded by REQUEST_WAIT_MS: a hang fails the test instead of stalling it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { SignJWT, decodeJwt } from 'jose';
import { EXCHANGE_FAILURES_PER_ADDRESS_BURST, EXCHANGE_FAILURES_PER_ADDRESS_PER_S, GATEWAY_CONNECTIONS_PER_SUB_DEFAULT, GATEWAY_UPSTREAM_SOCKETS_MAX } from '../../src/config/limits.ts';
import { removeDir, startServer, waitForOutput, type RunningServer } from '../helpers/server.ts';
import { postInParts } from '../helpers/chunked-post.ts';
import { JWT_SECRET } from '../grpc/child.ts';
import { startGatewayChild, type Gateway } from './child.ts';

/** A request the Gateway leaves unanswered this long counts as a hang. */
const REQUEST_WAIT_MS = 10_000;
/** Subscriptions one tenant opens at once: more than the old shared pool's sockets. */
const SUBSCRIPTIONS = 520;
const ROOT = { key_id: 'root', secret: 'root-secret-for-the-gateway-fairness-suite' };
/** What the star stamps on exchanged tokens in this suite (--exchange-token-connections). */
const EXCHANGED_CONNECTIONS = 3;

async function tokenFor(sub: string, scope: string, limits?: Record<string, number>): Promise<string> {
  return new SignJWT({ scope, ...(limits ? { svc_aux: { limits } } : {}) })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setSubject(sub)
    .setIssuedAt().setExpirationTime(Math.floor(Date.now() / 1000) + 600).sign(Buffer.from(JWT_SECRET));
}

interface Answer { status: number; headers: IncomingMessage['headers']; text: string }

/** Wrong guesses at the exchange until one is answered 429. The throttle lets
 *  EXCHANGE_FAILURES_PER_ADDRESS_BURST fail and refills EXCHANGE_FAILURES_PER_ADDRESS_PER_S a second,
 *  so a slow machine sees a few more 401s: the 429 must come once the burst and the refill of the
 *  time spent are used up, and no earlier than the burst. */
async function guessUntilThrottled(guess: (i: number) => Promise<Answer>): Promise<void> {
  const t0 = Date.now();
  for (let i = 0; ; i++) {
    const r = await guess(i);
    if (r.status === 429) {
      assert.ok(i >= EXCHANGE_FAILURES_PER_ADDRESS_BURST, `429 after only ${i} failed guesses`);
      return;
    }
    assert.equal(r.status, 401, `guess ${i}: ${r.text}`);
    const mayFail = EXCHANGE_FAILURES_PER_ADDRESS_BURST + Math.ceil(((Date.now() - t0) / 1000) * EXCHANGE_FAILURES_PER_ADDRESS_PER_S);
    assert.ok(i < mayFail, `${i + 1} failed guesses and no 429 (the throttle allows ${mayFail} by now)`);
  }
}

/** One request on its own connection, answered in full within REQUEST_WAIT_MS or rejected. */
function ask(url: string, token: string | undefined, method = 'GET', body?: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method, agent: false, timeout: REQUEST_WAIT_MS,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined && !headers['transfer-encoding'] ? { 'content-length': String(Buffer.byteLength(body)) } : {}), ...headers },
    }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => { text += c.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url}: no answer in ${REQUEST_WAIT_MS} ms (a hang)`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** The headers of a tenant's chunked JSON append. */
const chunkedAs = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });

interface OpenStream { status: number; retryAfter?: string; close(): void }

/** Opens a subscription and keeps it open (its bytes are read and dropped) until closed. */
function subscribe(url: string, token: string): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const req: ClientRequest = request(url, { agent: false, timeout: REQUEST_WAIT_MS, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      req.setTimeout(0);
      res.on('error', () => {});
      const retryAfter = res.headers['retry-after'];
      resolve({ status: res.statusCode ?? 0, ...(typeof retryAfter === 'string' ? { retryAfter } : {}), close: () => req.destroy() });
    });
    req.on('timeout', () => req.destroy(new Error('subscribe: no answer (a hang)')));
    req.on('error', (err) => { if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err); });
    req.end();
  });
}

const count = (xs: OpenStream[], status: number): number => xs.filter((x) => x.status === status).length;

describe('gateway fairness (jwt, limits, real star)', () => {
  const env = { SVCD_JWT_HMAC_SECRET: JWT_SECRET, SVCD_ROOT_SECRET: ROOT.secret };
  let star: RunningServer;
  let gw: Gateway;
  let admin: string;
  let other: string;
  const tailUrl = (): string => `${gw.url}/v1/streams/fair/hot/records/tail`;
  const subscribeUrl = (): string => `${gw.url}/v1/streams/fair/hot/records/subscribe?seq_num=0`;

  before(async () => {
    star = await startServer({
      args: ['--auth', 'jwt', '--insecure-auth', '--root-key-id', ROOT.key_id, '--exchange-token-connections', String(EXCHANGED_CONNECTIONS)], env,
    });
    gw = await startGatewayChild(['--upstream', star.baseUrl, '--auth', 'jwt', '--insecure-auth', '--gateway-limits'], { SVCD_JWT_HMAC_SECRET: JWT_SECRET });
    admin = await tokenFor('admin', 'svc:admin');
    other = await tokenFor('tenant-other', 'svc:read:fair:*');
    assert.equal((await ask(`${star.baseUrl}/v1/buckets/fair`, admin, 'POST', '{"create_stream_on_append":true}')).status, 201);
    assert.equal((await ask(`${star.baseUrl}/v1/streams/fair/hot/records`, admin, 'POST', '{"records":[{"body":"x"}]}')).status, 200);
  });
  after(async () => {
    await gw?.stop();
    await star?.stop();
    if (star) removeDir(star.dataDir);
  });

  test(`one read-only tenant opens ${SUBSCRIPTIONS} subscriptions: its default share streams, the rest 429; another tenant's tail answers`, { timeout: 120_000 }, async () => {
    const reader = await tokenFor('tenant-reader', 'svc:read:fair:*');
    const streams = await Promise.all(Array.from({ length: SUBSCRIPTIONS }, () => subscribe(subscribeUrl(), reader)));
    try {
      assert.equal(count(streams, 200), GATEWAY_CONNECTIONS_PER_SUB_DEFAULT, 'the default share (no connections claim)');
      assert.equal(count(streams, 429), SUBSCRIPTIONS - GATEWAY_CONNECTIONS_PER_SUB_DEFAULT);
      assert.ok(streams.filter((s) => s.status === 429).every((s) => s.retryAfter === '1'), 'Retry-After: 1');
      const tail = await ask(tailUrl(), other);
      assert.equal(tail.status, 200, tail.text);
      assert.equal((JSON.parse(tail.text) as { seq_num: number }).seq_num, 1);
      const again = await subscribe(subscribeUrl(), other);
      assert.equal(again.status, 200, 'another tenant still subscribes');
      again.close();
    } finally {
      for (const s of streams) s.close();
    }
  });

  test(`a tenant allowed more connections than the request pool has sockets holds ${SUBSCRIPTIONS} streams; another tenant's tail still answers`, { timeout: 120_000 }, async () => {
    assert.ok(SUBSCRIPTIONS > GATEWAY_UPSTREAM_SOCKETS_MAX, 'the case of the issue: more streams than request sockets');
    const wide = await tokenFor('tenant-wide', 'svc:read:fair:*', { connections: SUBSCRIPTIONS + 80 });
    const streams = await Promise.all(Array.from({ length: SUBSCRIPTIONS }, () => subscribe(subscribeUrl(), wide)));
    try {
      assert.equal(count(streams, 200), SUBSCRIPTIONS, JSON.stringify(streams.filter((s) => s.status !== 200).map((s) => s.status)));
      for (let i = 0; i < 5; i++) {
        const tail = await ask(tailUrl(), other);
        assert.equal(tail.status, 200, tail.text);
      }
    } finally {
      for (const s of streams) s.close();
    }
  });

  test('tokens minted by the exchange carry connections, and the gateway holds them to it', { timeout: 60_000 }, async () => {
    const minted = await ask(`${gw.url}/v1/token/exchange`, undefined, 'POST', JSON.stringify({ ...ROOT, bucket: 'fair' }));
    assert.equal(minted.status, 200, minted.text);
    const token = (JSON.parse(minted.text) as { token: string }).token;
    assert.deepEqual(decodeJwt(token).svc_aux, { limits: { connections: EXCHANGED_CONNECTIONS } });
    const streams = await Promise.all(Array.from({ length: EXCHANGED_CONNECTIONS + 2 }, () => subscribe(subscribeUrl(), token)));
    try {
      assert.equal(count(streams, 200), EXCHANGED_CONNECTIONS);
      assert.equal(count(streams, 429), 2);
    } finally {
      for (const s of streams) s.close();
    }
  });

  test('write_Bps charges a chunked body by the bytes that arrive: a full budget passes one 5 KB body at 100 B/s, then nothing reaches the star until the debt is repaid', { timeout: 60_000 }, async () => {
    const writer = await tokenFor('tenant-writer', 'svc:append:fair:* svc:read:fair:*', { write_Bps: 100 });
    const big = JSON.stringify({ records: [{ body: 'w'.repeat(5000) }] });
    const chunked = { 'transfer-encoding': 'chunked', 'content-type': 'application/json' };
    const first = await ask(`${gw.url}/v1/streams/fair/chunked/records`, writer, 'POST', big, chunked);
    assert.equal(first.status, 200, `a full budget admits a body of any size, into debt: ${first.text}`);
    for (const body of [big, '{"records":[{"body":"ok"}]}']) {
      const r = await ask(`${gw.url}/v1/streams/fair/chunked/records`, writer, 'POST', body, chunked);
      assert.equal(r.status, 429, `in debt for about 50 s: ${r.text}`);
      assert.equal(r.headers['retry-after'], '1');
      assert.match((JSON.parse(r.text) as { error: string }).error, /write_Bps/);
    }
    const tail = await ask(`${star.baseUrl}/v1/streams/fair/chunked/records/tail`, admin);
    assert.equal((JSON.parse(tail.text) as { seq_num: number }).seq_num, 1, `only the first body reached the star: ${tail.text}`);
    const other = await tokenFor('tenant-writer-2', 'svc:append:fair:*', { write_Bps: 100 });
    const small = await ask(`${gw.url}/v1/streams/fair/chunked/records`, other, 'POST', '{"records":[{"body":"ok"}]}', chunked);
    assert.equal(small.status, 200, `another sub's chunked body inside its budget passes: ${small.text}`);
    // A body in many chunks passes a full budget too, however far past it (a rate, not a size).
    const parts = await tokenFor('tenant-writer-3', 'svc:append:fair:*', { write_Bps: 100 });
    const inParts = await postInParts(`${gw.url}/v1/streams/fair/chunked/records`, ['{"records":[{"body":"', 'p'.repeat(2000), 'p'.repeat(2000), '"}]}'], chunkedAs(parts), REQUEST_WAIT_MS);
    assert.equal(inParts.status, 200, `a chunked body in four chunks, 40 s of budget: ${inParts.text}`);
    const refused = await postInParts(`${gw.url}/v1/streams/fair/chunked/records`, ['{"records":[{"body":"', 'q', '"}]}'], chunkedAs(parts), REQUEST_WAIT_MS);
    assert.equal(refused.status, 429, `then in debt: ${refused.text}`);
  });

  test('the exchange is throttled per client address at the gateway: failed asks, then 429', { timeout: 60_000 }, async () => {
    await guessUntilThrottled((i) => ask(`${gw.url}/v1/token/exchange`, undefined, 'POST', JSON.stringify({ key_id: `ck_guess${i}`, secret: 'wrong', bucket: 'fair' })));
    const r = await ask(`${gw.url}/v1/token/exchange`, undefined, 'POST', JSON.stringify({ ...ROOT, bucket: 'fair' }));
    assert.equal(r.status, 429, r.text);
    assert.equal(r.headers['retry-after'], '1');
    assert.match((JSON.parse(r.text) as { error: string }).error, /client address/);
  });
});

describe('gateway fairness: requests per tenant, behind a trusted proxy', () => {
  const env = { SVCD_JWT_HMAC_SECRET: JWT_SECRET };
  /** A small share, so a handful of stalled uploads fill it. */
  const SHARE = 4;
  let star: RunningServer;
  /** The star's ops listener: its /metrics tells when the stalled uploads have reached it. */
  let ops: string;
  let gw: Gateway;

  /** The star's svcd_request_body_bytes_in_flight: body bytes it has received and not yet done with. */
  async function starBodyBytesInFlight(): Promise<number> {
    const text = (await ask(`${ops}/metrics`, undefined)).text;
    const m = /^svcd_request_body_bytes_in_flight (\d+)$/m.exec(text);
    assert.ok(m, 'the star exposes svcd_request_body_bytes_in_flight');
    return Number(m[1]);
  }

  before(async () => {
    star = await startServer({ engine: 'node', args: ['--auth', 'jwt', '--insecure-auth', '--metrics-listen', '127.0.0.1:0'], env });
    ops = `http://127.0.0.1:${(await waitForOutput(star, /svcd ops on http:\/\/127\.0\.0\.1:(\d+)/))[1]}`;
    gw = await startGatewayChild([
      '--upstream', star.baseUrl, '--auth', 'jwt', '--insecure-auth', '--gateway-requests-per-sub', String(SHARE),
      '--gateway-trusted-proxies', '127.0.0.1', // as if a TLS terminator on loopback fronted it
    ], env);
    const admin = await tokenFor('admin', 'svc:admin');
    assert.equal((await ask(`${star.baseUrl}/v1/buckets/up`, admin, 'POST', '{"create_stream_on_append":true}')).status, 201);
  });
  after(async () => {
    await gw?.stop();
    await star?.stop();
    if (star) removeDir(star.dataDir);
  });

  test('one tenant\'s stalled uploads fill only its share: its next request is 429, another tenant\'s are answered', { timeout: 60_000 }, async () => {
    const slow = await tokenFor('tenant-slow', 'svc:append:up:* svc:read:up:*');
    const other = await tokenFor('tenant-fine', 'svc:append:up:* svc:read:up:*');
    // Uploads that declare a body and send one byte of it: each holds a request slot at the gateway
    // until it is answered (the star cuts a stalled body after REQUEST_BODY_IDLE_MS_MAX).
    const stalled: ClientRequest[] = [];
    const uploadAnswers: string[] = [];
    for (let i = 0; i < SHARE; i++) {
      const req = request(`${gw.url}/v1/streams/up/s${i}/records`, {
        method: 'POST', agent: false, headers: { authorization: `Bearer ${slow}`, 'content-length': '100', 'content-type': 'application/json' },
      });
      req.on('error', () => {});
      req.on('response', (res) => { uploadAnswers.push(`upload s${i}: ${res.statusCode ?? 0}`); res.resume(); });
      req.write('{');
      stalled.push(req);
    }
    try {
      // Each request of the slow tenant takes a slot of its share, so the request that should be
      // refused must not be sent before the gateway has admitted every upload: sent earlier, it took
      // a slot itself, the last upload was the one refused 429, and every later request of the slow
      // tenant found a slot free (CI, under load). The gateway forwards an upload once it holds its
      // slot, so wait until the star holds the one body byte of each of the SHARE uploads.
      let inFlight = await starBodyBytesInFlight();
      for (const deadline = Date.now() + REQUEST_WAIT_MS; inFlight !== SHARE && uploadAnswers.length === 0;) {
        assert.ok(Date.now() < deadline, `the star holds ${inFlight} of the ${SHARE} stalled uploads' bytes after ${REQUEST_WAIT_MS} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
        inFlight = await starBodyBytesInFlight();
      }
      assert.deepEqual(uploadAnswers, [], 'no upload within the share is answered while it stalls');
      const refused = await ask(`${gw.url}/v1/streams/up/probe/records/tail`, slow);
      assert.equal(refused.status, 429, `the slow tenant is held to its share: ${refused.text}`);
      assert.deepEqual(uploadAnswers, [], 'the uploads still hold their slots');
      assert.match((JSON.parse(refused.text) as { error: string }).error, /requests ceiling: 4 concurrent requests per caller/);
      assert.equal(refused.headers['retry-after'], '1');
      const fine = await ask(`${gw.url}/v1/streams/up/fine/records`, other, 'POST', '{"records":[{"body":"ok"}]}');
      assert.equal(fine.status, 200, fine.text);
    } finally {
      for (const r of stalled) r.destroy();
    }
  });

  test('behind a trusted proxy the exchange throttle keys on the forwarded client address, not the proxy\'s', { timeout: 60_000 }, async () => {
    const guess = (from: string, i: number): Promise<Answer> =>
      ask(`${gw.url}/v1/token/exchange`, undefined, 'POST', JSON.stringify({ key_id: `ck_fwd${i}`, secret: 'wrong', bucket: 'up' }), { 'x-forwarded-for': from });
    await guessUntilThrottled((i) => guess('203.0.113.7', i));
    assert.equal((await guess('198.51.100.8', 1000)).status, 401, 'another client behind the same proxy is not throttled');
    assert.equal((await guess('198.51.100.8, 203.0.113.7', 1001)).status, 429, 'only the entry the proxy wrote counts');
  });
});
