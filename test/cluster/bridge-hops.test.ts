// The data bridge's one hop in clusters that are not plain HTTP, on real stars sharing PostgreSQL and
// s3rver (spec: "A bridge proxies one hop to the leader"; an HTTP caller never sees NOT_OWNER):
// - bridges serving TLS hop over TLS, and under mtls present the star's own certificate;
// - a star without a data bridge (`--listen ''`, gRPC only) is never a vacant stream's home, so no
//   HTTP request is sent to a star it cannot reach, and nothing is ever sent to an empty address;
// - a bridge listening on every interface is advertised at a host the other stars can dial.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { postgresSkipReason, TEST_POSTGRES_URL } from '../helpers/postgres.ts';
import { removeDir, spawnStar, tempDir } from '../helpers/server.ts';
import { request, type TlsClient } from '../auth-http/kit.ts';
import { closedPort } from '../helpers/ports.ts';
import { makeStarCerts, startCluster, type TestCluster } from './kit.ts';

const skip = await postgresSkipReason();

/** Keys enough that, with two or three stars, some are homed on each (rendezvous hashing). */
const KEYS = Array.from({ length: 12 }, (_, i) => `k${i}`);
/** How long a new star's heartbeat may take to show in the membership. A bound, not a speed. */
const MEMBERSHIP_WAIT_MS_MAX = 30_000;

/** One statement on its own connection, for what the test reads from the cluster's schema. */
async function query<T extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<T[]> {
  const sql = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await sql.connect();
  try {
    return (await sql.query<T>(text, params)).rows;
  } finally {
    await sql.end();
  }
}

/** Every key created at star 0, then appended to and read at each star in turn: each request a star
 *  does not lead is hopped. Answers the holders, so a test can see both stars led some. */
async function everyKeyAtEveryStar(c: TestCluster, tlsClient: TlsClient | undefined): Promise<Set<string>> {
  // The scheme the star printed (the kit's url() assumes http).
  const at = (i: number): string => `${c.stars[i].printedScheme}://127.0.0.1:${c.stars[i].port}`;
  const opts = (body?: unknown) => ({ ...(tlsClient ? { tls: tlsClient } : {}), ...(body !== undefined ? { body } : {}) });
  assert.equal((await request(at(0), 'POST', '/v1/buckets/hb', opts({}))).status, 201);
  for (const k of KEYS) {
    const created = await request(at(0), 'POST', `/v1/streams/hb/${k}`, opts({}));
    assert.equal(created.status, 201, `create ${k} at star 0: ${created.text}`);
    for (let i = 0; i < c.stars.length; i++) {
      const a = await request(at(i), 'POST', `/v1/streams/hb/${k}/records`, opts({ records: [{ body: `${k}@${i}` }] }));
      assert.equal(a.status, 200, `append ${k} at star ${i}: ${a.text}`);
    }
    for (let i = 0; i < c.stars.length; i++) {
      const r = await request(at(i), 'GET', `/v1/streams/hb/${k}/records?seq_num=0`, opts());
      assert.equal(r.status, 200, `read ${k} at star ${i}: ${r.text}`);
      assert.deepEqual(r.body.records.map((x: { body: string }) => x.body), c.stars.map((_, j) => `${k}@${j}`));
    }
  }
  const rows = await query<{ holder: string }>(`SELECT DISTINCT holder FROM ${c.schema}.leases WHERE bucket = 'hb'`);
  return new Set(rows.map((r) => r.holder));
}

/** The two TLS clusters: the stars' flags and environment, and what the test's client presents. */
const TLS_CASES: { name: string; test: string; args(certs: ReturnType<typeof makeStarCerts>): string[]; env(certs: ReturnType<typeof makeStarCerts>): Record<string, string>; client(certs: ReturnType<typeof makeStarCerts>): TlsClient }[] = [
  {
    name: 'bridge hops over TLS (auth off; the stars trust the CA through NODE_EXTRA_CA_CERTS)',
    test: 'every request a star does not lead reaches its leader over TLS',
    args: (k) => ['--tls-cert', k.cert, '--tls-key', k.key],
    env: (k) => ({ NODE_EXTRA_CA_CERTS: k.ca }),
    client: (k) => ({ ca: readFileSync(k.ca) }),
  },
  {
    name: 'bridge hops under mtls: the hop presents the star\'s own certificate',
    test: 'every request a star does not lead reaches its leader, which trusts the hopping star\'s certificate',
    args: (k) => ['--auth', 'mtls', '--tls-cert', k.cert, '--tls-key', k.key, '--tls-client-ca', k.ca],
    env: () => ({}),
    client: (k) => ({ ca: readFileSync(k.ca), cert: readFileSync(k.cert), key: readFileSync(k.key) }),
  },
];

for (const tc of TLS_CASES) {
  describe(tc.name, { skip }, () => {
    let c: TestCluster | undefined;
    let certs: ReturnType<typeof makeStarCerts> | undefined;
    before(async () => {
      certs = makeStarCerts();
      c = await startCluster(2, tc.args(certs), tc.env(certs));
      await membershipSeen(c, 'star-1');
    });
    after(async () => {
      await c?.close();
      if (certs) removeDir(certs.dir);
    });

    test(tc.test, async () => {
      assert.ok(c && certs);
      const holders = await everyKeyAtEveryStar(c, tc.client(certs));
      assert.deepEqual([...holders].sort(), ['star-0', 'star-1'], 'both stars led some of the keys, so hops went both ways');
    });
  });
}

