// Stars authenticate to each other on the gRPC port under the cluster's one auth mode (spec:
// Gateway, bridge and peers): a Drain sent to one star makes it ask the drained star to settle
// (SettleStar) with its peer credential. Real star processes; what is asserted is who was answered
// what, and what the serving star logged, never how long anything took.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { postgresSkipReason } from '../helpers/postgres.ts';
import { removeDir, waitForOutput } from '../helpers/server.ts';
import { mint, startIssuer, type Issuer } from '../auth-http/kit.ts';
import { bearer, bytes, call, callMd, connect, failureMd, type Clients } from '../grpc/client.ts';
import { makeStarCerts, startCluster, type TestCluster } from './kit.ts';

const skip = await postgresSkipReason();

const SECRET = 'peer-auth-suite-secret-0123456789abcdef';
const WRONG_SECRET = 'not-the-cluster-secret-0123456789abcdef';


describe('peers under jwt with a symmetric source', { skip }, () => {
  let c: TestCluster;
  const clients: Clients[] = [];
  before(async () => {
    c = await startCluster(3, ['--auth', 'jwt', '--insecure-auth'], { SVCD_JWT_HMAC_SECRET: SECRET });
  });
  after(async () => {
    for (const cl of clients) cl.close();
    await c?.close();
  });
  const client = async (i: number): Promise<Clients> => {
    const cl = connect(await c.grpcPort(i));
    clients.push(cl);
    return cl;
  };

  test('a Drain sent to star-0 asks star-1 to settle with a self-minted svc:node token, and star-1 serves it', async () => {
    const s0 = await client(0);
    const admin = bearer(await mint(SECRET, 'svc:admin'));
    const res = await callMd(s0.admin.Drain.bind(s0.admin), { star_id: 'star-1' }, admin);
    assert.equal(typeof res.leases_moved, 'number');
    // The serving star names the caller by its verified sub: star-0's own peer token.
    await waitForOutput(c.stars[1], /svcd: grpc: SettleStar from \S+ \(sub star:star-0\): OK/);
    assert.doesNotMatch(c.stars[0].output(), /asking star star-1 to settle failed/);
  });

  test('SettleStar with a token of the wrong secret is UNAUTHENTICATED and logged; a valid svc:node token is served', async () => {
    const s0 = await client(0);
    const settle = s0.data.SettleStar.bind(s0.data);
    const wrong = await failureMd(settle, { star_id: '' }, bearer(await mint(WRONG_SECRET, 'svc:node', { sub: 'star:impostor' })));
    assert.equal(wrong.code, grpc.status.UNAUTHENTICATED);
    const refusal = await waitForOutput(c.stars[0], /svcd: grpc: refused SettleStar from (\S+): UNAUTHENTICATED: .+/);
    // An unverified token's claims are not repeated as if they were the caller's.
    assert.doesNotMatch(refusal[0], /impostor/);

    const node = bearer(await mint(SECRET, 'svc:node', { sub: 'star:star-9' }));
    const ok = await callMd(settle, { star_id: '' }, node);
    assert.equal(ok.star_id, 'star-0');
    await waitForOutput(c.stars[0], /svcd: grpc: SettleStar from \S+ \(sub star:star-9\): OK/);
  });

  test('svc:node never grants the data plane', async () => {
    const s0 = await client(0);
    const node = bearer(await mint(SECRET, 'svc:node', { sub: 'star:star-9' }));
    const denied = await failureMd(s0.data.Append.bind(s0.data), { bucket: 'b1', key: bytes('k'), records: [{ body: bytes('x') }] }, node);
    assert.equal(denied.code, grpc.status.PERMISSION_DENIED);
  });
});

describe('peers under mtls', { skip }, () => {
  let c: TestCluster;
  let certs: ReturnType<typeof makeStarCerts>;
  const clients: Clients[] = [];
  before(async () => {
    certs = makeStarCerts();
    c = await startCluster(3, ['--auth', 'mtls', '--tls-cert', certs.cert, '--tls-key', certs.key, '--tls-client-ca', certs.ca]);
  });
  after(async () => {
    for (const cl of clients) cl.close();
    await c?.close();
    if (certs) removeDir(certs.dir);
  });

  test('a Drain sent to star-0 asks star-1 to settle over TLS with star-0\'s serving certificate', async () => {
    const creds = grpc.credentials.createSsl(readFileSync(certs.ca), readFileSync(certs.key), readFileSync(certs.cert));
    const s0 = connect(await c.grpcPort(0), creds);
    clients.push(s0);
    const res = await call(s0.admin.Drain.bind(s0.admin), { star_id: 'star-1' });
    assert.equal(typeof res.leases_moved, 'number');
    await waitForOutput(c.stars[1], /svcd: grpc: SettleStar from \S+: OK/);
    assert.doesNotMatch(c.stars[0].output(), /asking star star-1 to settle failed/);
  });
});

describe('peers under jwt with JWKS: the provisioned peer token', { skip }, () => {
  let c: TestCluster;
  let issuer: Issuer;
  const clients: Clients[] = [];
  before(async () => {
    issuer = await startIssuer();
    const es = issuer.keys.ES256;
    // The operator provisions one svc:node token for the stars (they cannot mint under JWKS).
    const peerToken = await mint(es.priv, 'svc:node', { alg: 'ES256', kid: es.kid, sub: 'star:provisioned', exp: Math.floor(Date.now() / 1000) + 3600 });
    c = await startCluster(3, ['--auth', 'jwt', '--insecure-auth', '--jwt-jwks-url', issuer.jwksUrl], { SVCD_PEER_SERVICE_TOKEN: peerToken });
  });
  after(async () => {
    for (const cl of clients) cl.close();
    await c?.close();
    issuer?.close();
  });

  test('a Drain sent to star-0 asks star-2 to settle with the provisioned token, and star-2 serves it', async () => {
    const cl = connect(await c.grpcPort(0));
    clients.push(cl);
    const es = issuer.keys.ES256;
    const admin = bearer(await mint(es.priv, 'svc:admin', { alg: 'ES256', kid: es.kid, sub: 'operator' }));
    await callMd(cl.admin.Drain.bind(cl.admin), { star_id: 'star-2' }, admin);
    await waitForOutput(c.stars[2], /svcd: grpc: SettleStar from \S+ \(sub star:provisioned\): OK/);
    assert.doesNotMatch(c.stars[0].output(), /asking star star-2 to settle failed/);
  });
});
