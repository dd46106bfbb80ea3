// The live peer (part of the peers case): a private redis-server with AOF and `appendfsync always`
// (lib/redis.ts) under the load of svcd's 100 B / 1 record / 64 producers cell, in the same run:
// 64 connections, each in closed loop with one `XADD bench * d <100 B>` in flight, all on one
// stream, for the cell's warm-up and measured window (peers/redis-xadd.ts, a child like svcd's load
// generator). svcd's figures come from the append case when it ran that cell, else this case
// measures the cell itself first, so the comparison is always of one run.
import { startChild } from '../lib/child.ts';
import type { BenchConfig } from '../lib/config.ts';
import { runMeasured, startLoadgen, type Measured } from '../lib/loadgen.ts';
import { checkRedisBinary, startRedis } from '../lib/redis.ts';
import { cellKey, type AppendCell, type Report } from '../lib/report.ts';
import { withSvcd } from '../lib/svcd.ts';
import type { RedisDriverMsg } from '../peers/redis-spec.ts';
import { measureAppendCell } from './append.ts';

/** The cell issue 13 compares with Redis. */
export const REDIS_PEER_CELL: AppendCell = { recordBytes: 100, batch: 1, producers: 64 };
/** The Redis stream every connection appends to. */
const STREAM_KEY = 'bench';
/** Beyond warm-up + window: connecting 64 sockets, the driver's own 5 s drain, and the result's trip
 *  back. Past it the driver is stopped and the case fails rather than hang the run. */
const DRIVER_SLACK_MS = 15_000;

export async function runRedisPeer(cfg: BenchConfig, report: Report, log: (s: string) => void): Promise<void> {
  checkRedisBinary(); // before svcd's cell is measured for a comparison that could not happen
  const key = cellKey(REDIS_PEER_CELL);
  let svcd = report.append.get(key);
  const svcdFrom = svcd ? 'append case' : 'peers case';
  if (!svcd) {
    log(`peers: svcd ${key} (record bytes/batch/producers), for the Redis comparison`);
    const loadgen = await startLoadgen();
    try {
      svcd = await withSvcd({ profileDir: cfg.profileDir }, (s) => measureAppendCell(cfg, s, loadgen, REDIS_PEER_CELL, report.notes));
    } finally {
      await loadgen.stop();
    }
  }

  log(`peers: Redis XADD, appendfsync always, ${REDIS_PEER_CELL.producers} connections × 1 in flight`);
  const redis = await startRedis();
  // A bench killed by its guard or a signal must not leave redis-server or its dir behind.
  const onExit = (): void => redis.killSync();
  process.on('exit', onExit);
  const driver = startChild('peers/redis-xadd.ts');
  let m: Measured;
  try {
    await driver.next('ready');
    const run: RedisDriverMsg = {
      type: 'run',
      spec: {
        host: redis.host, port: redis.port, conns: REDIS_PEER_CELL.producers,
        warmupMs: cfg.warmupMs, measureMs: cfg.measureMs, key: STREAM_KEY, valueBytes: REDIS_PEER_CELL.recordBytes,
      },
    };
    // Stopping a wedged driver makes the wait below reject (the child's exit fails it).
    const guard = setTimeout(() => { void driver.stop(); }, cfg.warmupMs + cfg.measureMs + DRIVER_SLACK_MS);
    try {
      m = await runMeasured(driver, run, redis.pid);
    } finally {
      clearTimeout(guard);
    }
  } finally {
    await driver.stop();
    await redis.stop();
    process.off('exit', onExit);
  }
  if (m.unanswered > 0 || m.requests === 0) report.notes.push(`Redis XADD: ${m.requests} replies in the window, ${m.unanswered} commands never answered`);
  if (m.errors > 0) report.notes.push(`Redis XADD: ${m.errors} errors (${JSON.stringify(m.statuses)}), first: ${m.firstError}`);
  report.redis = {
    svcd, svcdFrom, redis: m, redisVersion: redis.version,
    redisConfig: `appendonly ${redis.appendonly}, appendfsync ${redis.appendfsync}, save '', data dir in ${redis.dir.replace(/[^/]+$/, '')}`,
  };
}
