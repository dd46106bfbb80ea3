// Many streams on one star: RSS per idle stream and the cost of a ListStreams page.
//
//   npx tsx bench/streams-at-scale.ts            # 100,000 streams in one bucket
//   STREAMS=20000 npx tsx bench/streams-at-scale.ts
//   STREAMS=1000000 RECORDS=0 npx tsx bench/streams-at-scale.ts   # a million empty streams
//
// Creates STREAMS streams (each then holding one 100 B record) over CONNS keep-alive connections,
// reads the star's RSS before and after, then times ListStreams pages of 1000 from random cursors.
// Then it waits until the star is idle (every stream settled and dormant, the audit queue drained;
// /metrics tells) and reads RSS again, and restarts the star over the same data dir: the time to its
// listening line, and its RSS then and once quiet against a fresh star's. Printed, never asserted.
import { readFileSync } from 'node:fs';
import { buildRequest, Http1Conn } from './lib/http1.ts';
import { newHistogram, pctMs, maxMs, recordNs } from './lib/hist.ts';
import { removeDir, startServer, waitForOutput } from '../test/helpers/server.ts';
import { startSvcd } from './lib/svcd.ts';

const STREAMS = Number(process.env.STREAMS ?? 100_000);
/** RECORDS=0 creates the streams empty (STREAMS=1000000 RECORDS=0: a million settled one-record
 *  streams would take this machine's fs object store a quarter of an hour to settle, one object each). */
const RECORDS = process.env.RECORDS === '0' ? 0 : 1;
const CONNS = 32;
const LIST_PAGES = 200;
const BODY = JSON.stringify({ records: [{ body: 'x'.repeat(100) }] });

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** Where a process's resident bytes are: glibc's main arena (`[heap]`), other anonymous mappings
 *  (V8's pages, thread arenas, stacks), and file-backed pages (the node binary, mapped files). */
function rssParts(pid: number): { heap: number; anon: number; file: number } {
  const parts = { heap: 0, anon: 0, file: 0 };
  let kind: keyof typeof parts = 'anon';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (head) kind = head[2] === '[heap]' ? 'heap' : head[1] !== '0' || head[2].startsWith('/') ? 'file' : 'anon';
    else if (line.startsWith('Rss:')) parts[kind] += Number(line.split(/\s+/)[1]) * 1024;
  }
  return parts;
}

/** V8's heap as the star's /metrics reports it (prom-client's default gauges). */
async function v8Heap(port: number): Promise<{ total: number; used: number; external: number }> {
  const m = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const gauge = (name: string): number => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(m)?.[1] ?? NaN);
  return { total: gauge('nodejs_heap_size_total_bytes'), used: gauge('nodejs_heap_size_used_bytes'), external: gauge('nodejs_external_memory_bytes') };
}

async function memoryLine(label: string, pid: number, port: number): Promise<string> {
  const mib = (b: number): string => `${(b / 2 ** 20).toFixed(0)} MiB`;
  const r = rssParts(pid);
  const h = await v8Heap(port);
  return `${label}: RSS ${mib(r.heap + r.anon + r.file)} = glibc [heap] ${mib(r.heap)} + other anonymous ${mib(r.anon)} + file-backed ${mib(r.file)}; V8 heap ${mib(h.used)} used of ${mib(h.total)}, external ${mib(h.external)}`;
}

const key = (i: number): string => `s${String(i).padStart(8, '0')}`;

/** Settle and idle quickly, so the streams are idle (settled, dormant) a few seconds after the last
 *  append; the RSS then is what an idle stream costs. */
const IDLE_ARGS = ['--wal-settle-after-ms', '1000', '--lease-idle-ms', '2000'];
const METRICS_ARGS = ['--metrics-listen', '127.0.0.1:0'];
/** How long the bench waits for the star to go idle before it reads RSS anyway (and says so). */
const IDLE_WAIT_MS_MAX = 20 * 60_000;
const IDLE_POLL_MS = 1000;
/** Once idle, RSS is read this much later: the settle thread ends 10 s after its last task, and the
 *  heap trim (src/ops/heap-trim.ts) follows the last streams gone dormant within 12 s. */
