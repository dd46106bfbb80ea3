// The Gateway's listener over TLS (`--tls-cert`, `--tls-key`), with certificates the test makes
// (openssl, as test/auth-http/tls.test.ts): curl trusting the test CA reaches a star behind it (over
// TLS too: the Gateway trusts the star's CA through NODE_EXTRA_CA_CERTS); edge verification (jwt)
// boots without --insecure-auth and answers 401/403 at the edge; a real browser (playwright-core
// driving Debian's chromium) fetches through it; the star is told the caller came over https; and
// the refusals to start are one line, exit 2.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { Socket, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { closedPort } from '../helpers/ports.ts';
import { makeCerts, mint, removeDir, startStar, type Certs, type Star } from '../auth-http/kit.ts';
import { noBrowser, openBrowser } from '../helpers/browser.ts';
import { GATEWAY_STOP_WAIT_MS_MAX, runRefusedGateway, startGatewayChild, type Gateway } from './child.ts';

const SECRET = 'gateway-tls-secret-0123456789abcdefghij';
const ENV = { SVCD_JWT_HMAC_SECRET: SECRET };
/** Every curl, and the browser's every fetch, gives up after this long (a bound, not a speed). */
const CURL_MAX_S = 20;

interface Curl { code: number; status: number; body: string; stderr: string }

/** curl over HTTPS; the status is written after the body on a line of its own. */
function curl(args: string[]): Promise<Curl> {
  return new Promise((resolve) => {
    execFile('curl', ['-sS', '--max-time', String(CURL_MAX_S), '-w', '\n%{http_code}', ...args], (err, stdout, stderr) => {
      const cut = stdout.lastIndexOf('\n');
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
      resolve({ code, status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut), stderr });
    });
  });
}

