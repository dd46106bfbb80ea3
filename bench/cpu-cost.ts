// CPU cost per request: how many microseconds of svcd's CPU (the main thread, and every other thread
// together: flusher, GC helpers, pools) one single-record append takes, read from /proc over a fixed
// run. Worker threads are all named "node", so the flusher is not told apart from the rest.
// Unlike records/s, CPU time per request barely moves when other processes share this 2-core host,
// so it is the number to compare when changing the hot path (A/B, interleaved, see README).
//   npx tsx bench/cpu-cost.ts                 (100 B records, 64 connections, 8 s per run, 3 runs)
//   CPU_COST_SECONDS=5 CPU_COST_RUNS=5 CPU_COST_CONNS=64 CPU_COST_RECORDS=1 npx tsx bench/cpu-cost.ts
//   CPU_COST_TARGET=echo npx tsx bench/cpu-cost.ts   (the same load on the bare uWS echo floor)
//   CPU_COST_NODE_ARGS=--perf-basic-prof npx tsx bench/cpu-cost.ts   (node flags for the star, for perf)
//   CPU_COST_THREADS=1 npx tsx bench/cpu-cost.ts   (also each busy thread's µs/req, by tid and name)
import { readdirSync, readFileSync } from 'node:fs';
import { startChild } from './lib/child.ts';
import { buildRequest, Http1Conn } from './lib/http1.ts';
import { appendBody } from './cases/cells.ts';
import { removeDir, startServer, tempDir } from '../test/helpers/server.ts';

const SECONDS = Number(process.env.CPU_COST_SECONDS ?? 8);
const RUNS = Number(process.env.CPU_COST_RUNS ?? 3);
const CONNS = Number(process.env.CPU_COST_CONNS ?? 64);
const RECORDS = Number(process.env.CPU_COST_RECORDS ?? 1);
const TARGET = process.env.CPU_COST_TARGET === 'echo' ? 'echo' : 'svcd';
const WARMUP_MS = 1500;
/** Linux reports thread CPU in clock ticks of 10 ms. */
const TICK_US = 10_000;

interface ThreadCpu { ticks: number; name: string }
const SHOW_THREADS = process.env.CPU_COST_THREADS === '1';
/** Threads below this share of the requests' CPU are not listed one by one. */
const THREAD_SHOWN_US_PER_REQ_MIN = 0.05;

/** utime + stime per thread of `pid`, keyed by tid. */
function threadTicks(pid: number): Map<number, ThreadCpu> {
  const out = new Map<number, ThreadCpu>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      out.set(Number(tid), { ticks: Number(f[11]) + Number(f[12]), name });
    } catch { /* the thread ended */ }
  }
  return out;
}

interface Target { pid: number; port: number; stop(): Promise<void> }

/** A fresh svcd (the built main, as `npm start` runs it) with its stream, or the bare uWS echo floor. */
async function startTarget(): Promise<Target> {
  if (TARGET === 'echo') {
    const echo = startChild('floors/uws-echo-server.ts');
    const { port } = await echo.next<{ type: string; port: number }>('listening');
    return { pid: echo.proc.pid!, port, stop: () => echo.stop() };
  }
  const dataDir = tempDir('svcd-cpu-');
  process.env.SVCD_SERVER_ENTRY ??= 'bundle';
  const nodeArgs = process.env.CPU_COST_NODE_ARGS?.split(' ').filter((a) => a !== '') ?? [];
  const srv = await startServer({ dataDir, nodeArgs });
  const admin = await Http1Conn.open('127.0.0.1', srv.port);
  await admin.request(buildRequest('POST', '/v1/buckets/cpu', '{}'));
  await admin.request(buildRequest('POST', '/v1/streams/cpu/s', '{}'));
  admin.close();
  return { pid: srv.proc.pid!, port: srv.port, stop: async () => { await srv.stop(); removeDir(dataDir); } };
}

interface RunResult { reqs: number; mainUs: number; otherUs: number; secs: number; threads: { tid: number; name: string; us: number }[] }

async function run(): Promise<RunResult> {
  const target = await startTarget();
  const pid = target.pid;
  try {
    const req = buildRequest('POST', '/v1/streams/cpu/s/records', appendBody(100, RECORDS));
    const conns = await Promise.all(Array.from({ length: CONNS }, () => Http1Conn.open('127.0.0.1', target.port)));
    let counting = false;
    let stopped = false;
    let reqs = 0;
    let inflight = 0;
    let drained: (() => void) | undefined;
    const loop = (c: Http1Conn): void => {
      if (stopped) { if (--inflight === 0) drained?.(); return; }
      c.send(req, (err, res) => {
        if (err || res?.status !== 200) throw err ?? new Error(`HTTP ${res?.status} ${res?.body.toString()}`);
        if (counting) reqs++;
        loop(c);
      });
    };
    inflight = conns.length;
    for (const c of conns) loop(c);
    await new Promise((r) => setTimeout(r, WARMUP_MS));
    const before = threadTicks(pid);
    const t0 = performance.now();
    counting = true;
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    counting = false;
    const after = threadTicks(pid);
    const secs = (performance.now() - t0) / 1000;
    stopped = true;
    await new Promise<void>((r) => { drained = r; });
    for (const c of conns) c.close();
    let mainUs = 0; let otherUs = 0;
    const threads: RunResult['threads'] = [];
    for (const [tid, a] of after) {
      const us = (a.ticks - (before.get(tid)?.ticks ?? 0)) * TICK_US;
      threads.push({ tid, name: tid === pid ? 'main' : a.name, us });
      if (tid === pid) mainUs += us;
      else otherUs += us;
    }
    return { reqs, mainUs, otherUs, secs, threads };
  } finally {
    await target.stop();
  }
}

console.log(`${TARGET}, ${CONNS} connections, ${RECORDS} × 100 B records per request\n`);
console.log(`| run | req/s | main thread µs/req | other threads µs/req | main busy % |`);
console.log(`| --- | --- | --- | --- | --- |`);
for (let i = 1; i <= RUNS; i++) {
  const r = await run();
  const per = (us: number): string => (us / r.reqs).toFixed(2);
  console.log(`| ${i} | ${Math.round(r.reqs / r.secs).toLocaleString('en-US')} | ${per(r.mainUs)} | ${per(r.otherUs)} | ${Math.round((r.mainUs / 1e6 / r.secs) * 100)} |`);
  if (SHOW_THREADS) {
    const shown = r.threads.filter((t) => t.us / r.reqs >= THREAD_SHOWN_US_PER_REQ_MIN).sort((a, b) => b.us - a.us);
    console.log(`|   | threads: ${shown.map((t) => `${t.name} (${t.tid}) ${per(t.us)}`).join(', ')} | | | |`);
  }
}
