// SSE fan-out: subscribers on raw sockets in a child (the swarm); this process appends batches at a
// steady rate and notes each ack; the swarm reports per-subscriber delay from the ack (and from the
// send time carried in the first record) and whether every subscriber got every batch once, in order.
// Three cells, each on a fresh server:
// - floor: a bare uWS broadcaster (floors/uws-sse-server.ts) sending svcd-shaped frames at the same
//   pace to the same swarm: what writing the sockets costs on this machine, and the delays it leaves.
// - one: BENCH_SSE_SUBSCRIBERS on one stream.
// - spread: BENCH_SSE_SPREAD subscribers over several streams (the star's subscription cap, 16,384,
//   over 16 streams by default; the star runs with --sse-connections-max raised to match, since the
//   per-star SSE default is 4096), batch b on stream b mod S.
// - spread-floor: the bare broadcaster with the spread cell's subscribers, groups and pace.
import { loadavg } from 'node:os';
import { startChild } from '../lib/child.ts';
import type { BenchConfig, SseCellName } from '../lib/config.ts';
import { cpuWindow, procCpuMs } from '../lib/cpu.ts';
import { decodeHistogram } from '../lib/hist.ts';
import { runPacedProducer } from '../lib/producer.ts';
import type { Report, SseOutcome } from '../lib/report.ts';
import { withSvcd } from '../lib/svcd.ts';
import type { SseFloorGo } from '../floors/uws-sse-server.ts';
import { SSE_MARK, type SwarmResult, type SwarmStart } from '../loadgen/sse-spec.ts';

const BUCKET = 'bench';
const KEY = 'sse';
const RECORD_BYTES = 100;
const GRACE_MS = 5000;

/** The first record carries `${mark}${i}:${sentRelNs}:`; every record is recordBytes of content. */
export function sseBatchBody(mark: string, idx: number, sentRelNs: number, recordsPerBatch: number, recordBytes: number): string {
  const records = [JSON.stringify({ body: `${mark}${idx}:${sentRelNs}:`.padEnd(recordBytes, 'x') })];
  const rest = JSON.stringify({ body: 'x'.repeat(recordBytes) });
  for (let i = 1; i < recordsPerBatch; i++) records.push(rest);
  return `{"records":[${records.join(',')}]}`;
}

interface CellSpec {
  cell: SseCellName;
  subscribers: number;
  streams: number;
  /** Over all streams. */
  batchesPerS: number;
}

function cellSpecs(cfg: BenchConfig): CellSpec[] {
  const one = { subscribers: cfg.sseSubscribers, streams: 1, batchesPerS: cfg.sseBatchesPerS };
  const spread = { subscribers: cfg.sseSpreadSubscribers, streams: cfg.sseSpreadStreams, batchesPerS: cfg.sseSpreadBatchesPerS };
  const all: CellSpec[] = [
    { cell: 'floor', ...one },
    { cell: 'one', ...one },
    { cell: 'spread-floor', ...spread },
    { cell: 'spread', ...spread },
  ];
  return all.filter((c) => cfg.sseCells.has(c.cell));
}

export async function runSse(cfg: BenchConfig, report: Report, log: (s: string) => void): Promise<void> {
  for (const spec of cellSpecs(cfg)) {
    const out = spec.cell === 'floor' || spec.cell === 'spread-floor' ? await runFloorCell(cfg, spec, report, log) : await runSvcdCell(cfg, spec, report, log);
    report.sse.push(out);
  }
}

function outcome(cfg: BenchConfig, spec: CellSpec, batches: number, res: SwarmResult): Omit<SseOutcome, 'fromAck' | 'ackHist' | 'serverCpuPct' | 'serverCpuMs' | 'appendErrors'> {
  return {
    cell: spec.cell, subscribers: res.subscribers, streams: spec.streams, connected: res.connected, batches, batchesPerS: spec.batchesPerS,
    recordsPerBatch: cfg.sseRecordsPerBatch, recordBytes: RECORD_BYTES,
    delivered: res.delivered, expected: res.expected, complete: res.complete, outOfOrder: res.outOfOrder, duplicates: res.duplicates,
    misrouted: res.misrouted, disconnects: res.disconnects, beforeAck: res.beforeAck,
    fromSend: decodeHistogram(res.fromSend), clientCpuPct: res.clientCpuPct, loadAvg1: loadavg()[0],
  };
}

async function connectSwarm(spec: CellSpec, start: Omit<SwarmStart, 'subscribers' | 'type' | 'mark' | 'connectOverMs'>, report: Report, log: (s: string) => void): Promise<ReturnType<typeof startChild>> {
  const swarm = startChild('loadgen/sse-swarm.ts');
  await swarm.next('ready-to-start');
  log(`sse ${spec.cell}: connecting ${spec.subscribers} subscribers over ${spec.streams} stream(s)`);
  swarm.send({ type: 'start', subscribers: spec.subscribers, mark: SSE_MARK, connectOverMs: 0, ...start } satisfies SwarmStart);
  const ready = await swarm.next<{ type: string; connected?: number; statuses?: string; message?: string }>('ready', 'error');
  if (ready.type === 'error') { await swarm.stop(); throw new Error(ready.message); }
  if (ready.connected !== spec.subscribers) report.notes.push(`sse ${spec.cell}: only ${ready.connected} of ${spec.subscribers} subscribers connected (HTTP ${ready.statuses})`);
  return swarm;
}

