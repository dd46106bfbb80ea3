// A cluster for tests: real star processes on loopback sharing one fresh PostgreSQL schema and one
// s3rver bucket that the test starts itself, each with its own data dir. Stars are stopped, killed
// (SIGKILL), paused (SIGSTOP) and restarted for real.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before } from 'node:test';
import pg from 'pg';
import { startServer, tempDir, removeDir, waitForOutput, type RunningServer } from '../helpers/server.ts';
import type { Recorder } from '../helpers/history.ts';
import { TEST_POSTGRES_URL, dropSchema, freshSchema } from '../helpers/postgres.ts';
import { startS3, s3Args, type TestS3 } from '../helpers/s3.ts';
import { TcpRelay } from '../helpers/tcp-relay.ts';

/** The express class's bucket on the same s3rver. */
export const TEST_EXPRESS_BUCKET = 'svcd-express';

/** A short lease, so failover tests wait seconds, not the default's. */
export const TEST_LEASE_TTL_MS = 1500;

export interface TestCluster {
  schema: string;
  s3: TestS3;
  stars: RunningServer[];
  /** Star i's flags (the same cluster, its own data dir). */
  args(i: number): string[];
  /** Starts star i again (after a kill or stop); with `fresh`, on an empty data dir. */
  restart(i: number, fresh?: boolean): Promise<RunningServer>;
  url(i: number): string;
  /** Star i's gRPC port, once it printed it (that line may come in a later chunk than the listening
   *  line startServer waited for). */
  grpcPort(i: number): Promise<number>;
  close(): Promise<void>;
}

/** `extraArgs` go to every star (or, as a function, to star i its own); `env` goes to every star too
 *  (e.g. an auth secret, which has no flag). */
export async function startCluster(n: number, extraArgs: string[] | ((i: number) => string[]) = [], env: Record<string, string> = {}): Promise<TestCluster> {
  const schema = freshSchema('svcd_cluster');
  const s3 = await startS3('svcd-test', [TEST_EXPRESS_BUCKET]);
  const prefix = `${schema}/`;
  const dirs: string[] = [];
  const args = (i: number): string[] => [
    '--metadata', 'postgres', '--postgres-url', TEST_POSTGRES_URL, '--postgres-schema', schema, ...s3Args(s3, prefix),
    '--star-id', `star-${i}`, '--lease-ttl-ms', String(TEST_LEASE_TTL_MS), '--grpc-listen', '127.0.0.1:0',
    '--express-bucket', TEST_EXPRESS_BUCKET, ...(typeof extraArgs === 'function' ? extraArgs(i) : extraArgs),
  ];
  const start = async (i: number, fresh = false): Promise<RunningServer> => {
    if (fresh || !dirs[i]) dirs[i] = tempDir(`svcd-cluster-${i}-`);
    return startServer({ dataDir: dirs[i], args: args(i), env: { ...s3.env, ...env } });
  };
  const stars: RunningServer[] = [];
  // One at a time: the first start writes the stored format, the others find it.
  for (let i = 0; i < n; i++) stars.push(await start(i));
  const c: TestCluster = {
    schema, s3, stars, args,
    async restart(i, fresh = false) {
      c.stars[i] = await start(i, fresh);
      return c.stars[i];
    },
    url: (i) => c.stars[i].baseUrl,
    grpcPort: async (i) => Number((await waitForOutput(c.stars[i], /svcd grpc listening on 127\.0\.0\.1:(\d+)/))[1]),
    async close() {
      for (const s of c.stars) {
        if (s.proc.signalCode === 'SIGSTOP' || s.proc.exitCode === null) s.proc.kill('SIGCONT');
        await s.kill();
      }
      await s3.close();
      await dropSchema(schema);
      for (const d of dirs) if (d) removeDir(d);
    },
  };
  return c;
}

/** One request through a star's bridge, bounded by `timeoutMs` (past it the caller treats an append
 *  as ambiguous); the body parsed when it is JSON. */
