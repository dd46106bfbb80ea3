// `npm run bench`: floors, append matrix, the peers (Redis XADD with appendfsync always measured live
// beside svcd's 64-producer cell, the rest quoted), reads from settled history and SSE fan-out,
// printed as markdown tables with the targets next to what was measured.
// BENCH_QUICK=1 for a ~1-minute smoke run; BENCH_ONLY=floors,append,peers,read,sse,cluster to pick cases
// (cluster, which needs PostgreSQL, only when named);
// BENCH_PROFILE=<dir> to write --cpu-prof profiles of every svcd child.
import { cpus, loadavg } from 'node:os';
import { runAppend } from './cases/append.ts';
import { clusterTables, runCluster } from './cases/cluster.ts';
import { runFloors } from './cases/floors.ts';
import { REDIS_PEER_CELL, runRedisPeer } from './cases/redis-peer.ts';
import { runRead } from './cases/read.ts';
import { runSse } from './cases/sse.ts';
import { loadConfig, type CaseName } from './lib/config.ts';
import { appendTable, floorsTable, peersTable, readTable, sseTable, targetsTable } from './lib/print.ts';
import type { Measured } from './lib/loadgen.ts';
import { cellKey, newReport, type Report } from './lib/report.ts';
import { benchBuiltStar, exitPast } from './lib/svcd.ts';

/** Whole-run guard: a wedged child must not keep the bench alive forever. */
const RUN_MS_MAX = 15 * 60_000;
/** Above this 1-min load average (start or end of the run) the report warns that others shared the machine. */
const BUSY_LOADAVG = 3;
/** A load generator above this much of one core may be what limits a cell. */
const CLIENT_BOUND_CPU_PCT = 90;

/** The Redis peer's measurement keyed like a cell, for the client-bound check. */
function redisMap(r: Report): Map<string, Measured> {
  return r.redis ? new Map([[cellKey(REDIS_PEER_CELL), r.redis.redis]]) : new Map();
}

async function main(): Promise<void> {
  const cfg = loadConfig();
  benchBuiltStar(); // measure what `npm start` runs
  const report = newReport();
  const t0 = performance.now();
  const log = (s: string): void => { process.stderr.write(`[${((performance.now() - t0) / 1000).toFixed(1)} s] ${s}\n`); };
  exitPast(RUN_MS_MAX);

  const has = (c: CaseName): boolean => cfg.only.has(c);
  const loadStart = loadavg()[0];
  const out: string[] = [];
  out.push(`# svcd bench (${cfg.quick ? 'quick' : 'full'}; ${new Date().toISOString()})`, '');
  out.push(`Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}; svcd on uWS, every process unpinned. `
    + `Closed loop: each producer keep-alive connection waits for its ack before the next append; all producers of a cell share one stream. `
    + `Append cells: ${cfg.warmupMs} ms warm-up + ${cfg.measureMs} ms measured${cfg.freshServerPerCell ? ', fresh svcd per cell' : ', one svcd for all cells'}; `
    + `echo cells ${cfg.echoWarmupMs} + ${cfg.echoMeasureMs} ms. MB = 10^6 bytes of record content.`, '');

  const step = async (name: CaseName, fn: () => Promise<void>): Promise<void> => {
    if (!has(name)) return;
    try {
      await fn();
    } catch (err) {
      report.notes.push(`${name} failed: ${(err as Error).stack ?? String(err)}`);
      log(`${name} FAILED: ${(err as Error).message}`);
    }
  };
  await step('floors', () => runFloors(cfg, report, log));
  await step('append', () => runAppend(cfg, report, log));
  // Right after append, so Redis runs as close in time (and machine load) to svcd's cell as it can.
  await step('peers', () => runRedisPeer(cfg, report, log));
  await step('read', () => runRead(cfg, report, log));
  await step('sse', () => runSse(cfg, report, log));
  await step('cluster', () => runCluster(cfg, report, log));

  if (has('floors')) out.push('## Floors', '', floorsTable(report), '');
  if (has('append') || has('floors')) {
    out.push('## Append throughput and ack latency (uWS echo floor alongside)', '', appendTable(report), '');
  }
  if (has('read') && report.read.length) out.push('## Reads, pages of 1000 records', '', readTable(report), '');
  if (has('sse') && report.sse.length) out.push('## SSE fan-out', '', sseTable(report), '');
  if (has('cluster') && report.cluster) out.push('## Cluster: one star, one cluster star, three stars; S3 PUT, PostgreSQL commit, failover', '', clusterTables(report.cluster), '');
  if (has('peers')) out.push('## Peers', '', peersTable(report), '');
  out.push('## Targets (reported, never asserted)', '', targetsTable(report), '');
  for (const [what, map] of [['svcd', report.append], ['uWS echo', report.echo], ['Redis XADD', redisMap(report)]] as const) {
    for (const [cell, m] of map) {
      if (m.cpuPct >= CLIENT_BOUND_CPU_PCT) report.notes.push(`${what} ${cell} (record bytes/batch/producers): the load generator used ${m.cpuPct.toFixed(0)} % of a core, so this cell may be client-bound.`);
    }
  }
  const loadEnd = loadavg()[0];
  if (Math.max(loadStart, loadEnd) > BUSY_LOADAVG) {
    report.notes.push(`the machine was busy: 1-min load average ${loadStart.toFixed(2)} at start, ${loadEnd.toFixed(2)} at end (2 cores; the bench itself adds about 2). Compare with care.`);
  }
  if (report.notes.length) out.push('## Notes', '', ...report.notes.map((n) => `- ${n}`), '');
  out.push(`Total ${((performance.now() - t0) / 1000).toFixed(0)} s.`);
  console.log(out.join('\n'));
}

main().then(() => process.exit(0), (err) => { console.error(err); process.exit(1); });