describe('gateway over TLS, edge verification without --insecure-auth', () => {
  let certs: Certs;
  let star: Star;
  let gw: Gateway;
  /** Edge verification in front of nothing: whatever it answers, it answered itself. */
  let edge: Gateway;
  let admin: string;
  before(async () => {
    certs = makeCerts();
    const tls = ['--tls-cert', certs.serverCert, '--tls-key', certs.serverKey];
    star = await startStar({ tls: true, args: ['--auth', 'jwt', ...tls], env: ENV });
    const gwEnv = { ...ENV, NODE_EXTRA_CA_CERTS: certs.ca };
    [gw, edge] = await Promise.all([
      startGatewayChild(['--upstream', star.baseUrl, '--auth', 'jwt', ...tls], gwEnv),
      startGatewayChild(['--upstream', `http://127.0.0.1:${await closedPort()}`, '--auth', 'jwt', ...tls], gwEnv),
    ]);
    admin = await mint(SECRET, 'svc:admin');
  });
  after(async () => {
    await Promise.all([gw?.stop(), edge?.stop()]);
    await star?.stop();
    if (certs) removeDir(certs.dir);
  });

  test('it listens on https with edge verification, no --insecure-auth given', () => {
    assert.match(gw.url, /^https:/);
    assert.match(gw.output(), /svcd gateway listening on https:\/\/\S+ upstream https:\/\/127\.0\.0\.1:\d+ \(edge verification, limits\)/, 'limits follow edge verification by default');
  });

  test('curl with the CA reaches the star through the gateway; without the CA the handshake is refused', async () => {
    const ca = ['--cacert', certs.ca];
    const auth = ['-H', `authorization: Bearer ${admin}`];
    let r = await curl([...ca, ...auth, '-X', 'POST', '-d', '{"create_stream_on_append":true}', `${gw.url}/v1/buckets/tlsgw`]);
    assert.equal(r.status, 201, `${r.body} ${r.stderr}`);
    r = await curl([...ca, ...auth, '-X', 'POST', '-H', 'content-type: application/json', '-d', '{"records":[{"body":"over tls"}]}', `${gw.url}/v1/streams/tlsgw/k/records`]);
    assert.equal(r.status, 200, `${r.body} ${r.stderr}`);
    r = await curl([...ca, ...auth, `${gw.url}/v1/streams/tlsgw/k/records?seq_num=0`]);
    assert.equal(r.status, 200, r.body);
    assert.deepEqual((JSON.parse(r.body) as { records: { body: string }[] }).records.map((x) => x.body), ['over tls']);
    r = await curl([`${gw.url}/healthz`]);
    assert.notEqual(r.code, 0, 'a client without the test CA does not trust the gateway');
    assert.equal(r.code, 60, `curl's "peer certificate cannot be authenticated": ${r.stderr}`);
  });

  test('edge verification over TLS: 401 without a valid token, 403 without a grant, before any star', async () => {
    const ca = ['--cacert', certs.ca];
    const url = `${edge.url}/v1/streams/tlsgw/k/records?seq_num=0`;
    let r = await curl([...ca, url]);
    assert.equal(r.status, 401, r.body);
    assert.equal(typeof (JSON.parse(r.body) as { error: unknown }).error, 'string');
    r = await curl([...ca, '-H', 'authorization: Bearer not.a.jwt', url]);
    assert.equal(r.status, 401, r.body);
    r = await curl([...ca, '-H', `authorization: Bearer ${await mint(SECRET, 'svc:read:other:*')}`, url]);
    assert.equal(r.status, 403, r.body);
    r = await curl([...ca, '-H', `authorization: Bearer ${await mint(SECRET, 'svc:read:tlsgw:*')}`, url]);
    assert.equal(r.status, 503, `a covered request passes the edge and finds no star: ${r.body}`);
  });

  test('a browser fetches through the gateway over TLS, bearer and all', { skip: noBrowser }, async (t) => {
    // The browser trusts exactly the gateway's key (by its SPKI hash), not every certificate.
    const spki = new X509Certificate(certs.read(certs.serverCert)).publicKey.export({ type: 'spki', format: 'der' });
    const pin = createHash('sha256').update(spki).digest('base64');
    const browser = await openBrowser([`--ignore-certificate-errors-spki-list=${pin}`]);
    t.after(() => browser.close());
    const page = browser.page;
    // A page of the gateway's own origin, so the fetches below are same-origin (no CORS involved).
    const health = await page.goto(`${gw.url}/healthz`);
    assert.equal(health?.status(), 200);
    const token = await mint(SECRET, 'svc:read:tlsgw:* svc:append:tlsgw:*');
    // Page-side code reaches fetch through globalThis: this file is type-checked without the DOM's types.
    // page.evaluate has no timeout of its own, so each fetch is bounded in the page.
    const answers = await page.evaluate(async ({ bearer, fetchMs }) => {
      const g = globalThis as unknown as {
        fetch: (u: string, i?: object) => Promise<{ status: number; text(): Promise<string> }>;
        AbortSignal: { timeout(ms: number): object };
      };
      // No named function in here: tsx would wrap it in a helper the page does not have.
      const headers = { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' };
      const url = '/v1/streams/tlsgw/k/records';
      const append = await g.fetch(url, { method: 'POST', headers, body: '{"records":[{"body":"from a browser"}]}', signal: g.AbortSignal.timeout(fetchMs) });
      const read = await g.fetch(`${url}?seq_num=0`, { headers, signal: g.AbortSignal.timeout(fetchMs) });
      const anonymous = await g.fetch(`${url}?seq_num=0`, { signal: g.AbortSignal.timeout(fetchMs) });
      return { append: append.status, read: read.status, body: await read.text(), anonymous: anonymous.status };
    }, { bearer: token, fetchMs: CURL_MAX_S * 1000 });
    assert.equal(answers.append, 200);
    assert.equal(answers.read, 200);
    assert.deepEqual((JSON.parse(answers.body) as { records: { body: string }[] }).records.map((x) => x.body), ['over tls', 'from a browser']);
    assert.equal(answers.anonymous, 401, 'no bearer: refused at the edge');
  });
});

test('the star hears X-Forwarded-Proto: https from a TLS gateway', async () => {
  const certs = makeCerts();
  // A stand-in bridge that answers the probe and echoes the header a request arrived with.
  const upstream = createHttpServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ proto: req.headers['x-forwarded-proto'] ?? null }));
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  let gw: Gateway | undefined;
  try {
    gw = await startGatewayChild(['--upstream', `127.0.0.1:${(upstream.address() as AddressInfo).port}`, '--tls-cert', certs.serverCert, '--tls-key', certs.serverKey]);
    const r = await curl(['--cacert', certs.ca, `${gw.url}/v1/buckets`]);
    assert.equal(r.status, 200, r.stderr);
    assert.deepEqual(JSON.parse(r.body), { proto: 'https' });
  } finally {
    await gw?.stop();
    upstream.closeAllConnections();
    upstream.close();
    removeDir(certs.dir);
  }
});