async function swarmResult(swarm: ReturnType<typeof startChild>, ackNs: number[]): Promise<SwarmResult> {
  swarm.send({ type: 'finish', ackNs, graceMs: GRACE_MS });
  const r = await swarm.next<SwarmResult | { type: 'error'; message: string }>('result', 'error');
  if (r.type === 'error') throw new Error((r as { message: string }).message);
  return r as SwarmResult;
}

async function runFloorCell(cfg: BenchConfig, spec: CellSpec, report: Report, log: (s: string) => void): Promise<SseOutcome> {
  const batches = Math.round((cfg.sseDurationMs / 1000) * spec.batchesPerS);
  const server = startChild('floors/uws-sse-server.ts');
  try {
    const msg = await server.next<{ type: string; port?: number; message?: string }>('listening', 'error');
    if (msg.type !== 'listening' || msg.port === undefined) throw new Error(`uWS SSE floor did not start: ${msg.message}`);
    const base = process.hrtime.bigint();
    const paths = spec.streams > 1 ? Array.from({ length: spec.streams }, (_, g) => `/events/${g}`) : undefined;
    const swarm = await connectSwarm(spec, { host: '127.0.0.1', port: msg.port, path: '/events', ...(paths ? { paths } : {}), batches, baseNs: base.toString() }, report, log);
    try {
      log(`sse ${spec.cell}: broadcasting ${batches} batches at ${spec.batchesPerS}/s`);
      server.send({
        type: 'go', batches, batchesPerS: spec.batchesPerS, recordsPerBatch: cfg.sseRecordsPerBatch, recordBytes: RECORD_BYTES,
        baseNs: base.toString(), mark: SSE_MARK, streams: spec.streams,
      } satisfies SseFloorGo);
      const done = await server.next<{ type: string; cpuMs: number; elapsedMs: number; lagMsMax: number }>('done');
      // A floor that could not keep its pace is saturated: its delays (from each batch's due time)
      // then include its backlog, and this says how far behind it fell.
      report.notes.push(`sse ${spec.cell}: the broadcaster took ${(done.elapsedMs / 1000).toFixed(1)} s for ${((batches / spec.batchesPerS)).toFixed(1)} s of batches; at worst a tick ran ${done.lagMsMax.toFixed(1)} ms after it was due`);
      const res = await swarmResult(swarm, new Array<number>(batches).fill(-1));
      return {
        ...outcome(cfg, spec, batches, res), fromAck: undefined, ackHist: undefined, appendErrors: 0,
        serverCpuPct: (done.cpuMs / done.elapsedMs) * 100, serverCpuMs: done.cpuMs,
      };
    } finally {
      await swarm.stop();
    }
  } finally {
    await server.stop();
  }
}

async function runSvcdCell(cfg: BenchConfig, spec: CellSpec, report: Report, log: (s: string) => void): Promise<SseOutcome> {
  const batches = Math.round((cfg.sseDurationMs / 1000) * spec.batchesPerS);
  const keys = spec.streams === 1 ? [KEY] : Array.from({ length: spec.streams }, (_, s) => `${KEY}-${s}`);
  // The per-star SSE cap (4096 by default) is raised for a cell that needs more.
  const args = spec.subscribers > 4096 ? ['--sse-connections-max', String(spec.subscribers)] : [];
  return withSvcd({ profileDir: cfg.profileDir, args }, async (svcd) => {
    const paths: string[] = [];
    for (const key of keys) {
      await svcd.createStream(BUCKET, key);
      paths.push(`/v1/streams/${BUCKET}/${key}/records/subscribe?seq_num=${await svcd.tail(BUCKET, key)}`);
    }
    const base = process.hrtime.bigint();
    const swarm = await connectSwarm(spec, {
      host: svcd.host, port: svcd.port, path: paths[0], ...(spec.streams > 1 ? { paths } : {}), batches, baseNs: base.toString(),
    }, report, log);
    try {
      log(`sse ${spec.cell}: producing ${batches} batches at ${spec.batchesPerS}/s`);
      const cpu = cpuWindow(svcd.pid);
      // CPU per delivery counts until the swarm has everything (deliveries that trail the last ack
      // included): on this shared 2-core box it moves far less than wall-clock delays do.
      const cpuMs0 = procCpuMs(svcd.pid);
      const prod = await runPacedProducer({
        host: svcd.host, port: svcd.port, path: `/v1/streams/${BUCKET}/${keys[0]}/records`,
        pathOf: (i) => `/v1/streams/${BUCKET}/${keys[i % keys.length]}/records`, batches, batchesPerS: spec.batchesPerS, base,
        body: (i, sentRelNs) => sseBatchBody(SSE_MARK, i, sentRelNs, cfg.sseRecordsPerBatch, RECORD_BYTES),
      });
      const serverCpuPct = cpu();
      if (prod.errors) report.notes.push(`sse ${spec.cell} producer: ${prod.errors} failed appends, first: ${prod.firstError}`);
      if (prod.connsUsed > 4) report.notes.push(`sse ${spec.cell} producer: acks were slow enough to need ${prod.connsUsed} connections for a ${spec.batchesPerS}/s pace`);
      const res = await swarmResult(swarm, prod.ackNs);
      return {
        ...outcome(cfg, spec, batches, res), fromAck: decodeHistogram(res.fromAck), ackHist: prod.ackHist, appendErrors: prod.errors,
        serverCpuPct, serverCpuMs: procCpuMs(svcd.pid) - cpuMs0,
      };
    } finally {
      await swarm.stop();
    }
  });
}
