// Sustained single-record appends: 64 producers for a minute or more, long enough to cross WAL file
// rotations (a 64 MiB file fills in about 15 s of 100 B appends here), the settling of each sealed
// file and the auditor's check of every segment it made. The append cells of `npm run bench` measure
// 4 s and never see those; this prints ack latency per window, so a stall the background work puts on
// the event loop shows as one window's max.
//   npx tsx bench/sustained-append.ts                 (70 s, 5 s windows)
//   SUSTAINED_SECONDS=120 SUSTAINED_WINDOW_MS=2000 SUSTAINED_CONNS=64 npx tsx bench/sustained-append.ts
//   SUSTAINED_CLUSTER=1 npx tsx bench/sustained-append.ts   (a cluster star: PostgreSQL + s3rver, which
//                                                            settles from memory every 30 s)
import { buildRequest, Http1Conn } from './lib/http1.ts';
import { appendBody } from './cases/cells.ts';
import { maxMs, newHistogram, pctMs, recordNs, type Histogram } from './lib/hist.ts';
import { removeDir, startServer, tempDir } from '../test/helpers/server.ts';
import { TEST_POSTGRES_URL, dropSchema, freshSchema } from '../test/helpers/postgres.ts';
import { s3Args, type TestS3 } from '../test/helpers/s3.ts';
import { startChild } from './lib/child.ts';
import pg from 'pg';
import { CHUNK_OBJECT_GRACE_MS } from '../src/config/limits.ts';

const SECONDS = Number(process.env.SUSTAINED_SECONDS ?? 70);
const WINDOW_MS = Number(process.env.SUSTAINED_WINDOW_MS ?? 5000);
const CONNS = Number(process.env.SUSTAINED_CONNS ?? 64);
const CLUSTER = process.env.SUSTAINED_CLUSTER === '1';
/** The first window is the warm-up (JIT, first connections): reported, not counted in the whole. */
const WARMUP_WINDOWS = 1;

const fmt = (ms: number): string => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));

const dataDir = tempDir('svcd-sustained-');
process.env.SVCD_SERVER_ENTRY ??= 'bundle';
let cluster: { s3: TestS3; schema: string } | undefined;
if (CLUSTER) {
  // s3rver in a child process: in this one it would share the load generator's event loop.
  const child = startChild('floors/s3rver.ts', { BENCH_S3_BUCKET: 'svcd-sustained' });
  const at = await child.next<{ type: string; endpoint: string; bucket: string; env: Record<string, string> }>('listening');
  cluster = { s3: { endpoint: at.endpoint, bucket: at.bucket, env: at.env, close: () => child.stop() }, schema: freshSchema('svcd_sustained') };
}
const srv = await startServer(cluster
  ? { dataDir, env: cluster.s3.env, args: ['--metadata', 'postgres', '--postgres-url', TEST_POSTGRES_URL, '--postgres-schema', cluster.schema, ...s3Args(cluster.s3, `${cluster.schema}/`)] }
  : { dataDir });
const t0 = performance.now();
const at = (): string => ((performance.now() - t0) / 1000).toFixed(1);
const starLines: string[] = [];
srv.proc.stderr?.on('data', (d: Buffer) => { for (const l of d.toString().split('\n')) if (l.trim()) starLines.push(`${at()} s: ${l.slice(0, 160)}`); });
try {
  const admin = await Http1Conn.open('127.0.0.1', srv.port);
  await admin.request(buildRequest('POST', '/v1/buckets/sustained', '{}'));
  await admin.request(buildRequest('POST', '/v1/streams/sustained/s', '{}'));
  admin.close();
  const req = buildRequest('POST', '/v1/streams/sustained/s/records', appendBody(100, 1));
  const conns = await Promise.all(Array.from({ length: CONNS }, () => Http1Conn.open('127.0.0.1', srv.port)));
  let window = newHistogram();
  const whole = newHistogram();
  let stopped = false;
  let live = CONNS;
  let drained: () => void = () => undefined;
  const loop = (c: Http1Conn): void => {
    if (stopped) { if (--live === 0) drained(); return; }
    const sent = process.hrtime.bigint();
    c.send(req, (err, res) => {
      if (err || res?.status !== 200) throw err ?? new Error(`HTTP ${res?.status} ${res?.body.toString()}`);
      recordNs(window, Number(process.hrtime.bigint() - sent));
      loop(c);
    });
  };
  for (const c of conns) loop(c);
  console.log(`svcd${CLUSTER ? ' (a cluster star: PostgreSQL metadata, s3rver objects)' : ''}, ${CONNS} producers, 1 × 100 B record per append, ${SECONDS} s in ${WINDOW_MS / 1000} s windows\n`);
  console.log('| window ends | appends/s | ack p50 ms | p99 ms | max ms |');
  console.log('| --- | --- | --- | --- | --- |');
  const row = (label: string, h: Histogram, secs: number): string =>
    `| ${label} | ${Math.round(h.totalCount / secs).toLocaleString('en-US')} | ${fmt(pctMs(h, 50))} | ${fmt(pctMs(h, 99))} | ${fmt(maxMs(h))} |`;
  let windows = 0;
  let countedSecs = 0;
  while (performance.now() - t0 < SECONDS * 1000) {
    const started = performance.now();
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    const secs = (performance.now() - started) / 1000;
    const h = window;
    window = newHistogram();
    console.log(row(`${at()} s${windows < WARMUP_WINDOWS ? ' (warm-up)' : ''}`, h, secs));
    if (windows++ >= WARMUP_WINDOWS) { whole.add(h); countedSecs += secs; }
  }
  stopped = true;
  await new Promise<void>((r) => { drained = r; });
  for (const c of conns) c.close();
  console.log(`${row('whole run after warm-up', whole, countedSecs)}\n`);
  console.log(`whole run: ack p99.9 ${fmt(pctMs(whole, 99.9))} ms over ${whole.totalCount.toLocaleString('en-US')} appends`);
  if (cluster) {
    // Chunk objects past their grace are what collection has not kept up with (cluster/chunk-gc.ts).
    const sql = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await sql.connect();
    const { rows } = await sql.query<{ all: string; due: string }>(
      `SELECT count(*) AS all, count(*) FILTER (WHERE created_at < clock_timestamp() - $1 * interval '1 millisecond') AS due FROM ${cluster.schema}.chunk_objects`, [CHUNK_OBJECT_GRACE_MS]);
    await sql.end();
    console.log(`\nchunk objects at the end: ${rows[0].all} in PostgreSQL, ${rows[0].due} of them past their ${CHUNK_OBJECT_GRACE_MS / 1000} s grace`);
  }
  if (starLines.length) console.log(`\nthe star said:\n${starLines.map((l) => `  ${l}`).join('\n')}`);
} finally {
  await srv.stop();
  removeDir(dataDir);
  if (cluster) { await cluster.s3.close(); await dropSchema(cluster.schema); }
}
