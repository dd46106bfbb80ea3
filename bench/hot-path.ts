// The append hot path without sockets: a real star (ring, flusher, fdatasync) in this process, driven
// through the real Dispatcher by in-memory exchanges, 64 appends in flight per round. Prints the main
// thread's CPU per append, which is the part of the request cost this project's code decides (uWS
// and the kernel's socket work come on top; bench/cpu-cost.ts measures the whole).
//   npx tsx bench/hot-path.ts            HOT_PATH_ROUNDS=4000 HOT_PATH_INFLIGHT=64 HOT_PATH_RUNS=3
//   HOT_PATH_ALLOC=1 npx tsx bench/hot-path.ts   also: heap bytes allocated per append, by function
//     (V8's sampling heap profiler, collected objects included), before the timed runs
import { readFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { Dispatcher } from '../src/api/dispatch.ts';
import type { HttpExchange, SseSink } from '../src/api/exchange.ts';
import { loadConfig } from '../src/config/config.ts';
import { AUTH_FLAGS, startStar } from '../src/server.ts';
import { appendBody } from './cases/cells.ts';
import { removeDir, tempDir } from '../test/helpers/server.ts';

const ROUNDS = Number(process.env.HOT_PATH_ROUNDS ?? 4000);
const INFLIGHT = Number(process.env.HOT_PATH_INFLIGHT ?? 64);
const RUNS = Number(process.env.HOT_PATH_RUNS ?? 3);
const ALLOC = process.env.HOT_PATH_ALLOC === '1';
/** HOT_PATH_LIVE=1: with HOT_PATH_ALLOC, count only what is still live when sampling stops (the
 *  heap an append leaves behind: its batch, held until its WAL file settles). */
const LIVE = process.env.HOT_PATH_LIVE === '1';
/** Rounds sampled for HOT_PATH_ALLOC, and the sampling interval in bytes (V8's default is 32 KiB). */
const ALLOC_ROUNDS = 1000;
const ALLOC_SAMPLE_BYTES = 1024;
const ALLOC_ROWS_MAX = 25;

interface SampleNode { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: SampleNode[] }

/** Runs `rounds` under the sampling heap profiler and prints bytes allocated per append by function. */
async function allocationsPerAppend(rounds: number, round: () => Promise<void>): Promise<void> {
  const session = new Session();
  session.connect();
  try {
    await session.post('HeapProfiler.enable');
    // Collected objects count too, unless HOT_PATH_LIVE: then only what stays live is counted.
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: ALLOC_SAMPLE_BYTES, includeObjectsCollectedByMajorGC: !LIVE, includeObjectsCollectedByMinorGC: !LIVE,
    } as { samplingInterval: number });
    for (let i = 0; i < rounds; i++) await round();
    const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: SampleNode } };
    const bySite = new Map<string, number>();
    const walk = (n: SampleNode): void => {
      const f = n.callFrame;
      const site = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(src|bench|node_modules)\//, '$1/')}`;
      bySite.set(site, (bySite.get(site) ?? 0) + n.selfSize);
      for (const c of n.children) walk(c);
    };
    walk(profile.head);
    const appends = rounds * INFLIGHT;
    const total = [...bySite.values()].reduce((a, b) => a + b, 0);
    console.log(`heap ${LIVE ? 'still live' : 'allocated'} per append: ${Math.round(total / appends)} B (sampled every ${ALLOC_SAMPLE_BYTES} B over ${appends} appends)`);
    console.log('| function | B per append |');
    console.log('| --- | --- |');
    for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, ALLOC_ROWS_MAX)) {
      console.log(`| ${site} | ${(bytes / appends).toFixed(1)} |`);
    }
  } finally {
    session.disconnect();
  }
}
const TICK_US = 10_000;

/** This thread's utime + stime in µs (the main thread's tid is the pid). */
function mainThreadUs(): number {
  const stat = readFileSync(`/proc/${process.pid}/task/${process.pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * TICK_US;
}

const BODY = Buffer.from(appendBody(100, 1));
const HEADERS: Record<string, string> = { 'content-length': String(BODY.length) };

class MemExchange implements HttpExchange {
  readonly method = 'POST';
  readonly query = '';
  readonly clientCertVerified = false;
  aborted = false;
  constructor(readonly path: string, private readonly done: (status: number) => void) {}
  header(name: string): string | undefined { return HEADERS[name]; }
  readBody(): Buffer { return BODY; }
  respond(status: number): void { this.done(status); }
  startStream(): SseSink { throw new Error('no streams here'); }
}

const dataDir = tempDir('svcd-hot-');
const running = await startStar(loadConfig(['--listen', '', '--data-dir', dataDir], {}, AUTH_FLAGS));
try {
  const dispatcher = new Dispatcher({ svc: running.star, logError: (m, e) => console.error(m, e) });
  await running.star.createBucket('hot', {});
  await running.star.createStream('hot', 's', {});
  const path = '/v1/streams/hot/s/records';
  const round = (): Promise<void> => new Promise((resolve, reject) => {
    let left = INFLIGHT;
    const done = (status: number): void => {
      if (status !== 200) reject(new Error(`HTTP ${status}`));
      else if (--left === 0) resolve();
    };
    for (let i = 0; i < INFLIGHT; i++) void dispatcher.handle(new MemExchange(path, done));
  });
  for (let i = 0; i < 300; i++) await round(); // warm-up: JIT and the first WAL file
  if (ALLOC) await allocationsPerAppend(ALLOC_ROUNDS, round);
  console.log('| run | appends | main thread µs/append | appends/s |');
  console.log('| --- | --- | --- | --- |');
  for (let r = 1; r <= RUNS; r++) {
    const cpu0 = mainThreadUs();
    const t0 = performance.now();
    for (let i = 0; i < ROUNDS; i++) await round();
    const secs = (performance.now() - t0) / 1000;
    const n = ROUNDS * INFLIGHT;
    console.log(`| ${r} | ${n} | ${((mainThreadUs() - cpu0) / n).toFixed(2)} | ${Math.round(n / secs).toLocaleString('en-US')} |`);
  }
} finally {
  await running.stop();
  removeDir(dataDir);
}
