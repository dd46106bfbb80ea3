// TLS listeners with certificates the test makes (openssl): mtls, served by node:https whichever
// engine is asked for, admits exactly the clients whose certificate the client CA signed; jwt and
// basic boot over TLS without --insecure-auth (both engines) and still check their credentials.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, assertStatus, bearer, makeCerts, mint, removeDir, request, startStar, streamPath, uniq, type Certs, type Star, type TlsClient } from './kit.ts';

const SECRET = 'tls-suite-secret-0123456789abcdefghijk';

let certs: Certs;
before(() => { certs = makeCerts(); });
after(() => { if (certs) removeDir(certs.dir); });

describe('mtls (node:https, whichever engine is asked for)', () => {
  const stars: Star[] = [];
  let trusted: TlsClient;
  let rogue: TlsClient;
  let anonymous: TlsClient;

  before(async () => {
    const ca = certs.read(certs.ca);
    trusted = { ca, cert: certs.read(certs.clientCert), key: certs.read(certs.clientKey) };
    rogue = { ca, cert: certs.read(certs.rogueCert), key: certs.read(certs.rogueKey) };
    anonymous = { ca };
    const args = ['--auth', 'mtls', '--tls-cert', certs.serverCert, '--tls-key', certs.serverKey, '--tls-client-ca', certs.ca];
    const started = await Promise.allSettled(ENGINES.map(async (engine) => { stars.push(await startStar({ engine, args, tls: true })); }));
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
  });
  after(async () => { await Promise.all(stars.map((s) => s.stop())); });

  test('mtls is always served by node:https', () => {
    assert.equal(stars.length, ENGINES.length);
    for (const s of stars) assert.equal(s.engine, 'node', 'mtls needs the verified-certificate bit only node:https reports');
  });

  test('a client certificate signed by the client CA is trusted whole', async () => {
    for (const s of stars) {
      assertStatus(await request(s.baseUrl, 'GET', '/v1/buckets', { tls: trusted }), 200, 'ListBuckets');
      const b = `mtls-${s.port}`;
      assertStatus(await request(s.baseUrl, 'POST', `/v1/buckets/${b}`, { tls: trusted, body: {} }), 201, 'create bucket');
      assertStatus(await request(s.baseUrl, 'POST', streamPath(b, 'k'), { tls: trusted, body: {} }), 201, 'create stream');
      assertStatus(await request(s.baseUrl, 'POST', `${streamPath(b, 'k')}/records`, { tls: trusted, body: { records: [{ body: 'x' }] } }), 200, 'append');
      // The header plays no part under mtls.
      assertStatus(await request(s.baseUrl, 'GET', '/v1/buckets', { tls: trusted, headers: { authorization: 'Bearer garbage' } }), 200, 'garbage bearer');
    }
  });

  test('no client certificate, or one from another CA, is 401 in the error envelope (the spec\'s "no credential"), and does nothing', async () => {
    for (const s of stars) {
      const b = uniq('mtls-anon');
      assertStatus(await request(s.baseUrl, 'GET', '/v1/buckets', { tls: anonymous }), 401, 'no client certificate');
      assertStatus(await request(s.baseUrl, 'POST', `/v1/buckets/${b}`, { tls: rogue, body: {} }), 401, 'untrusted client certificate');
      assertStatus(await request(s.baseUrl, 'GET', `/v1/buckets/${b}`, { tls: trusted }), 404, 'the untrusted create made nothing');
      // The routes open to every verified caller (a presigned object URL, the exchange) are not open
      // to one without a certificate: it is answered before any route.
      assertStatus(await request(s.baseUrl, 'GET', '/v1/objects/streams%2Fx?exp=1&sig=x', { tls: anonymous }), 401, 'presigned object route');
      assertStatus(await request(s.baseUrl, 'POST', '/v1/token/exchange', { tls: anonymous, body: { key_id: 'a', secret: 'b', bucket: 'c' } }), 401, 'exchange');
      await assert.rejects(request(s.baseUrl.replace('https:', 'http:'), 'GET', '/v1/buckets'), 'plaintext on the TLS port');
    }
  });

  test('the exchange is 501 under mtls', async () => {
    for (const s of stars) {
      assertStatus(await request(s.baseUrl, 'POST', '/v1/token/exchange', { tls: trusted, body: { key_id: 'a', secret: 'b', bucket: 'c' } }), 501, 'exchange');
    }
  });
});

for (const engine of ENGINES) {
  describe(`jwt and basic over TLS (${engine})`, () => {
    let jwt: Star;
    let basic: Star;
    let tls: TlsClient;
    before(async () => {
      tls = { ca: certs.read(certs.ca) };
      const files = ['--tls-cert', certs.serverCert, '--tls-key', certs.serverKey];
      [jwt, basic] = await Promise.all([
        startStar({ engine, tls: true, args: ['--auth', 'jwt', ...files], env: { SVCD_JWT_HMAC_SECRET: SECRET } }),
        startStar({ engine, tls: true, args: ['--auth', 'basic', '--admin-username', 'op', ...files], env: { SVCD_ADMIN_PASSWORD: 'pw' } }),
      ]);
    });
    after(async () => { await Promise.all([jwt?.stop(), basic?.stop()]); });

    test('boots over TLS without --insecure-auth, on the engine asked for', () => {
      assert.equal(jwt.engine, engine);
      assert.equal(basic.engine, engine);
    });

    test('jwt over TLS: a good token is 200, none or a bad one 401', async () => {
      assertStatus(await request(jwt.baseUrl, 'GET', '/v1/buckets', { tls, headers: bearer(await mint(SECRET, 'svc:admin')) }), 200, 'good token');
      assertStatus(await request(jwt.baseUrl, 'GET', '/v1/buckets', { tls }), 401, 'no token');
      assertStatus(await request(jwt.baseUrl, 'GET', '/v1/buckets', { tls, headers: bearer('a.b.c') }), 401, 'garbage');
      assertStatus(await request(jwt.baseUrl, 'POST', '/v1/token/exchange', { tls, body: { key_id: 'nobody', secret: 'x', bucket: 'b' } }), 401, 'exchange, unknown key');
    });

    test('basic over TLS: the login is 200, a wrong one 401', async () => {
      const login = (u: string, p: string): Record<string, string> => ({ authorization: `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}` });
      assertStatus(await request(basic.baseUrl, 'GET', '/v1/buckets', { tls, headers: login('op', 'pw') }), 200, 'login');
      assertStatus(await request(basic.baseUrl, 'GET', '/v1/buckets', { tls, headers: login('op', 'nope') }), 401, 'wrong password');
    });
  });
}
