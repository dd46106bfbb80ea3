// svcd's Durable Streams surface (/ds) next to the protocol's reference server
// (@durable-streams/server 0.3.7, file-backed), same load, same run: `npx tsx bench/ds-peer.ts`.
// Prints markdown tables; nothing is asserted.
//
// - appends: P producers (keep-alive connections of the raw HTTP/1.1 load generator, each in closed
//   loop) POST one small JSON message at a time to one DS stream for a fixed window: appends/s, ack
//   p50/p99, the server's CPU (all threads, % of one core) and the generator's.
// - SSE fan-out: S subscribers (raw sockets in the SSE swarm child) in `live=sse` mode on one DS
//   stream from its start while a paced producer appends R messages/s; each message carries its
//   index and send time, so the swarm counts every subscriber's deliveries (missing, duplicated,
//   out of order) and the delay from send (and from the producer's ack) to receipt.
//
// Environment (all optional): DS_PEER_PRODUCERS (default 1,16), DS_PEER_WARMUP_MS (1000),
// DS_PEER_APPEND_MS (5000), DS_PEER_SUBSCRIBERS (100,1000), DS_PEER_SSE_MS (10000),
// DS_PEER_SSE_RATE (appends/s, 20), DS_PEER_SSE_DRAIN_MS (10000: how long after its last append the
// SSE producer waits for outstanding acks; any still missing count as failed appends),
// DS_PEER_BODY_BYTES (100), DS_PEER_ONLY (append,sse), BENCH_ENTRY=tsx (run svcd from the TypeScript source instead of the built bundle).
import { cpus, loadavg } from 'node:os';
import { removeDir, tempDir } from '../test/helpers/server.ts';
import { startChild, type BenchChild } from './lib/child.ts';
import { procCpuMs, cpuWindow } from './lib/cpu.ts';
import { fix, int, ms, table } from './lib/format.ts';
import { decodeHistogram, maxMs, pctMs, type Histogram } from './lib/hist.ts';
import { buildRequest, Http1Conn } from './lib/http1.ts';
import { startLoadgen, type Loadgen, type Measured } from './lib/loadgen.ts';
import { runPacedProducer } from './lib/producer.ts';
import { benchBuiltStar, exitPast, startSvcd } from './lib/svcd.ts';
import { SSE_MARK, type SwarmResult, type SwarmStart } from './loadgen/sse-spec.ts';

/** Whole-run guard: a wedged child must not keep the bench alive forever. */
const RUN_MS_MAX = 20 * 60_000;
/** How long the swarm waits for stragglers after the last ack before counting. */
const SSE_GRACE_MS = 5000;
/** Before a cell, both servers must be idle (below this much of a core over QUIET_SAMPLE_MS), so a
 *  server still working off the previous cell's backlog does not share the machine with the next. */
const QUIET_CPU_PCT = 10;
const QUIET_SAMPLE_MS = 500;
const QUIET_WAIT_MS_MAX = 30_000;
const HOST = '127.0.0.1';
const CONTENT_TYPE = 'application/json';

function intList(name: string, dflt: number[]): number[] {
  const raw = process.env[name];
  if (!raw) return dflt;
  const xs = raw.split(',').map((s) => Number(s.trim()));
  for (const x of xs) if (!Number.isSafeInteger(x) || x <= 0) throw new Error(`${name}: expected positive integers, got ${raw}`);
  return xs;
}
function posInt(name: string, dflt: number): number {
  return intList(name, [dflt])[0];
}

const cfg = {
  producers: intList('DS_PEER_PRODUCERS', [1, 16]),
  warmupMs: posInt('DS_PEER_WARMUP_MS', 1000),
  appendMs: posInt('DS_PEER_APPEND_MS', 5000),
  subscribers: intList('DS_PEER_SUBSCRIBERS', [100, 1000]),
  sseMs: posInt('DS_PEER_SSE_MS', 10_000),
  sseRate: posInt('DS_PEER_SSE_RATE', 20),
  sseDrainMs: posInt('DS_PEER_SSE_DRAIN_MS', 10_000),
  bodyBytes: posInt('DS_PEER_BODY_BYTES', 100),
  only: new Set((process.env.DS_PEER_ONLY ?? 'append,sse').split(',').map((s) => s.trim())),
};

