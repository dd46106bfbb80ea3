// The gRPC port under TLS (spec: Authentication, one mode for every caller on the gRPC port and the
// data bridge): with --tls-cert/--tls-key it serves TLS; under mtls the handshake admits exactly the
// clients whose certificate the client CA signed, and those calls are trusted; jwt over TLS needs no
// --insecure-auth and still checks bearer tokens.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { bearer, makeCerts, mint, removeDir, startStar, type Certs, type Star } from '../auth-http/kit.ts';
import { call, callMd, connect, failureMd, type Clients } from './client.ts';
import { waitForOutput } from '../helpers/server.ts';

const SECRET = 'grpc-tls-suite-secret-0123456789abcdef';

let certs: Certs;
before(() => { certs = makeCerts(); });
after(() => { if (certs) removeDir(certs.dir); });

/** The gRPC port a star printed. */
async function grpcPort(star: Star): Promise<number> {
  return Number((await waitForOutput(star, /svcd grpc listening on 127\.0\.0\.1:(\d+)/))[1]);
}

const md = (headers: Record<string, string>): grpc.Metadata => {
  const m = new grpc.Metadata();
  for (const [k, v] of Object.entries(headers)) m.set(k, v);
  return m;
};

/** A unary call's outcome: 'ok' or the gRPC status code. */
async function outcome(p: Promise<unknown>): Promise<'ok' | number> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return (err as grpc.ServiceError).code;
  }
}

describe('gRPC under mtls', () => {
  let star: Star;
  let port: number;
  const clients: Clients[] = [];
  before(async () => {
    star = await startStar({
      tls: true,
      args: ['--auth', 'mtls', '--tls-cert', certs.serverCert, '--tls-key', certs.serverKey, '--tls-client-ca', certs.ca, '--grpc-listen', '127.0.0.1:0'],
    });
    port = await grpcPort(star);
  });
  after(async () => {
    for (const c of clients) c.close();
    await star?.stop();
  });
  const client = (creds: grpc.ChannelCredentials): Clients => {
    const c = connect(port, creds);
    clients.push(c);
    return c;
  };

  test('a client certificate signed by the client CA is trusted whole', async () => {
    const c = client(grpc.credentials.createSsl(certs.read(certs.ca), certs.read(certs.clientKey), certs.read(certs.clientCert)));
    await call(c.data.CreateBucket.bind(c.data), { bucket: 'mtls-grpc' });
    await call(c.data.CreateStream.bind(c.data), { bucket: 'mtls-grpc', key: Buffer.from('s') });
    const ack = await call(c.data.Append.bind(c.data), { bucket: 'mtls-grpc', key: Buffer.from('s'), records: [{ body: Buffer.from('over mtls') }] });
    assert.equal(Number(ack.end?.seq_num), 1);
    assert.equal((await call(c.admin.Health.bind(c.admin), {})).serving, true, 'the admin plane too');
  });

  test('no client certificate, an untrusted one, or plaintext never reaches a handler', async () => {
    const ca = certs.read(certs.ca);
    const anonymous = client(grpc.credentials.createSsl(ca));
    const rogue = client(grpc.credentials.createSsl(ca, certs.read(certs.rogueKey), certs.read(certs.rogueCert)));
    const plain = client(grpc.credentials.createInsecure());
    for (const [name, c] of [['anonymous', anonymous], ['rogue', rogue], ['plaintext', plain]] as const) {
      const got = await outcome(callMd(c.data.ListBuckets.bind(c.data), {}, md({})));
      assert.notEqual(got, 'ok', `${name} must be refused`);
      assert.equal(got, grpc.status.UNAVAILABLE, `${name}: the handshake fails`);
    }
  });
});

describe('gRPC under jwt over TLS', () => {
  let star: Star;
  let c: Clients;
  before(async () => {
    star = await startStar({
      tls: true,
      args: ['--auth', 'jwt', '--tls-cert', certs.serverCert, '--tls-key', certs.serverKey, '--grpc-listen', '127.0.0.1:0'],
      env: { SVCD_JWT_HMAC_SECRET: SECRET },
    });
    c = connect(await grpcPort(star), grpc.credentials.createSsl(certs.read(certs.ca)));
  });
  after(async () => {
    c?.close();
    await star?.stop();
  });

  test('boots without --insecure-auth, serves TLS and still checks the bearer', async () => {
    const token = await mint(SECRET, 'svc:admin');
    await callMd(c.data.CreateBucket.bind(c.data), { bucket: 'jwt-grpc' }, md(bearer(token)));
    const denied = await failureMd(c.data.ListBuckets.bind(c.data), {}, md({}));
    assert.equal(denied.code, grpc.status.UNAUTHENTICATED);
  });
});
