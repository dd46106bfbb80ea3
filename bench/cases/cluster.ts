// A cluster of stars (issue 10) next to one star: appends and ack latency on (a) one star on the
// embedded default (local WAL), (b) one star in cluster mode (PostgreSQL + s3rver), (c) three stars
// in cluster mode, producers on random stars (most requests take the one-hop proxy) and on each
// stream's leader (found in the leases and stars tables). In the same run: the S3 PUT latency of a
// group commit's object (sizes as the one-star cluster wrote them) and the PostgreSQL commit latency
// against the same s3rver and server, and the failover time over leader kills (SIGKILL → the
// stream's next successful append through another star, then the killed star restarts).
// `BENCH_ONLY=cluster npm run bench`, or alone: `npx tsx bench/cases/cluster.ts` (BENCH_QUICK=1 too).
import { cpus, loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import pg from 'pg';
import { COMMIT_LINGER_MS_STANDARD } from '../../src/config/limits.ts';
import { LEASE_TTL_MS } from '../../src/config/limits.ts';
import { TEST_POSTGRES_URL, dropSchema, freshSchema } from '../../test/helpers/postgres.ts';
import { startS3, s3Args, type TestS3 } from '../../test/helpers/s3.ts';
import { removeDir, startServer, tempDir, type RunningServer } from '../../test/helpers/server.ts';
import { loadConfig, type BenchConfig } from '../lib/config.ts';
import { cpuWindow } from '../lib/cpu.ts';
import { fix, int, ms, table } from '../lib/format.ts';
import { maxMs, newHistogram, pctMs, recordNs, type Histogram } from '../lib/hist.ts';
import { buildRequest, Http1Conn } from '../lib/http1.ts';
import { startLoadgen, type Loadgen, type Measured } from '../lib/loadgen.ts';
import { newReport, type Report } from '../lib/report.ts';
import { benchBuiltStar, exitPast, startSvcd } from '../lib/svcd.ts';
import { appendBody } from './cells.ts';

const BUCKET = 'bench';
const RECORD_BYTES = 100;
const STREAMS = 8;
const BATCHES = [1, 100] as const;
const PRODUCERS_FULL = [16, 64] as const;
const PRODUCERS_QUICK = [64] as const;
const STARS = 3;
/** Leader kills in the failover part (BENCH_QUICK: fewer). */
const KILLS_FULL = 10;
const KILLS_QUICK = 3;
/** Timed PutObjects per object size, and PostgreSQL commits. */
const PUTS_FULL = 200;
const PUTS_QUICK = 50;
const PG_COMMITS_FULL = 1000;
const PG_COMMITS_QUICK = 200;
/** Failover: successful appends through the entry star before the leader is killed. */
const FAILOVER_WARM_APPENDS = 20;
/** Failover: the longest wait for the stream's next successful append after a kill. */
const FAILOVER_WAIT_MS_MAX = 30_000;
/** Failover: one append's longest wait (a request held while the lease is waited out counts). */
const FAILOVER_REQUEST_MS_MAX = 15_000;
/** Failover: pause after a failed append before the next (not Retry-After's 1 s, so the time to
 *  the next success is resolved to this). */
const FAILOVER_RETRY_MS = 20;
/** After a restart, time for the star's membership row and heartbeat before the next kill. */
const RESTART_SETTLE_MS = 1000;
/** Fixed seed for which star each producer of the random-star rows talks to. */
const STAR_PICK_SEED = 0x5eed;
/** Before a cell the stars must be idle (summed CPU below this over QUIET_SAMPLE_MS): a star burns
 *  about 1.7 s of CPU after its listening line, and a cell must not measure that. */
const QUIET_CPU_PCT = 15;
const QUIET_SAMPLE_MS = 500;
const QUIET_WAIT_MS_MAX = 20_000;
/** Whole-run guard when run alone. */
const RUN_MS_MAX = 15 * 60_000;

export interface ClusterRow {
  setup: string;
  batch: number;
  producers: number;
  stars: number;
  m: Measured;
}

export interface ClusterOutcome {
  rows: ClusterRow[];
  /** Median object bytes of a group commit per one-star-cluster cell (key batch/producers). */
  groupBytes: Map<string, { median: number; objects: number }>;
  put: { bytes: number; hist: Histogram }[];
  pgCommit: Histogram;
  failoverMs: number[];
  failoverNotes: string[];
  leaseTtlMs: number;
  lingerMs: number;
  warmupMs: number;
  measureMs: number;
}

export const SETUP_EMBEDDED = 'one star, embedded (local WAL)';
export const SETUP_CLUSTER1 = 'one star, cluster (PG + s3rver)';
export const SETUP_RANDOM = 'three stars, random star';
export const SETUP_LEADER = 'three stars, to the leader';

const cellKeyOf = (batch: number, producers: number): string => `${batch}/${producers}`;
const sleep = (msec: number): Promise<void> => new Promise((r) => setTimeout(r, msec));

/** mulberry32: a small seeded generator, so the random-star rows pick the same stars every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Stars of one cluster: its own schema and s3 prefix on the shared s3rver, a data dir per star,
 *  the default lease TTL. Stars are started one at a time (the first writes the stored format). */
class Cluster {
  readonly stars: (RunningServer | undefined)[] = [];
  private readonly dirs: string[] = [];
  constructor(readonly schema: string, private readonly s3: TestS3) {}

  args(i: number): string[] {
    return [
      '--metadata', 'postgres', '--postgres-url', TEST_POSTGRES_URL, '--postgres-schema', this.schema,
      ...s3Args(this.s3, `${this.schema}/`), '--star-id', `star-${i}`,
    ];
  }

  async start(i: number): Promise<RunningServer> {
    this.dirs[i] ??= tempDir(`svcd-bench-cluster-${i}-`);
    const s = await startServer({ engine: 'uws', dataDir: this.dirs[i], args: this.args(i), env: this.s3.env });
    if (!/engine uws/.test(s.output())) console.error(`bench: warning, star-${i} is not serving with uWS: ${s.output().trim()}`);
    this.stars[i] = s;
    return s;
  }

  live(i: number): RunningServer {
    const s = this.stars[i];
    if (!s || s.proc.exitCode !== null || s.proc.signalCode !== null) throw new Error(`star-${i} is not running`);
    return s;
  }

  pids(): (number | undefined)[] { return this.stars.map((s) => s?.proc.pid); }

  /** SIGKILL every star still running (synchronous: also used on process exit). */
  killAllSync(): void {
    for (const s of this.stars) if (s && s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill('SIGKILL');
  }

  async close(): Promise<void> {
    // Graceful first (a stopping star commits what it queued), SIGKILL past a bound.
    await Promise.all(this.stars.map(async (s) => {
      if (!s) return;
      const t = setTimeout(() => { void s.kill(); }, 10_000);
      await s.stop();
      clearTimeout(t);
    }));
    for (const d of this.dirs) if (d) removeDir(d);
    await dropSchema(this.schema);
  }
}

async function control(port: number): Promise<{ call(method: string, path: string, body?: string): Promise<{ status: number; body: string }>; close(): void }> {
  const conn = await Http1Conn.open('127.0.0.1', port);
  return {
    async call(method, path, body) {
      const r = await conn.request(buildRequest(method, path, body));
      return { status: r.status, body: r.body.toString() };
    },
    close: () => conn.close(),
  };
}

/** Creates the bucket (once) and the streams, stream i through the star on ports[i mod ports]: in a
 *  cluster the star that serves a stream's first request takes its lease and keeps it while the
 *  stream is used, so this is what spreads the leaders over the stars. */
async function createStreams(ports: number[], keys: string[]): Promise<void> {
  const cs = await Promise.all(ports.map((p) => control(p)));
  try {
    const b = await cs[0].call('POST', `/v1/buckets/${BUCKET}`, '{}');
    if (b.status !== 201 && b.status !== 409) throw new Error(`create bucket: HTTP ${b.status} ${b.body}`);
    for (const [i, k] of keys.entries()) {
      const r = await cs[i % cs.length].call('POST', `/v1/streams/${BUCKET}/${k}`, '{}');
      if (r.status !== 201 && r.status !== 409) throw new Error(`create stream ${k}: HTTP ${r.status} ${r.body}`);
    }
  } finally {
    for (const c of cs) c.close();
  }
}

/** Each stream's leader's bridge port, from the leases (unexpired) and stars tables. */
async function leaderPorts(db: pg.Client, schema: string): Promise<Map<string, { port: number; holder: string }>> {
  const r = await db.query<{ key: Buffer; holder: string; bridge_address: string }>(
    `SELECT l.key, l.holder, st.bridge_address FROM ${schema}.leases l JOIN ${schema}.stars st ON st.star_id = l.holder
     WHERE l.bucket = $1 AND l.expires_at > clock_timestamp()`, [BUCKET]);
  const out = new Map<string, { port: number; holder: string }>();
  for (const row of r.rows) out.set(row.key.toString(), { port: Number(row.bridge_address.split(':').pop()), holder: row.holder });
  return out;
}

function cells(quick: boolean): { batch: number; producers: number }[] {
  const out: { batch: number; producers: number }[] = [];
  for (const batch of BATCHES) for (const producers of quick ? PRODUCERS_QUICK : PRODUCERS_FULL) out.push({ batch, producers });
  return out;
}

const streamKeys = (setupTag: string, batch: number, producers: number): string[] =>
  Array.from({ length: STREAMS }, (_, i) => `${setupTag}-b${batch}-p${producers}-s${i}`);

/** Waits until the pids together use less than QUIET_CPU_PCT of a core; false if they never did. */
async function waitQuiet(pids: (number | undefined)[]): Promise<boolean> {
  const deadline = performance.now() + QUIET_WAIT_MS_MAX;
  while (performance.now() < deadline) {
    const ends = pids.map((p) => cpuWindow(p));
    await sleep(QUIET_SAMPLE_MS);
    if (ends.reduce((sum, end) => sum + end(), 0) < QUIET_CPU_PCT) return true;
  }
  return false;
}

async function runLoad(
  cfg: BenchConfig, loadgen: Loadgen, connPorts: number[], keys: string[], batch: number, producers: number, pids: (number | undefined)[],
  warmupMs = cfg.warmupMs,
): Promise<Measured> {
  if (!(await waitQuiet(pids))) console.error(`bench: the stars did not go idle within ${QUIET_WAIT_MS_MAX} ms before a cell`);
  return loadgen.run({
    host: '127.0.0.1', port: connPorts[0], connPorts, conns: producers, warmupMs, measureMs: cfg.measureMs,
    work: {
      kind: 'append', paths: keys.map((k) => `/v1/streams/${BUCKET}/${k}/records`), body: appendBody(RECORD_BYTES, batch),
      recordsPerRequest: batch, recordBytes: RECORD_BYTES, checkSpan: true,
    },
  }, pids);
}

/** Keys and sizes of the objects under `prefix` (every page). */
async function listObjects(s3c: S3Client, bucket: string, prefix: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  let token: string | undefined;
  do {
    const r = await s3c.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    for (const o of r.Contents ?? []) if (o.Key) out.set(o.Key, o.Size ?? 0);
    token = r.IsTruncated ? r.NextContinuationToken : undefined;
  } while (token);
  return out;
}

const median = (xs: number[]): number => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

function noteErrors(report: Report, what: string, m: Measured): void {
  if (m.errors > 0) report.notes.push(`cluster ${what}: ${m.errors} errors (${JSON.stringify(m.statuses)}), first: ${m.firstError}`);
  if (m.unanswered > 0 || m.requests === 0) report.notes.push(`cluster ${what}: ${m.requests} answers in the window, ${m.unanswered} requests never answered`);
}

/** Failover: one producer appends to `fo` through a star that does not lead it; the leader is
 *  SIGKILLed; the time from the kill to the first successful append sent after it; then the killed
 *  star restarts on its data dir. */
async function runFailover(c: Cluster, db: pg.Client, kills: number, out: ClusterOutcome, log: (s: string) => void): Promise<void> {
  const key = 'fo';
  await createStreams([c.live(0).port], [key]);
  const body = JSON.stringify({ records: [{ body: 'x'.repeat(RECORD_BYTES) }] });
  const append = async (port: number): Promise<number> => {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/v1/streams/${BUCKET}/${key}/records`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(FAILOVER_REQUEST_MS_MAX),
      });
      await res.arrayBuffer();
      return res.status;
    } catch {
      return 0;
    }
  };
  const leaderOf = async (): Promise<number | undefined> => {
    const r = await db.query<{ holder: string; epoch: string }>(
      `SELECT holder, epoch FROM ${c.schema}.leases WHERE bucket = $1 AND key = $2 AND expires_at > clock_timestamp()`, [BUCKET, Buffer.from(key)]);
    return r.rows.length ? Number(r.rows[0].holder.replace('star-', '')) : undefined;
  };
  for (let k = 0; k < kills; k++) {
    // Whoever leads the stream now (an append through any star takes the lease if none does).
    let leader: number | undefined;
    for (let tries = 0; leader === undefined && tries < 50; tries++) {
      const st = await append(c.live(k % STARS).port);
      if (st === 200) leader = await leaderOf();
      if (leader === undefined) await sleep(100);
    }
    if (leader === undefined) throw new Error('failover: no star took the lease of the stream');
    const entry = (leader + 1 + (k % (STARS - 1))) % STARS;
    const entryPort = c.live(entry).port;
    let ok = 0;
    let stop = false;
    let tKill = Infinity;
    let failed = 0;
    const statuses: Record<string, number> = {};
    let firstOkAfterKill: number | undefined;
    const producer = (async () => {
      while (!stop) {
        const t0 = performance.now();
        const st = await append(entryPort);
        const t1 = performance.now();
        if (st === 200) {
          ok++;
          if (t0 >= tKill && firstOkAfterKill === undefined) { firstOkAfterKill = t1; stop = true; }
        } else {
          if (t0 >= tKill || t1 >= tKill) { failed++; statuses[st || 'conn'] = (statuses[st || 'conn'] ?? 0) + 1; }
          await sleep(FAILOVER_RETRY_MS);
        }
      }
    })();
    const warmDeadline = performance.now() + 10_000;
    while (ok < FAILOVER_WARM_APPENDS && performance.now() < warmDeadline) await sleep(10);
    const victim = c.live(leader);
    tKill = performance.now();
    victim.proc.kill('SIGKILL');
    const deadline = tKill + FAILOVER_WAIT_MS_MAX;
    while (firstOkAfterKill === undefined && performance.now() < deadline) await sleep(5);
    stop = true;
    await producer;
    const after = await leaderOf();
    if (firstOkAfterKill === undefined) {
      out.failoverNotes.push(`kill ${k + 1}: star-${leader} killed, no successful append through star-${entry} within ${FAILOVER_WAIT_MS_MAX} ms (${JSON.stringify(statuses)})`);
    } else {
      const dt = firstOkAfterKill - tKill;
      out.failoverMs.push(dt);
      out.failoverNotes.push(`kill ${k + 1}: star-${leader} killed, appends through star-${entry}; next success after ${ms(dt)} ms, `
        + `${failed} failed attempts in between (${JSON.stringify(statuses)}); new leader star-${after ?? '?'}`);
    }
    log(`cluster: failover ${k + 1}/${kills}: ${out.failoverNotes[out.failoverNotes.length - 1]}`);
    await victim.kill();
    await c.start(leader);
    await sleep(RESTART_SETTLE_MS);
  }
}

export async function runCluster(cfg: BenchConfig, report: Report, log: (s: string) => void): Promise<void> {
  const out: ClusterOutcome = {
    rows: [], groupBytes: new Map(), put: [], pgCommit: newHistogram(), failoverMs: [], failoverNotes: [],
    leaseTtlMs: LEASE_TTL_MS, lingerMs: COMMIT_LINGER_MS_STANDARD, warmupMs: cfg.warmupMs, measureMs: cfg.measureMs,
  };
  report.cluster = out;
  const quick = cfg.quick;
  const loadgen = await startLoadgen();
  let s3: TestS3 | undefined;
  const clusters: Cluster[] = [];
  const db = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  db.on('error', () => undefined);
  // A bench killed by its guard or a signal must not leave stars behind.
  const onExit = (): void => { for (const c of clusters) c.killAllSync(); };
  process.on('exit', onExit);
  try {
    await db.connect();
    s3 = await startS3(BUCKET);
    const s3c = new S3Client({
      endpoint: s3.endpoint, forcePathStyle: true, region: s3.env.AWS_REGION,
      credentials: { accessKeyId: s3.env.AWS_ACCESS_KEY_ID, secretAccessKey: s3.env.AWS_SECRET_ACCESS_KEY },
    });

    // (a) one star on the embedded default.
    {
      log('cluster: (a) one star, embedded');
      const svcd = await startSvcd({ profileDir: cfg.profileDir });
      try {
        for (const { batch, producers } of cells(quick)) {
          const keys = streamKeys('e', batch, producers);
          await createStreams([svcd.port], keys);
          const m = await runLoad(cfg, loadgen, [svcd.port], keys, batch, producers, [svcd.pid]);
          noteErrors(report, `${SETUP_EMBEDDED} ${batch}/${producers}`, m);
          out.rows.push({ setup: SETUP_EMBEDDED, batch, producers, stars: 1, m });
        }
      } finally {
        await svcd.stop();
      }
    }

    // (b) one star in cluster mode; the objects each cell wrote give the group commit's size.
    const c1 = new Cluster(freshSchema('svcd_bench1'), s3);
    clusters.push(c1);
    {
      log(`cluster: (b) one star, cluster mode (schema ${c1.schema})`);
      const star = await c1.start(0);
      const prefix = `${c1.schema}/chunks/`;
      let seen = await listObjects(s3c, s3.bucket, prefix);
      for (const { batch, producers } of cells(quick)) {
        const keys = streamKeys('c1', batch, producers);
        await createStreams([star.port], keys);
        const m = await runLoad(cfg, loadgen, [star.port], keys, batch, producers, c1.pids());
        noteErrors(report, `${SETUP_CLUSTER1} ${batch}/${producers}`, m);
        out.rows.push({ setup: SETUP_CLUSTER1, batch, producers, stars: 1, m });
        const now = await listObjects(s3c, s3.bucket, prefix);
        const sizes = [...now].filter(([k]) => !seen.has(k)).map(([, size]) => size);
        out.groupBytes.set(cellKeyOf(batch, producers), { median: median(sizes), objects: sizes.length });
        seen = now;
      }
    }

    // (c) three stars: producers on random stars, then on each stream's leader.
    const c3 = new Cluster(freshSchema('svcd_bench3'), s3);
    clusters.push(c3);
    {
      log(`cluster: (c) three stars (schema ${c3.schema})`);
      for (let i = 0; i < STARS; i++) await c3.start(i);
      const rng = seeded(STAR_PICK_SEED);
      for (const { batch, producers } of cells(quick)) {
        const keys = streamKeys('c3', batch, producers);
        await createStreams([0, 1, 2].map((i) => c3.live(i).port), keys);
        const randomPorts = Array.from({ length: producers }, () => c3.live(Math.floor(rng() * STARS)).port);
        const mr = await runLoad(cfg, loadgen, randomPorts, keys, batch, producers, c3.pids());
        noteErrors(report, `${SETUP_RANDOM} ${batch}/${producers}`, mr);
        out.rows.push({ setup: SETUP_RANDOM, batch, producers, stars: 3, m: mr });
        // The streams are led now (the random-star run used them); each producer goes to its stream's leader.
        const leaders = await leaderPorts(db, c3.schema);
        const missing = keys.filter((k) => !leaders.has(k));
        if (missing.length) report.notes.push(`cluster ${SETUP_LEADER} ${batch}/${producers}: no lease found for ${missing.join(', ')}; those producers went to star-0`);
        const leaderConnPorts = Array.from({ length: producers }, (_, c) => leaders.get(keys[c % keys.length])?.port ?? c3.live(0).port);
        const spread = new Map<string, number>();
        for (const k of keys) { const h = leaders.get(k)?.holder ?? '?'; spread.set(h, (spread.get(h) ?? 0) + 1); }
        report.notes.push(`cluster ${batch}/${producers}: leaders of the ${keys.length} streams: ${[...spread].sort().map(([h, n]) => `${h} ${n}`).join(', ')}`);
        // The streams are warm already: a shorter warm-up.
        const ml = await runLoad(cfg, loadgen, leaderConnPorts, keys, batch, producers, c3.pids(), Math.min(cfg.warmupMs, 500));
        noteErrors(report, `${SETUP_LEADER} ${batch}/${producers}`, ml);
        out.rows.push({ setup: SETUP_LEADER, batch, producers, stars: 3, m: ml });
      }
    }

    // S3 PUT at the group sizes the one-star cluster wrote, and a PostgreSQL commit, against the same
    // s3rver and server, with the stars idle.
    {
      log('cluster: S3 PUT and PostgreSQL commit latency');
      const sizes = [...new Set([...out.groupBytes.values()].map((g) => g.median).filter(Number.isFinite))].sort((a, b) => a - b);
      const n = quick ? PUTS_QUICK : PUTS_FULL;
      for (const bytes of sizes) {
        const data = Buffer.alloc(bytes, 0x78);
        const hist = newHistogram();
        for (let i = 0; i < n; i++) {
          const t0 = process.hrtime.bigint();
          await s3c.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `bench-put/${bytes}/${i}`, Body: data }));
          recordNs(hist, Number(process.hrtime.bigint() - t0));
        }
        out.put.push({ bytes, hist });
      }
      await db.query(`CREATE TABLE ${c1.schema}.bench_commit (id int PRIMARY KEY, n bigint NOT NULL)`);
      const commits = quick ? PG_COMMITS_QUICK : PG_COMMITS_FULL;
      for (let i = 0; i < commits; i++) {
        const t0 = process.hrtime.bigint();
        // One autocommitted statement: a row inserted or updated and the commit's WAL flush.
        await db.query(`INSERT INTO ${c1.schema}.bench_commit (id, n) VALUES ($1, 1) ON CONFLICT (id) DO UPDATE SET n = ${c1.schema}.bench_commit.n + 1`, [i % 16]);
        recordNs(out.pgCommit, Number(process.hrtime.bigint() - t0));
      }
    }

    // Failover over leader kills in the three-star cluster (default lease TTL).
    {
      const kills = quick ? KILLS_QUICK : KILLS_FULL;
      log(`cluster: failover, ${kills} leader kills (lease TTL ${LEASE_TTL_MS} ms)`);
      await runFailover(c3, db, kills, out, log);
    }
  } finally {
    for (const c of clusters) {
      try { await c.close(); } catch (err) { report.notes.push(`cluster: cleanup of ${c.schema} failed: ${(err as Error).message}`); }
    }
    process.removeListener('exit', onExit);
    await s3?.close().catch(() => undefined);
    await db.end().catch(() => undefined);
    await loadgen.stop();
  }
}

const perS = (n: number, m: Measured): number => (n / m.elapsedMs) * 1000;

export function clusterTables(o: ClusterOutcome): string {
  const parts: string[] = [];
  parts.push(`Appends of ${RECORD_BYTES} B records, ${STREAMS} streams per cell (producer c appends to stream c mod ${STREAMS}), `
    + `each producer one keep-alive connection in closed loop; ${o.warmupMs} ms warm-up + ${o.measureMs} ms measured `
    + '(the leader row, on streams already led: at most 500 ms warm-up). s3rver runs inside the bench process (its CPU is the "bench CPU" column). '
    + `Random star: each producer's star drawn once (seeded), so about ${fix(((STARS - 1) / STARS) * 100, 0)} % of requests take the one-hop proxy. `
    + `Three stars: stream i is created through star i mod ${STARS} (a stream's lease goes to the star that serves its first request). `
    + 'Each cell starts once the stars are idle. Stars CPU: all stars\' processes summed, % of one core.', '');
  parts.push(table(
    ['setup', 'records/req', 'producers', 'records/s', 'req/s', 'ack p50 ms', 'ack p99 ms', 'ack max ms', 'errors', 'stars CPU %', 'bench CPU %', 'loadgen CPU %'],
    o.rows.map((r) => [
      r.setup, r.batch, r.producers, int(perS(r.m.records, r.m)), int(perS(r.m.requests, r.m)),
      ms(pctMs(r.m.hist, 50)), ms(pctMs(r.m.hist, 99)), ms(maxMs(r.m.hist)), int(r.m.errors),
      int(r.m.serverCpuPct), int(r.m.selfCpuPct), int(r.m.cpuPct),
    ]),
  ), '');
  parts.push('Group commit objects the one-star cluster wrote, and the latencies of their parts measured alone (stars idle), '
    + `sequentially from the bench process: S3 PutObject (@aws-sdk/client-s3 to the same s3rver) at each cell's median object size, `
    + 'and one autocommitted PostgreSQL `INSERT … ON CONFLICT DO UPDATE` (the commit\'s round trip and WAL flush).', '');
  parts.push(table(['one-star cluster cell (records/req / producers)', 'objects', 'median object bytes'],
    [...o.groupBytes].map(([k, g]) => [k, int(g.objects), int(g.median)])), '');
  const lat: (string | number)[][] = o.put.map((p) => [`S3 PUT ${int(p.bytes)} B`, int(p.hist.totalCount), ms(pctMs(p.hist, 50)), ms(pctMs(p.hist, 99)), ms(maxMs(p.hist))]);
  lat.push(['PostgreSQL commit', int(o.pgCommit.totalCount), ms(pctMs(o.pgCommit, 50)), ms(pctMs(o.pgCommit, 99)), ms(maxMs(o.pgCommit))]);
  parts.push(table(['operation', 'samples', 'p50 ms', 'p99 ms', 'max ms'], lat), '');
  const f = [...o.failoverMs].sort((a, b) => a - b);
  parts.push(`Failover: a 3-star cluster at the default lease TTL (${o.leaseTtlMs} ms); one producer appends to one stream through a star `
    + 'that does not lead it; the leader is SIGKILLed; time from the kill to the first successful append sent after it '
    + `(failed attempts retried after ${FAILOVER_RETRY_MS} ms); then the killed star restarts on its data dir.`, '');
  parts.push(table(['kills', 'recovered', 'p50 ms', 'max ms', 'all ms'], [[
    o.failoverNotes.length, f.length, ms(median(f)), ms(f[f.length - 1]), f.map((x) => int(x)).join(', ') || '–',
  ]]), '');
  parts.push(...o.failoverNotes.map((n) => `- ${n}`));
  return parts.join('\n');
}

export interface ClusterTarget { target: string; measured: string; met: boolean | undefined }

export function clusterTargets(o: ClusterOutcome): ClusterTarget[] {
  const rows: ClusterTarget[] = [];
  const find = (setup: string, batch: number, producers: number): Measured | undefined =>
    o.rows.find((r) => r.setup === setup && r.batch === batch && r.producers === producers)?.m;
  const rate = (m: Measured | undefined): number => (m ? perS(m.records, m) : NaN);
  const producersRun = [...new Set(o.rows.map((r) => r.producers))].sort((a, b) => a - b);
  for (const producers of producersRun) {
    const one = rate(find(SETUP_CLUSTER1, 100, producers));
    for (const setup of [SETUP_RANDOM, SETUP_LEADER]) {
      const three = rate(find(setup, 100, producers));
      rows.push({
        target: `three stars ≥ 2x the batched appends of one cluster star (100 × 100 B per request, ${producers} producers; ${setup})`,
        measured: `${int(three)} vs ${int(one)} records/s: ${fix(three / one, 2)}x`,
        met: Number.isFinite(three / one) ? three / one >= 2 : undefined,
      });
    }
  }
  const pgP50 = pctMs(o.pgCommit, 50);
  for (const setup of [SETUP_CLUSTER1, SETUP_LEADER, SETUP_RANDOM]) {
    for (const r of o.rows.filter((x) => x.setup === setup)) {
      const g = o.groupBytes.get(cellKeyOf(r.batch, r.producers));
      const put = o.put.find((p) => p.bytes === g?.median);
      const putP50 = put ? pctMs(put.hist, 50) : NaN;
      const bound = o.lingerMs + putP50 + pgP50 + 2;
      const p50 = pctMs(r.m.hist, 50);
      const p99 = pctMs(r.m.hist, 99);
      rows.push({
        target: `cluster ack p50 ≤ linger (${o.lingerMs} ms) + S3 PUT p50 + PG commit p50 + 2 ms; p99 ≤ 50 ms (${setup}, ${r.batch}/${r.producers})`,
        measured: `p50 ${ms(p50)} ms vs ${ms(bound)} ms (PUT ${ms(putP50)} ms at ${int(g?.median)} B + PG ${ms(pgP50)} ms + 2); p99 ${ms(p99)} ms`,
        met: Number.isFinite(bound) && Number.isFinite(p50) ? p50 <= bound && p99 <= 50 : undefined,
      });
    }
  }
  const f = [...o.failoverMs].sort((a, b) => a - b);
  const bound = o.leaseTtlMs + 1000;
  rows.push({
    target: `failover: appends accepted again ≤ lease TTL + 1 s (${int(bound)} ms) after the leader's SIGKILL`,
    measured: f.length ? `p50 ${int(median(f))} ms, max ${int(f[f.length - 1])} ms over ${f.length} of ${o.failoverNotes.length} kills` : 'no kill recovered',
    met: o.failoverNotes.length ? f.length === o.failoverNotes.length && f[f.length - 1] <= bound : undefined,
  });
  return rows;
}

/** Alone: `npx tsx bench/cases/cluster.ts` (builds and runs the bundle, as `npm run bench` does). */
async function main(): Promise<void> {
  const cfg = loadConfig({ ...process.env, BENCH_ONLY: 'cluster' });
  benchBuiltStar();
  exitPast(RUN_MS_MAX);
  const t0 = performance.now();
  const log = (s: string): void => { process.stderr.write(`[${((performance.now() - t0) / 1000).toFixed(1)} s] ${s}\n`); };
  const report = newReport();
  const load0 = loadavg();
  let failed: unknown;
  try { await runCluster(cfg, report, log); } catch (err) { failed = err; }
  const o = report.cluster;
  const outLines = [`# svcd cluster bench (${cfg.quick ? 'quick' : 'full'}; ${new Date().toISOString()})`, '',
    `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}; every process unpinned. Load average (1/5/15 min) `
    + `${load0.map((x) => x.toFixed(2)).join(' / ')} at start, ${loadavg().map((x) => x.toFixed(2)).join(' / ')} at end.`, ''];
  if (o) outLines.push(clusterTables(o), '', '## Targets (reported, never asserted)', '',
    table(['target', 'measured', 'result'], clusterTargets(o).map((t) => [t.target, t.measured, t.met === undefined ? 'not measured' : t.met ? 'met' : '**missed**'])), '');
  if (failed) report.notes.push(`cluster failed: ${(failed as Error).stack ?? String(failed)}`);
  if (report.notes.length) outLines.push('## Notes', '', ...report.notes.map((n) => `- ${n}`), '');
  outLines.push(`Total ${((performance.now() - t0) / 1000).toFixed(0)} s.`);
  console.log(outLines.join('\n'));
  process.exitCode = failed ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(() => process.exit(process.exitCode ?? 0), (err) => { console.error(err); process.exit(1); });
}