interface Target {
  name: string;
  port: number;
  pid: number | undefined;
  /** Path prefix of a stream: `${streamPrefix}/<name>`. */
  streamPrefix: string;
  stop(): Promise<void>;
}

async function startSvcdTarget(): Promise<Target> {
  const s = await startSvcd();
  return { name: 'svcd /ds (uWS)', port: s.port, pid: s.pid, streamPrefix: '/ds/v1/stream', stop: () => s.stop() };
}

async function startReferenceTarget(): Promise<Target> {
  const dataDir = tempDir('ds-ref-bench-');
  const child: BenchChild = startChild('peers/ds-reference-server.ts', { DS_REF_DATA_DIR: dataDir });
  const { url } = await child.next<{ type: string; url: string }>('listening');
  return {
    name: 'reference 0.3.7 (file)',
    port: Number(new URL(url).port),
    pid: child.proc.pid,
    streamPrefix: '/v1/stream',
    async stop() { await child.stop(); removeDir(dataDir); },
  };
}

/** PUT a JSON stream; 201 (created) or 200 (exists with the same config). */
async function createStream(t: Target, name: string): Promise<string> {
  const path = `${t.streamPrefix}/${name}`;
  const conn = await Http1Conn.open(HOST, t.port);
  try {
    const res = await conn.request(buildRequest('PUT', path, '', CONTENT_TYPE));
    if (res.status !== 201 && res.status !== 200) throw new Error(`${t.name}: PUT ${path}: HTTP ${res.status} ${res.body.toString().slice(0, 200)}`);
  } finally {
    conn.close();
  }
  return path;
}

/** A JSON message of about `bytes` bytes whose string starts with `prefix`. */
function message(prefix: string, bytes: number): string {
  return JSON.stringify({ m: prefix.padEnd(Math.max(prefix.length, bytes - 8), 'x') });
}

interface AppendRow { target: string; producers: number; m: Measured }
interface SseRow {
  target: string; subscribers: number; r: SwarmResult; batches: number; appendErrors: number; firstError?: string;
  fromSend: Histogram; fromAck: Histogram; ack: Histogram; serverCpuPct: number; serverCpuMs: number; connsUsed: number;
}

async function runAppendCell(lg: Loadgen, t: Target, producers: number): Promise<AppendRow> {
  const path = await createStream(t, `append-p${producers}`);
  const m = await lg.run({
    host: HOST, port: t.port, conns: producers, warmupMs: cfg.warmupMs, measureMs: cfg.appendMs,
    work: { kind: 'append', paths: [path], body: message('append', cfg.bodyBytes), recordsPerRequest: 1, recordBytes: cfg.bodyBytes, checkSpan: false },
  }, t.pid);
  return { target: t.name, producers, m };
}

async function runSseCell(t: Target, subscribers: number, log: (s: string) => void): Promise<SseRow> {
  const path = await createStream(t, `sse-s${subscribers}`);
  const batches = Math.round((cfg.sseMs / 1000) * cfg.sseRate);
  const swarm = startChild('loadgen/sse-swarm.ts');
  try {
    await swarm.next('ready-to-start');
    const base = process.hrtime.bigint();
    swarm.send({
      type: 'start', host: HOST, port: t.port, path: `${path}?offset=-1&live=sse`, subscribers, batches,
      baseNs: base.toString(), mark: SSE_MARK, connectOverMs: 0,
    } satisfies SwarmStart);
    const ready = await swarm.next<{ type: string; connected?: number; statuses?: string; message?: string }>('ready', 'error');
    if (ready.type === 'error') throw new Error(ready.message);
    log(`${t.name}: ${ready.connected}/${subscribers} subscribed (HTTP ${ready.statuses}); ${batches} appends at ${cfg.sseRate}/s`);
    const cpu = cpuWindow(t.pid);
    const cpuMs0 = procCpuMs(t.pid);
    const prod = await runPacedProducer({
      host: HOST, port: t.port, path, batches, batchesPerS: cfg.sseRate, base,
      body: (i, sentRelNs) => message(`${SSE_MARK}${i}:${sentRelNs}:`, cfg.bodyBytes), drainMs: cfg.sseDrainMs,
    });
    const serverCpuPct = cpu();
    swarm.send({ type: 'finish', ackNs: prod.ackNs, graceMs: SSE_GRACE_MS });
    const r = await swarm.next<SwarmResult | { type: 'error'; message: string }>('result', 'error');
    if (r.type === 'error') throw new Error((r as { message: string }).message);
    const res = r as SwarmResult;
    return {
      target: t.name, subscribers, r: res, batches, appendErrors: prod.errors, firstError: prod.firstError,
      fromSend: decodeHistogram(res.fromSend), fromAck: decodeHistogram(res.fromAck), ack: prod.ackHist,
      serverCpuPct, serverCpuMs: procCpuMs(t.pid) - cpuMs0, connsUsed: prod.connsUsed,
    };
  } finally {
    await swarm.stop();
  }
}