const IDLE_SETTLE_THREAD_MS = 16_000;
/** … and again this long after idle: trims are spaced (at most 1 % of the main thread), so the heap
 *  a trim left may be trimmed again only later, and when the first reading comes right after the
 *  last streams went dormant it can miss that. */
const IDLE_LATE_MS = 60_000;
/** A restarted star's RSS is read 1 s after its listening line, and again this much later: once it
 *  has been quiet long enough for the heap trim (HEAP_TRIM_QUIET_MS plus a check). */
const RESTART_QUIET_MS = 15_000;

async function opsPort(server: { output(): string }): Promise<number> {
  return Number((await waitForOutput(server, /svcd ops on http:\/\/127\.0\.0\.1:(\d+)/))[1]);
}

/** Waits until no stream is live and no settled segment waits for its audit; false past the bound. */
async function waitIdleStar(port: number): Promise<boolean> {
  const deadline = Date.now() + IDLE_WAIT_MS_MAX;
  while (Date.now() < deadline) {
    const m = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const live = Number(/svcd_streams\{state="live"\} (\d+)/.exec(m)?.[1] ?? NaN);
    const audits = Number(/svcd_audit_queue_depth\{queue="verifications"\} (\d+)/.exec(m)?.[1] ?? NaN);
    if (live === 0 && audits === 0) return true;
    await new Promise((r) => setTimeout(r, IDLE_POLL_MS));
  }
  return false;
}

// A fresh star's RSS, with nothing in it: what a restart over many streams is compared with.
const fresh = await startServer({ engine: 'uws', args: IDLE_ARGS });
await new Promise((r) => setTimeout(r, 1000));
const freshRss = rssBytes(fresh.proc.pid!);
await new Promise((r) => setTimeout(r, RESTART_QUIET_MS));
const freshQuietRss = rssBytes(fresh.proc.pid!);
await fresh.stop();
removeDir(fresh.dataDir);

/** LIST_PAGES pages of 1000 from seeded random cursors over one connection. */
async function listPages(c: Http1Conn): Promise<ReturnType<typeof newHistogram>> {
  const hist = newHistogram();
  let seed = 12345;
  for (let p = 0; p < LIST_PAGES; p++) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const cursor = Buffer.from(key(seed % STREAMS)).toString('base64url');
    const t = process.hrtime.bigint();
    const res = await c.request(buildRequest('GET', `/v1/streams/scale?start_after=${cursor}&limit=1000`));
    recordNs(hist, Number(process.hrtime.bigint() - t));
    if (res.status !== 200) throw new Error(`list: ${res.status} ${res.body.toString().slice(0, 200)}`);
  }
  return hist;
}