describe('a star without a data bridge (--listen \'\') in a cluster', { skip }, () => {
  let c: TestCluster | undefined;
  let bridgeless: ChildProcess | undefined;
  let dataDir: string | undefined;
  /** Anything listening where a hop to an empty address would land (port 80 may be taken, or not
   *  ours to bind: the test then only checks that the bridged stars serve every key). */
  let trap: http.Server | undefined;
  const trapped: string[] = [];
  before(async () => {
    c = await startCluster(2);
    dataDir = tempDir('svcd-bridgeless-');
    bridgeless = (await spawnStar([...c.args(2), '--listen', '', '--data-dir', dataDir], c.s3.env, /svcd grpc listening on/)).proc;
    await membershipSeen(c, 'star-2');
    trap = http.createServer((req, res) => { trapped.push(`${req.method} ${req.url}`); res.end('{}'); });
    await new Promise<void>((resolve) => { trap!.once('error', () => { trap = undefined; resolve(); }); trap!.listen(80, '127.0.0.1', resolve); });
  });
  after(async () => {
    bridgeless?.kill('SIGKILL');
    trap?.close();
    await c?.close();
    if (dataDir) removeDir(dataDir);
  });

  test('it is home to no vacant stream: every key is served at either bridge, and nothing goes to an empty address', async () => {
    assert.ok(c);
    const [row] = await query<{ bridge_address: string }>(`SELECT bridge_address FROM ${c.schema}.stars WHERE star_id = 'star-2'`);
    assert.equal(row?.bridge_address, '', 'star-2 joined without a bridge');
    const holders = await everyKeyAtEveryStar(c, undefined);
    assert.ok(!holders.has('star-2'), `no stream led by the star without a bridge: ${[...holders].join(', ')}`);
    assert.deepEqual(trapped, [], 'no hop went to port 80');
  });
});

describe('a star whose bridge listens on every interface (0.0.0.0)', { skip }, () => {
  let c: TestCluster | undefined;
  let wide: ChildProcess | undefined;
  let dataDir: string | undefined;
  let bridgePort = 0;
  before(async () => {
    c = await startCluster(1);
    dataDir = tempDir('svcd-wide-');
    const grpcPort = await closedPort();
    // --advertise-address names the host other machines dial; the bridge is advertised on it too.
    const args = [...c.args(1), '--listen', '0.0.0.0:0', '--grpc-listen', `127.0.0.1:${grpcPort}`, '--advertise-address', `127.0.0.1:${grpcPort}`, '--data-dir', dataDir];
    const star = await spawnStar(args, c.s3.env, /svcd listening on http:\/\/0\.0\.0\.0:(\d+)[^]*svcd grpc listening on/);
    wide = star.proc;
    bridgePort = Number(star.match[1]);
    await membershipSeen(c, 'star-1');
  });
  after(async () => {
    wide?.kill('SIGKILL');
    await c?.close();
    if (dataDir) removeDir(dataDir);
  });

  test('it is advertised at --advertise-address\'s host with its bridge\'s port, and hops reach it there', async () => {
    assert.ok(c);
    const [row] = await query<{ bridge_address: string }>(`SELECT bridge_address FROM ${c.schema}.stars WHERE star_id = 'star-1'`);
    assert.equal(row?.bridge_address, `127.0.0.1:${bridgePort}`, 'not 0.0.0.0, which no other star can dial');
    // Its share of the keys is created and appended through star 0, which hops there.
    assert.equal((await request(c.url(0), 'POST', '/v1/buckets/wb', { body: {} })).status, 201);
    for (const k of KEYS) {
      assert.equal((await request(c.url(0), 'POST', `/v1/streams/wb/${k}`, { body: {} })).status, 201);
      const a = await request(c.url(0), 'POST', `/v1/streams/wb/${k}/records`, { body: { records: [{ body: k }] } });
      assert.equal(a.status, 200, `${k}: ${a.text}`);
      const r = await request(`http://127.0.0.1:${bridgePort}`, 'GET', `/v1/streams/wb/${k}/records/tail`);
      assert.equal(r.body.seq_num, 1);
    }
    const [led] = await query<{ n: string }>(`SELECT count(*) AS n FROM ${c.schema}.leases WHERE bucket = 'wb' AND holder = 'star-1'`);
    const hopped = Number(led.n);
    assert.ok(hopped > 0, 'some keys are led by the 0.0.0.0 star, reached through star 0');
  });
});

/** Waits until every star has read `starId`'s membership row: its heartbeat (every 500 ms) has moved
 *  twice since first seen, so a full heartbeat period passed in which each other star read the
 *  membership at least once. */
async function membershipSeen(c: TestCluster, starId: string): Promise<void> {
  const seen = new Set<string>();
  const deadline = Date.now() + MEMBERSHIP_WAIT_MS_MAX;
  while (seen.size < 3) {
    assert.ok(Date.now() < deadline, `${starId}'s heartbeat did not move`);
    const [r] = await query<{ at: Date }>(`SELECT heartbeat_at AS at FROM ${c.schema}.stars WHERE star_id = $1`, [starId]);
    if (r) seen.add(r.at.toISOString());
    await new Promise((res) => setTimeout(res, 100));
  }
}
