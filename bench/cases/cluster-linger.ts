// The standard class's group-commit linger, chosen by measurement (issue 10): one star in cluster mode
// (PostgreSQL + s3rver, a fresh schema per value) under the same closed-loop load at each linger
// (`--commit-linger-ms`): one producer (a quiet star: the linger is pure added latency there) and 64
// producers over 16 streams (a busy star: a linger may buy bigger groups, fewer PUTs and statements).
// Prints appends/s, ack p50/p99 and the objects (group commits) per second for each value.
//
//   npx tsx bench/cases/cluster-linger.ts            (BENCH_QUICK=1 for shorter windows;
//   BENCH_LINGERS=0,1,2,5 picks the values)

import { cpus, loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { COMMIT_LINGER_MS_STANDARD } from '../../src/config/limits.ts';
import { TEST_POSTGRES_URL, dropSchema, freshSchema } from '../../test/helpers/postgres.ts';
import { startS3, s3Args, type TestS3 } from '../../test/helpers/s3.ts';
import { removeDir, startServer, tempDir } from '../../test/helpers/server.ts';
import { loadConfig } from '../lib/config.ts';
import { fix, int, ms, table } from '../lib/format.ts';
import { pctMs } from '../lib/hist.ts';
import { buildRequest, Http1Conn } from '../lib/http1.ts';
import { startLoadgen, type Loadgen, type Measured } from '../lib/loadgen.ts';
import { benchBuiltStar, exitPast } from '../lib/svcd.ts';
import { appendBody } from './cells.ts';

const LINGERS_MS_DEFAULT = [0, 1, 2, 5, 10];
const BUCKET = 'linger';
const STREAMS = 16;
const RECORD_BYTES = 100;
/** The two loads: a quiet star and a busy one. */
const LOADS = [{ producers: 1, name: 'quiet (1 producer)' }, { producers: 64, name: 'busy (64 producers, 16 streams)' }] as const;
/** Whole-run guard. */
const RUN_MS_MAX = 15 * 60_000;

interface Row { lingerMs: number; load: string; m: Measured; commitsPerS: number }

/** Group commits the star has made: its commit-latency histogram's count (GET /metrics). */
async function groupCommits(opsPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
  const m = /^svcd_cluster_commit_seconds_count\{phase="postgres"\} (\d+)/m.exec(text);
  return m ? Number(m[1]) : 0;
}

async function oneLinger(s3: TestS3, loadgen: Loadgen, lingerMs: number, warmupMs: number, measureMs: number): Promise<Row[]> {
  const schema = freshSchema('svcd_bench_linger');
  const prefix = `${schema}/`;
  const dir = tempDir('svcd-bench-linger-');
  const star = await startServer({
    engine: 'uws', dataDir: dir, env: s3.env,
    args: ['--metadata', 'postgres', '--postgres-url', TEST_POSTGRES_URL, '--postgres-schema', schema, ...s3Args(s3, prefix), '--commit-linger-ms', String(lingerMs), '--metrics-listen', '127.0.0.1:0'],
  });
  const opsPort = Number(/svcd ops on http:\/\/127\.0\.0\.1:(\d+)/.exec(star.output())?.[1] ?? 0);
  const rows: Row[] = [];
  try {
    const conn = await Http1Conn.open('127.0.0.1', star.port);
    try {
      const call = async (path: string): Promise<void> => {
        const r = await conn.request(buildRequest('POST', path, '{}'));
        if (r.status !== 201) throw new Error(`POST ${path}: HTTP ${r.status} ${r.body.toString()}`);
      };
      await call(`/v1/buckets/${BUCKET}`);
      for (let i = 0; i < STREAMS; i++) await call(`/v1/streams/${BUCKET}/s${i}`);
    } finally {
      conn.close();
    }
    for (const load of LOADS) {
      const keys = load.producers === 1 ? ['s0'] : Array.from({ length: STREAMS }, (_, i) => `s${i}`);
      const before = await groupCommits(opsPort);
      const m = await loadgen.run({
        host: '127.0.0.1', port: star.port, conns: load.producers, warmupMs, measureMs,
        work: { kind: 'append', paths: keys.map((k) => `/v1/streams/${BUCKET}/${k}/records`), body: appendBody(RECORD_BYTES, 1), recordsPerRequest: 1, recordBytes: RECORD_BYTES, checkSpan: true },
      }, star.proc.pid);
      const after = await groupCommits(opsPort);
      // Group commits (one object PUT and one statement each) over warm-up and measurement.
      rows.push({ lingerMs, load: load.name, m, commitsPerS: (after - before) / ((warmupMs + measureMs) / 1000) });
    }
  } finally {
    await star.stop();
    removeDir(dir);
    await dropSchema(schema);
  }
  return rows;
}

async function main(): Promise<void> {
  const cfg = loadConfig({ ...process.env, BENCH_ONLY: 'cluster' });
  benchBuiltStar();
  exitPast(RUN_MS_MAX);
  const lingers = (process.env.BENCH_LINGERS ?? '').split(',').filter(Boolean).map(Number);
  const values = lingers.length > 0 ? lingers : LINGERS_MS_DEFAULT;
  const load0 = loadavg();
  const s3 = await startS3('svcd-bench');
  const loadgen = await startLoadgen();
  const rows: Row[] = [];
  try {
    for (const l of values) rows.push(...await oneLinger(s3, loadgen, l, cfg.warmupMs, cfg.measureMs));
  } finally {
    await loadgen.stop();
    await s3.close();
  }
  console.log([
    `# svcd cluster group-commit linger (${cfg.quick ? 'quick' : 'full'}; ${new Date().toISOString()})`, '',
    `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}; load average ${load0.map((x) => x.toFixed(2)).join(' / ')} at start, `
    + `${loadavg().map((x) => x.toFixed(2)).join(' / ')} at end. One star in cluster mode on PostgreSQL + s3rver; 1-record appends of ${RECORD_BYTES} B; `
    + `the default today: ${COMMIT_LINGER_MS_STANDARD} ms.`, '',
    table(['linger', 'load', 'appends/s', 'ack p50', 'ack p99', 'group commits/s', 'errors'], rows.map((r) => [
      `${r.lingerMs} ms`, r.load, int(r.m.records / (cfg.measureMs / 1000)), ms(pctMs(r.m.hist, 50)), ms(pctMs(r.m.hist, 99)), fix(r.commitsPerS, 0), String(r.m.errors),
    ])),
  ].join('\n'));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(() => process.exit(0), (err) => { console.error(err); process.exit(1); });
}