/** Waits until every target's CPU over a short sample is below QUIET_CPU_PCT; false if it never was. */
async function quiesce(targets: Target[]): Promise<boolean> {
  const deadline = performance.now() + QUIET_WAIT_MS_MAX;
  for (;;) {
    const windows = targets.map((t) => cpuWindow(t.pid));
    await new Promise((r) => setTimeout(r, QUIET_SAMPLE_MS));
    if (windows.every((w) => !(w() >= QUIET_CPU_PCT))) return true;
    if (performance.now() > deadline) return false;
  }
}

function loadLine(): string {
  return loadavg().map((x) => x.toFixed(2)).join(' / ');
}

async function main(): Promise<void> {
  const t0 = performance.now();
  const log = (s: string): void => { process.stderr.write(`[${((performance.now() - t0) / 1000).toFixed(1)} s] ${s}\n`); };
  exitPast(RUN_MS_MAX, 'ds-peer');
  const loadStart = loadLine();
  const started = new Date().toISOString();
  benchBuiltStar(['ignore', 'ignore', 'inherit']);
  const notes: string[] = [];
  const appendRows: AppendRow[] = [];
  const sseRows: SseRow[] = [];
  const targets: Target[] = [];
  let lg: Loadgen | undefined;
  try {
    targets.push(await startSvcdTarget(), await startReferenceTarget());
    log(`servers: ${targets.map((t) => `${t.name} on :${t.port} (pid ${t.pid})`).join(', ')}`);
    // Each cell runs on both servers back to back; the order alternates from cell to cell.
    let cell = 0;
    const order = (): Target[] => (cell++ % 2 === 0 ? targets : [...targets].reverse());
    const settle = async (what: string): Promise<void> => {
      if (!(await quiesce(targets))) notes.push(`before ${what}: a server was still busy after ${QUIET_WAIT_MS_MAX / 1000} s (ran anyway)`);
    };
    if (cfg.only.has('append')) {
      lg = await startLoadgen();
      for (const p of cfg.producers) {
        for (const t of order()) {
          await settle(`append ${t.name} ×${p}`);
          log(`append: ${t.name}, ${p} producers`);
          try { appendRows.push(await runAppendCell(lg, t, p)); } catch (err) { notes.push(`append ${t.name} ×${p} failed: ${(err as Error).message}`); }
        }
      }
    }
    if (cfg.only.has('sse')) {
      for (const s of cfg.subscribers) {
        for (const t of order()) {
          await settle(`sse ${t.name} ×${s}`);
          log(`sse: ${t.name}, ${s} subscribers`);
          try { sseRows.push(await runSseCell(t, s, log)); } catch (err) { notes.push(`sse ${t.name} ×${s} failed: ${(err as Error).message}`); }
        }
      }
    }
  } finally {
    await lg?.stop();
    for (const t of targets) await t.stop();
  }
  const loadEnd = loadLine();

  const out: string[] = [];
  out.push(`# Durable Streams: svcd /ds next to the reference server (${started})`, '');
  out.push(`Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, every process unpinned. `
    + `svcd: ${process.env.SVCD_SERVER_ENTRY === 'bundle' ? 'the built bundle' : 'tsx source'}, uWS engine, one star. `
    + `Reference: @durable-streams/server 0.3.7, DurableStreamTestServer with a dataDir (file-backed, fdatasync per append), Node http. `
    + `Both on loopback; JSON streams (\`application/json\`), messages of ${cfg.bodyBytes} B.`, '');
  out.push(`Load average (1 / 5 / 15 min): ${loadStart} at start, ${loadEnd} at end.`, '');
  if (appendRows.length) {
    out.push(`## Appends (${cfg.warmupMs} ms warm-up + ${cfg.appendMs} ms measured, closed loop, all producers on one stream)`, '');
    out.push(table(
      ['server', 'producers', 'appends/s', 'ack p50 ms', 'ack p99 ms', 'ack max ms', 'errors', 'server CPU %', 'generator CPU %'],
      appendRows.map(({ target, producers, m }) => [
        target, producers, int(m.requests / (m.elapsedMs / 1000)), ms(pctMs(m.hist, 50)), ms(pctMs(m.hist, 99)), ms(maxMs(m.hist)),
        m.errors ? `${m.errors} (${m.firstError ?? ''})` : 0, fix(m.serverCpuPct, 0), fix(m.cpuPct, 0),
      ]),
    ), '');
  }
  if (sseRows.length) {
    out.push(`## SSE fan-out (\`live=sse\` from offset -1; ${cfg.sseRate} appends/s for ${cfg.sseMs} ms; delay from the producer's send to receipt)`, '');
    out.push(table(
      ['server', 'subscribers', 'connected', 'appends acked / due', 'delivered / expected', 'missing', 'dup', 'out of order', 'delay p50 ms', 'delay p99 ms', 'delay max ms',
        'from ack p99 ms', 'append ack p50 / p99 ms', 'server CPU %', 'server CPU µs / delivery', 'swarm CPU %'],
      sseRows.map((x) => [
        x.target, x.subscribers, x.r.connected, `${x.batches - x.appendErrors} / ${x.batches}`, `${int(x.r.delivered)} / ${int(x.r.expected)}`, int(x.r.expected - x.r.delivered), x.r.duplicates, x.r.outOfOrder,
        ms(pctMs(x.fromSend, 50)), ms(pctMs(x.fromSend, 99)), ms(maxMs(x.fromSend)), ms(pctMs(x.fromAck, 99)),
        `${ms(pctMs(x.ack, 50))} / ${ms(pctMs(x.ack, 99))}`, fix(x.serverCpuPct, 0),
        fix(x.r.delivered ? (x.serverCpuMs * 1000) / x.r.delivered : NaN, 1), fix(x.r.clientCpuPct, 0),
      ]),
    ), '');
    for (const x of sseRows) {
      if (x.appendErrors) notes.push(`sse ${x.target} ×${x.subscribers}: ${x.appendErrors} of ${x.batches} appends failed, first: ${x.firstError}`);
      if (x.r.disconnects) notes.push(`sse ${x.target} ×${x.subscribers}: ${x.r.disconnects} subscribers disconnected`);
      if (x.connsUsed > 4) notes.push(`sse ${x.target} ×${x.subscribers}: acks were slow enough to need ${x.connsUsed} producer connections`);
    }
    out.push('Server CPU % covers the producing window; CPU per delivery runs from the first append until the swarm has everything (or the grace ends). '
      + `Missing counts every (subscriber, append) pair never received, failed appends included; the producer opens another connection when all of its are awaiting acks (at most 64 unacked, past that a tick fails), and waits at most ${cfg.sseDrainMs} ms after its last send.`, '');
  }
  if (notes.length) out.push('## Notes', '', ...notes.map((n) => `- ${n}`), '');
  process.stdout.write(out.join('\n'));
  log('done');
}

main().then(() => process.exit(0), (err: Error) => { console.error(err.stack ?? err.message); process.exit(1); });