test('SIGTERM stops a TLS gateway though a client connected and never began its handshake', async () => {
  const certs = makeCerts();
  let gw: Gateway | undefined;
  const silent = new Socket();
  try {
    gw = await startGatewayChild(['--upstream', '127.0.0.1:1', '--tls-cert', certs.serverCert, '--tls-key', certs.serverKey]);
    const port = Number(new URL(gw.url).port);
    await new Promise<void>((resolve, reject) => { silent.once('error', reject); silent.connect(port, '127.0.0.1', resolve); });
    const closedByGateway = new Promise<void>((r) => silent.once('close', () => r()));
    silent.on('error', () => undefined);
    // Not an HTTP connection yet, so closeAllConnections passes it by; before the close bound the
    // gateway waited for it until node's TLS handshake timeout (120 s), past the stop's bound.
    await gw.stop();
    assert.equal(gw.proc.signalCode, null, `ended by ${gw.proc.signalCode}, not by itself (the stop SIGKILLs after ${GATEWAY_STOP_WAIT_MS_MAX} ms)`);
    assert.equal(gw.proc.exitCode, 0);
    await closedByGateway;
  } finally {
    silent.destroy();
    await gw?.stop();
    removeDir(certs.dir);
  }
});

test('the gateway refuses to start over plaintext verification, half a TLS pair, or unusable files: one line, exit 2', async () => {
  const certs = makeCerts();
  try {
    const missing = join(certs.dir, 'absent.pem');
    const cases: { args: string[]; reason: RegExp }[] = [
      { args: ['--auth', 'jwt'], reason: /--auth jwt .*needs TLS \(--tls-cert, --tls-key\) or --insecure-auth/ },
      { args: ['--tls-cert', certs.serverCert], reason: /--tls-cert needs --tls-key/ },
      { args: ['--tls-key', certs.serverKey], reason: /--tls-key needs --tls-cert/ },
      { args: ['--tls-cert', missing, '--tls-key', certs.serverKey], reason: /--tls-cert: cannot read .*absent\.pem/ },
      { args: ['--tls-cert', certs.serverCert, '--tls-key', certs.ca], reason: /not a usable certificate and key/ },
      { args: ['--tls-cert', certs.serverCert, '--tls-key', certs.clientKey], reason: /not a usable certificate and key/ },
    ];
    const results = await Promise.all(cases.map((c) => runRefusedGateway(['--upstream', '127.0.0.1:1', ...c.args], ENV)));
    results.forEach((g, i) => {
      assert.ok(!g.started, `${cases[i].args.join(' ')}: must not start`);
      assert.equal(g.code, 2, `${cases[i].args.join(' ')}: exit 2`);
      const lines = g.out.trimEnd().split('\n');
      assert.equal(lines.length, 1, `one line, got:\n${g.out}`);
      assert.match(lines[0], /^svcd gateway: /);
      assert.match(lines[0], cases[i].reason);
    });
  } finally {
    removeDir(certs.dir);
  }
});
