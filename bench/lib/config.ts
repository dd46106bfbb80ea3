// What a bench run does and for how long: BENCH_QUICK=1 is a ~1-minute smoke run, BENCH_ONLY picks
// cases (comma-separated: floors, append, read, sse, peers: a live Redis beside svcd's 100/1/64
// cell, plus quoted figures), BENCH_CELLS picks append/echo cells
// ("100/1/64,4096/100/16": record bytes/records per request/producers), BENCH_PROFILE=<dir> runs
// the svcd children under --cpu-prof and writes their profiles there. The SSE case runs up to three
// cells (BENCH_SSE_CELLS=floor,one,spread-floor,spread): a bare uWS broadcaster to the same swarm (the floor),
// BENCH_SSE_SUBSCRIBERS on one stream (default 4096, issue 13's target; quick 1000), and
// BENCH_SSE_SPREAD=<subscribers>/<streams> (default 16384/16) appended at BENCH_SSE_SPREAD_RATE
// batches/s in all (default 80: the one-stream cell's deliveries/s at 4096), with the bare
// broadcaster in the spread's shape before it (spread-floor). BENCH_SSE_MS is each
// cell's producing window. The cluster case (PostgreSQL and s3rver, about 5 minutes) runs only when named:
// BENCH_ONLY=cluster.

export const CASES = ['floors', 'append', 'read', 'sse', 'peers', 'cluster'] as const;
export const SSE_CELLS = ['floor', 'one', 'spread-floor', 'spread'] as const;
export type SseCellName = (typeof SSE_CELLS)[number];
export type CaseName = (typeof CASES)[number];
/** What runs without BENCH_ONLY: every case but the cluster's (it needs PostgreSQL). */
export const DEFAULT_CASES: readonly CaseName[] = CASES.filter((c) => c !== 'cluster');

export interface BenchConfig {
  quick: boolean;
  only: ReadonlySet<CaseName>;
  /** Per append/echo cell. */
  warmupMs: number;
  measureMs: number;
  echoWarmupMs: number;
  echoMeasureMs: number;
  /** A fresh svcd (fresh data dir) per append cell, so one cell's settling does not bleed into the next. */
  freshServerPerCell: boolean;
  fsyncMs: number;
  fsyncOpsMax: number;
  readMeasureMs: number;
  /** Records the read case writes first: the 4 KiB stream alone crosses the 64 MiB WAL file size. */
  readFill100B: number;
  readFill4KiB: number;
  sseCells: ReadonlySet<SseCellName>;
  sseSubscribers: number;
  sseBatchesPerS: number;
  /** The spread cell: this many subscribers over sseSpreadStreams streams (subscriber i on stream i mod S). */
  sseSpreadSubscribers: number;
  sseSpreadStreams: number;
  /** Batches per second over all the spread cell's streams (batch b on stream b mod S). */
  sseSpreadBatchesPerS: number;
  sseDurationMs: number;
  sseRecordsPerBatch: number;
  profileDir: string | undefined;
  /** Append/echo cells to run (cellKey form); empty: all. */
  cells: ReadonlySet<string>;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): BenchConfig {
  const quick = env.BENCH_QUICK === '1' || env.BENCH_QUICK === 'true';
  const onlyRaw = (env.BENCH_ONLY ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const o of onlyRaw) {
    if (!(CASES as readonly string[]).includes(o)) throw new Error(`BENCH_ONLY: unknown case ${o} (cases: ${CASES.join(', ')})`);
  }
  const only = new Set<CaseName>((onlyRaw.length ? onlyRaw : DEFAULT_CASES) as CaseName[]);
  return {
    quick,
    only,
    warmupMs: quick ? 300 : 1000,
    measureMs: quick ? 1000 : 4000,
    echoWarmupMs: quick ? 200 : 500,
    echoMeasureMs: quick ? 700 : 2500,
    freshServerPerCell: !quick,
    fsyncMs: quick ? 700 : 3000,
    fsyncOpsMax: quick ? 2000 : 10_000,
    readMeasureMs: quick ? 1000 : 3000,
    readFill100B: quick ? 100_000 : 300_000,
    readFill4KiB: quick ? 18_000 : 25_000,
    sseCells: pick(env.BENCH_SSE_CELLS, SSE_CELLS, 'BENCH_SSE_CELLS'),
    sseSubscribers: positiveInt(env.BENCH_SSE_SUBSCRIBERS, 'BENCH_SSE_SUBSCRIBERS') ?? (quick ? 1000 : 4096),
    sseBatchesPerS: 20,
    ...spread(env.BENCH_SSE_SPREAD),
    sseSpreadBatchesPerS: positiveInt(env.BENCH_SSE_SPREAD_RATE, 'BENCH_SSE_SPREAD_RATE') ?? 80,
    sseDurationMs: positiveInt(env.BENCH_SSE_MS, 'BENCH_SSE_MS') ?? (quick ? 3000 : 10_000),
    sseRecordsPerBatch: 10,
    profileDir: env.BENCH_PROFILE || undefined,
    cells: new Set((env.BENCH_CELLS ?? '').split(',').map((x) => x.trim()).filter(Boolean)),
  };
}

function pick<T extends string>(raw: string | undefined, all: readonly T[], name: string): ReadonlySet<T> {
  const got = (raw ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const g of got) if (!(all as readonly string[]).includes(g)) throw new Error(`${name}: unknown ${g} (one of ${all.join(', ')})`);
  return new Set((got.length ? got : all) as T[]);
}

function spread(raw: string | undefined): { sseSpreadSubscribers: number; sseSpreadStreams: number } {
  if (raw === undefined || raw === '') return { sseSpreadSubscribers: 16_384, sseSpreadStreams: 16 };
  const m = /^(\d+)\/(\d+)$/.exec(raw.trim());
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) throw new Error(`BENCH_SSE_SPREAD: expected <subscribers>/<streams>, got ${raw}`);
  return { sseSpreadSubscribers: Number(m[1]), sseSpreadStreams: Number(m[2]) };
}

function positiveInt(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${name}: expected a positive integer, got ${raw}`);
  return n;
}
