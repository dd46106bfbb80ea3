// The server under test: a real svcd child (test/helpers/server.ts, uWS engine) plus the
// control-plane calls the cases need, made over the bench's own raw HTTP/1.1 client.
import { execFileSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeDir, startServer, type RunningServer } from '../../test/helpers/server.ts';
import { waitIdle } from './cpu.ts';
import { buildRequest, Http1Conn } from './http1.ts';
import { startProfiledServer } from './profiled.ts';

/** Makes every star this process starts run what `npm start` runs: builds the bundle and points the
 *  test helpers at it. BENCH_ENTRY=tsx measures the TypeScript sources through tsx instead. */
export function benchBuiltStar(stdio: 'inherit' | ['ignore', 'ignore', 'inherit'] = 'inherit'): void {
  if (process.env.BENCH_ENTRY === 'tsx') return;
  execFileSync(process.execPath, [fileURLToPath(new URL('../../scripts/build.mjs', import.meta.url))], { stdio });
  process.env.SVCD_SERVER_ENTRY = 'bundle';
}

/** Ends a bench process that runs past `ms` (a hung run must not hang its caller). */
export function exitPast(ms: number, who = 'bench'): void {
  setTimeout(() => { console.error(`${who}: over the time limit, exiting`); process.exit(3); }, ms).unref();
}

/** BENCH_SVCD_NODE_ARGS: node flags for every star the bench starts (e.g. a V8 heap setting to try). */
const SVCD_NODE_ARGS = process.env.BENCH_SVCD_NODE_ARGS?.split(' ').filter((a) => a !== '') ?? [];
/** BENCH_SVCD_OUTPUT_DIR: each star's own output (its log, and what node flags such as --trace-gc
 *  print) is written there when it stops, one file per star (svcd-<pid>.log). */
const SVCD_OUTPUT_DIR = process.env.BENCH_SVCD_OUTPUT_DIR;

/** A started svcd counts as settled once it uses less than this much of a core over one sample. */
const SETTLED_CPU_PCT = 10;
const SETTLED_SAMPLE_MS = 250;
/** Past this the bench measures anyway, with a warning: a server busy this long is busy for a reason. */
const SETTLE_WAIT_MS_MAX = 15_000;

/** How long a graceful stop may take before the child is SIGKILLed. */
const STOP_TIMEOUT_MS = 10_000;

export interface Svcd {
  host: string;
  port: number;
  pid: number | undefined;
  dataDir: string;
  server: RunningServer;
  /** POST /v1/buckets/{b} and /v1/streams/{b}/{k}; 201 or 409 (exists) are both fine. */
  createStream(bucket: string, key: string): Promise<void>;
  tail(bucket: string, key: string): Promise<number>;
  /** Numbers of the WAL files still on disk (a settled file is removed). */
  walFiles(): number[];
  stop(): Promise<void>;
}

export interface SvcdOptions {
  profileDir?: string;
  /** More command-line flags for the star (e.g. `--sse-connections-max`). */
  args?: string[];
  /** Start over this data dir (a restart) instead of a fresh one. */
  dataDir?: string;
}

export async function startSvcd(opts: SvcdOptions = {}): Promise<Svcd> {
  const server = opts.profileDir
    ? await startProfiledServer(opts.profileDir, opts.args)
    : await startServer({
      engine: 'uws', ...(opts.args ? { args: opts.args } : {}), ...(opts.dataDir ? { dataDir: opts.dataDir } : {}),
      ...(SVCD_NODE_ARGS.length ? { nodeArgs: SVCD_NODE_ARGS } : {}),
    });
  if (!/engine uws/.test(server.output())) {
    console.error(`bench: warning, svcd is not serving with uWS: ${server.output().trim()}`);
  }
  // A star works for about 1.5 s after its listening line (measured 2026-11-26: a core's worth); a
  // cell started before that ends would charge svcd's start to its first window.
  if (!(await waitIdle(server.proc.pid, { idleCpuPct: SETTLED_CPU_PCT, sampleMs: SETTLED_SAMPLE_MS, maxMs: SETTLE_WAIT_MS_MAX }))) {
    console.error(`bench: warning, svcd still used ≥ ${SETTLED_CPU_PCT} % of a core ${SETTLE_WAIT_MS_MAX} ms after it started; measuring anyway`);
  }
  const host = '127.0.0.1';
  const control = await Http1Conn.open(host, server.port);
  const call = async (method: string, path: string, body?: string): Promise<{ status: number; body: string }> => {
    const res = await control.request(buildRequest(method, path, body));
    return { status: res.status, body: res.body.toString() };
  };
  const expectOk = (what: string, r: { status: number; body: string }, ok: number[]): void => {
    if (!ok.includes(r.status)) throw new Error(`${what}: HTTP ${r.status} ${r.body}`);
  };
  const buckets = new Set<string>();
  return {
    host,
    port: server.port,
    pid: server.proc.pid,
    dataDir: server.dataDir,
    server,
    async createStream(bucket, key) {
      if (!buckets.has(bucket)) {
        expectOk(`create bucket ${bucket}`, await call('POST', `/v1/buckets/${bucket}`, '{}'), [201, 409]);
        buckets.add(bucket);
      }
      expectOk(`create stream ${bucket}/${key}`, await call('POST', `/v1/streams/${bucket}/${key}`, '{}'), [201, 409]);
    },
    async tail(bucket, key) {
      const r = await call('GET', `/v1/streams/${bucket}/${key}/records/tail`);
      expectOk('check tail', r, [200]);
      const j = JSON.parse(r.body) as { tail?: { seq_num: number }; seq_num?: number };
      return j.tail?.seq_num ?? j.seq_num ?? 0;
    },
    walFiles() {
      try {
        return readdirSync(join(server.dataDir, 'wal')).map((f) => parseInt(f, 10)).filter(Number.isFinite).sort((a, b) => a - b);
      } catch {
        return [];
      }
    },
    async stop() {
      control.close();
      const t = setTimeout(() => { void server.kill(); }, STOP_TIMEOUT_MS);
      await server.stop();
      clearTimeout(t);
      if (SVCD_OUTPUT_DIR) writeFileSync(join(SVCD_OUTPUT_DIR, `svcd-${server.proc.pid}.log`), server.output());
      removeDir(server.dataDir);
    },
  };
}

/** Runs fn against a fresh svcd and always stops it. */
export async function withSvcd<T>(opts: SvcdOptions, fn: (s: Svcd) => Promise<T>): Promise<T> {
  const s = await startSvcd(opts);
  try {
    return await fn(s);
  } finally {
    await s.stop();
  }
}