export async function request(url: string, method: string, path: string, body: unknown, timeoutMs: number): Promise<{ status: number; body: any }> {
  const res = await fetch(url + path, {
    method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  let parsed: unknown;
  try { parsed = text ? JSON.parse(text) : undefined; } catch { parsed = text; }
  return { status: res.status, body: parsed };
}

/** Reads bucket/stream whole from every star of `c`, each page recorded in `rec` as a read. */
export async function readBackRecorded(c: TestCluster, rec: Recorder, bucket: string, stream: string, timeoutMs: number): Promise<void> {
  for (let i = 0; i < c.stars.length; i++) {
    let from = 0;
    for (;;) {
      const h = rec.begin('read', { stream, startSeq: from, client: `final@${i}` });
      const a = await request(c.url(i), 'GET', `/v1/streams/${bucket}/${stream}/records?seq_num=${from}`, undefined, timeoutMs);
      assert.equal(a.status, 200, JSON.stringify(a.body));
      const records = a.body.records.map((x: { seq_num: number; body: string }) => ({ seq_num: x.seq_num, body: x.body }));
      h.end({ status: 'ok', records, tail: a.body.tail.seq_num });
      from += records.length;
      if (records.length === 0 || from >= a.body.tail.seq_num) break;
    }
  }
}

/** A three-star cluster (`extraArgs` to every star) and a PostgreSQL client on its database for one
 *  describe block: started before its tests, stopped after them. Read `c` and `sql` inside tests (they exist from `before`). */
export function clusterForSuite(extraArgs: string[] = []): { readonly c: TestCluster; readonly sql: pg.Client } {
  let c: TestCluster | undefined;
  let sql: pg.Client | undefined;
  before(async () => {
    c = await startCluster(3, extraArgs);
    sql = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await sql.connect();
  });
  after(async () => {
    await sql?.end();
    await c?.close();
  });
  return {
    get c() { assert.ok(c, 'the cluster started'); return c; },
    get sql() { assert.ok(sql, 'the client connected'); return sql; },
  };
}

/** A CA and one certificate for 127.0.0.1 valid both as a server and as a client certificate: every
 *  star serves with it and presents it to its peers (mtls). */
export function makeStarCerts(): { dir: string; ca: string; cert: string; key: string } {
  const dir = tempDir('svcd-peer-certs-');
  const openssl = (args: string[]): void => { execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] }); };
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=svcd peer test CA']);
  writeFileSync(join(dir, 'star.ext'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n');
  openssl(['req', ...ec, '-keyout', 'star.key', '-out', 'star.csr', '-subj', '/CN=127.0.0.1']);
  openssl(['x509', '-req', '-in', 'star.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'star.pem', '-days', '2', '-extfile', 'star.ext']);
  return { dir, ca: join(dir, 'ca.pem'), cert: join(dir, 'star.pem'), key: join(dir, 'star.key') };
}

/** Producers appending one record at a time to `bucket/key` through one star, where every answer is
 *  either 200 (acked at its seq) or that star's own 503 (not appended): a hand-off's load. */
export function knownOutcomeProducers(url: string, bucket: string, key: string, producers: number, timeoutMs: number): {
  acked: Map<string, number>;
  refused: Set<string>;
  stop(): Promise<void>;
} {
  const acked = new Map<string, number>();
  const refused = new Set<string>();
  let stopping = false;
  let n = 0;
  const loops = Array.from({ length: producers }, async (_, p) => {
    while (!stopping) {
      const body = `p${p}-${n++}`;
      const a = await request(url, 'POST', `/v1/streams/${bucket}/${key}/records`, { records: [{ body }] }, timeoutMs);
      if (a.status === 200) acked.set(body, a.body.start.seq_num);
      else {
        assert.equal(a.status, 503, JSON.stringify(a.body));
        refused.add(body);
      }
    }
  });
  return { acked, refused, stop: async () => { stopping = true; await Promise.all(loops); } };
}

/** Reads `bucket/key` whole from `url` and checks it against a hand-off's producers: every ack at
 *  its seq, no append answered 503 in the stream, and nothing else. */
export async function assertKnownOutcomes(url: string, bucket: string, key: string, acked: ReadonlyMap<string, number>, refused: ReadonlySet<string>, timeoutMs: number): Promise<void> {
  const seqOf = await readBack(url, `/v1/streams/${bucket}/${key}`, timeoutMs);
  for (const [body, seq] of acked) assert.equal(seqOf.get(body), seq, `acked ${body} at ${seq}`);
  assert.deepEqual([...refused].filter((b) => seqOf.has(b)), [], 'appends answered 503 ("not acknowledged; retry") were appended all the same');
  assert.equal(seqOf.size, acked.size, 'nothing but the acked appends');
}

/** A producer appending one record at a time (bodies `${prefix}0`, `${prefix}1`, ...) to `path` on
 *  whichever star `target` names: what it was told (acked at a position, refused with a 503), what
 *  it cannot know (no answer: the star died), and any other answer (an anomaly). */
export function produce(target: () => string, path: string, timeoutMs: number, prefix = 'r'): { acked: Map<string, number>; refused: Map<string, string>; unknown: Set<string>; anomalies: string[]; stop(): Promise<void> } {
  const acked = new Map<string, number>();
  const refused = new Map<string, string>();
  const unknown = new Set<string>();
  const anomalies: string[] = [];
  let stopping = false;
  let n = 0;
  const loop = (async () => {
    while (!stopping) {
      const body = `${prefix}${n++}`;
      try {
        const a = await request(target(), 'POST', `${path}/records`, { records: [{ body }] }, timeoutMs);
        if (a.status === 200) acked.set(body, a.body.start.seq_num);
        else if (a.status === 503) refused.set(body, String(a.body?.error));
        else anomalies.push(`${a.status} ${JSON.stringify(a.body)}`);
      } catch {
        unknown.add(body);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return { acked, refused, unknown, anomalies, stop: async () => { stopping = true; await loop; } };
}

/** The stream at `path` read whole from `url`: each body's position; fails on a gap or a duplicate. */
export async function readBack(url: string, path: string, timeoutMs: number): Promise<Map<string, number>> {
  const seqOf = new Map<string, number>();
  for (let from = 0; ;) {
    const page = await request(url, 'GET', `${path}/records?seq_num=${from}`, undefined, timeoutMs);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    for (const r of page.body.records as { seq_num: number; body: string }[]) {
      assert.equal(r.seq_num, from, `a gap or a duplicate at ${from}`);
      assert.ok(!seqOf.has(r.body), `${r.body} twice`);
      seqOf.set(r.body, r.seq_num);
      from += 1;
    }
    if (page.body.records.length === 0 || from >= page.body.tail.seq_num) return seqOf;
  }
}


/** Two or more stars of one cluster whose S3 (one s3rver) is reached only through TCP relays the
 *  test can cut: one relay for all (`shared`) or one each (`each`: star i's is `relays[i]`). */
export interface RelayedCluster {
  schema: string;
  stars: RunningServer[];
  relays: TcpRelay[];
  url(i: number): string;
  /** Star i's data dir. */
  dataDir(i: number): string;
  /** The index of the star holding the lease of bucket/key now (-1: none). */
  leaderOf(bucket: string, key: string): Promise<number>;
  close(): Promise<void>;
}

export async function relayedCluster(n: number, relaying: 'shared' | 'each', schemaPrefix: string): Promise<RelayedCluster> {
  const schema = freshSchema(schemaPrefix);
  const s3 = await startS3('svcd-test');
  const relays: TcpRelay[] = [];
  const stars: RunningServer[] = [];
  const dirs: string[] = [];
  const sql = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await sql.connect();
  const close = async (): Promise<void> => {
    await sql.end();
    for (const s of stars) await s.kill();
    for (const r of relays) r.close();
    await s3.close();
    await dropSchema(schema);
    for (const d of dirs) removeDir(d);
  };
  try {
    for (let i = 0; i < n; i++) {
      if (relaying === 'each' || i === 0) {
        const relay = new TcpRelay(Number(new URL(s3.endpoint).port));
        await relay.start();
        relays.push(relay);
      }
      const relay = relays[relaying === 'each' ? i : 0];
      dirs.push(tempDir(`${schemaPrefix}-${i}-`));
      stars.push(await startServer({
        dataDir: dirs[i], env: s3.env, args: [
          '--metadata', 'postgres', '--postgres-url', TEST_POSTGRES_URL, '--postgres-schema', schema,
          ...s3Args({ ...s3, endpoint: `http://127.0.0.1:${relay.port}` }, `${schema}/`),
          '--star-id', `star-${i}`, '--lease-ttl-ms', String(TEST_LEASE_TTL_MS), '--grpc-listen', '127.0.0.1:0', '--metrics-listen', '127.0.0.1:0',
        ],
      }));
    }
  } catch (err) {
    await close();
    throw err;
  }
  return {
    schema, stars, relays, close,
    url: (i) => stars[i].baseUrl,
    dataDir: (i) => dirs[i],
    leaderOf: async (bucket, key) => {
      const holder = (await sql.query<{ holder: string }>(
        `SELECT holder FROM ${schema}.leases WHERE bucket = $1 AND key = $2 AND expires_at > clock_timestamp()`, [bucket, Buffer.from(key)])).rows[0]?.holder;
      return holder === undefined ? -1 : Number(holder.slice('star-'.length));
    },
  };
}