const svcd = await startSvcd({ args: [...IDLE_ARGS, ...METRICS_ARGS] });
let idleRss = NaN;
let idleLateRss = NaN;
let idleS = NaN;
let wentIdle = false;
let restartMs = NaN;
let restartRss = NaN;
let restartQuietRss = NaN;
try {
  const pid = svcd.pid!;
  const port = await opsPort(svcd.server);
  await svcd.createStream('scale', key(0));
  await new Promise((r) => setTimeout(r, 500));
  const rssBefore = rssBytes(pid);
  const memory = [await memoryLine('before', pid, port)];
  const conns = await Promise.all(Array.from({ length: CONNS }, () => Http1Conn.open(svcd.host, svcd.port)));
  let next = 1;
  const t0 = performance.now();
  await Promise.all(conns.map(async (c) => {
    for (let i = next++; i < STREAMS; i = next++) {
      const made = await c.request(buildRequest('POST', `/v1/streams/scale/${key(i)}`, '{}'));
      if (made.status !== 201) throw new Error(`create ${key(i)}: ${made.status} ${made.body.toString()}`);
      if (RECORDS === 0) continue;
      const appended = await c.request(buildRequest('POST', `/v1/streams/scale/${key(i)}/records`, BODY));
      if (appended.status !== 200) throw new Error(`append ${key(i)}: ${appended.status}`);
    }
  }));
  const createMs = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 1000));
  const rssAfter = rssBytes(pid);
  memory.push(await memoryLine('after creating them', pid, port));

  const hist = await listPages(conns[0]);
  for (const conn of conns) conn.close();
  const t2 = performance.now();
  wentIdle = await waitIdleStar(port);
  idleS = (performance.now() - t2) / 1000;
  if (!wentIdle) console.error(`streams-at-scale: the star was not idle after ${IDLE_WAIT_MS_MAX / 60_000} min; reading RSS anyway`);
  await new Promise((r) => setTimeout(r, IDLE_SETTLE_THREAD_MS));
  idleRss = rssBytes(pid);
  memory.push(await memoryLine('idle', pid, port));
  // The same pages again, now over dormant streams (each listed from its packed row).
  const lister = await Http1Conn.open(svcd.host, svcd.port);
  const idleHist = await listPages(lister);
  lister.close();
  const idleAt = t2 + idleS * 1000;
  await new Promise((r) => setTimeout(r, Math.max(0, idleAt + IDLE_LATE_MS - performance.now())));
  idleLateRss = rssBytes(pid);
  memory.push(await memoryLine(`idle ${IDLE_LATE_MS / 1000} s`, pid, port));
  // A restart over all of them: from spawn to the listening line, and the RSS right after.
  await svcd.server.stop();
  const t1 = performance.now();
  const again = await startServer({ engine: 'uws', args: IDLE_ARGS, dataDir: svcd.dataDir });
  restartMs = performance.now() - t1;
  await new Promise((r) => setTimeout(r, 1000));
  restartRss = rssBytes(again.proc.pid!);
  await new Promise((r) => setTimeout(r, RESTART_QUIET_MS));
  restartQuietRss = rssBytes(again.proc.pid!);
  await again.stop();

  const mib = (b: number): string => `${(b / 2 ** 20).toFixed(0)} MiB`;
  const perStream = (b: number): string => `${(b / STREAMS / 1024).toFixed(2)} KiB`;
  for (const line of memory) console.log(line);
  for (const line of svcd.server.output().split('\n')) if (/heap trimmed|heap trim failed/.test(line)) console.log(`star: ${line}`);
  console.log(`| streams | created/s (create${RECORDS ? ' + 1 append' : ', empty'}) | RSS before | RSS after | per stream | idle after (s) | RSS idle | per idle stream | RSS idle ${IDLE_LATE_MS / 1000} s | per stream | restart to listening | RSS after restart (fresh star) | per stream | RSS ${RESTART_QUIET_MS / 1000} s later (fresh star) | per stream | ListStreams page of 1000 p50 | p99 | max | same, all dormant: p50 | p99 |`);
  console.log(`| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |`);
  console.log(`| ${STREAMS.toLocaleString('en-US')} | ${Math.round((STREAMS - 1) / (createMs / 1000)).toLocaleString('en-US')} | ${mib(rssBefore)} | ${mib(rssAfter)} | ${perStream(rssAfter - rssBefore)} | ${wentIdle ? idleS.toFixed(0) : 'not idle'} | ${mib(idleRss)} | ${perStream(idleRss - rssBefore)} | ${mib(idleLateRss)} | ${perStream(idleLateRss - rssBefore)} | ${(restartMs / 1000).toFixed(1)} s | ${mib(restartRss)} (${mib(freshRss)}) | ${perStream(restartRss - freshRss)} | ${mib(restartQuietRss)} (${mib(freshQuietRss)}) | ${perStream(restartQuietRss - freshQuietRss)} | ${pctMs(hist, 50).toFixed(2)} ms | ${pctMs(hist, 99).toFixed(2)} ms | ${maxMs(hist).toFixed(2)} ms | ${pctMs(idleHist, 50).toFixed(2)} ms | ${pctMs(idleHist, 99).toFixed(2)} ms |`);
} finally {
  await svcd.stop();
}
