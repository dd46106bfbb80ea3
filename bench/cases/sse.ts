// SSE fan-out: N subscribers (raw sockets in a child) on one stream; this process appends batches at
// a steady rate and notes each ack; the swarm reports per-subscriber delay from the ack (and from
// the send time carried in the first record) and whether every subscriber got every batch in order.
import { loadavg } from 'node:os';
import { startChild } from '../lib/child.ts';
import type { BenchConfig } from '../lib/config.ts';
import { cpuWindow, procCpuMs } from '../lib/cpu.ts';
import { decodeHistogram } from '../lib/hist.ts';
import { runPacedProducer } from '../lib/producer.ts';
import type { Report } from '../lib/report.ts';
import { withSvcd } from '../lib/svcd.ts';
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

export async function runSse(cfg: BenchConfig, report: Report, log: (s: string) => void): Promise<void> {
  const batches = Math.round((cfg.sseDurationMs / 1000) * cfg.sseBatchesPerS);
  await withSvcd({ profileDir: cfg.profileDir }, async (svcd) => {
    await svcd.createStream(BUCKET, KEY);
    const start = await svcd.tail(BUCKET, KEY);
    const swarm = startChild('loadgen/sse-swarm.ts');
    try {
      await swarm.next('ready-to-start');
      const base = process.hrtime.bigint();
      log(`sse: connecting ${cfg.sseSubscribers} subscribers`);
      swarm.send({
        type: 'start', host: svcd.host, port: svcd.port, path: `/v1/streams/${BUCKET}/${KEY}/records/subscribe?seq_num=${start}`,
        subscribers: cfg.sseSubscribers, batches, baseNs: base.toString(), mark: SSE_MARK, connectOverMs: 0,
      } satisfies SwarmStart);
      const ready = await swarm.next<{ type: string; connected?: number; statuses?: string; message?: string }>('ready', 'error');
      if (ready.type === 'error') throw new Error(ready.message);
      if (ready.connected !== cfg.sseSubscribers) report.notes.push(`sse: only ${ready.connected} of ${cfg.sseSubscribers} subscribers connected (HTTP ${ready.statuses})`);
      log(`sse: ${ready.connected} subscribed; producing ${batches} batches at ${cfg.sseBatchesPerS}/s`);

      const cpu = cpuWindow(svcd.pid);
      // CPU per delivery counts until the swarm has everything (deliveries that trail the last ack
      // included): on this shared 2-core box it moves far less than wall-clock delays do.
      const cpuMs0 = procCpuMs(svcd.pid);
      const prod = await runPacedProducer({
        host: svcd.host, port: svcd.port, path: `/v1/streams/${BUCKET}/${KEY}/records`, batches, batchesPerS: cfg.sseBatchesPerS, base,
        body: (i, sentRelNs) => sseBatchBody(SSE_MARK, i, sentRelNs, cfg.sseRecordsPerBatch, RECORD_BYTES),
      });
      const serverCpuPct = cpu();
      const { ackNs, ackHist } = prod;
      if (prod.errors) report.notes.push(`sse producer: ${prod.errors} failed appends, first: ${prod.firstError}`);
      if (prod.connsUsed > 4) report.notes.push(`sse producer: acks were slow enough to need ${prod.connsUsed} connections for a ${cfg.sseBatchesPerS}/s pace`);
      swarm.send({ type: 'finish', ackNs, graceMs: GRACE_MS });
      const r = await swarm.next<SwarmResult | { type: 'error'; message: string }>('result', 'error');
      if (r.type === 'error') throw new Error((r as { message: string }).message);
      const res = r as SwarmResult;
      const serverCpuMs = procCpuMs(svcd.pid) - cpuMs0;
      report.sse = {
        subscribers: res.subscribers, connected: res.connected, batches, batchesPerS: cfg.sseBatchesPerS,
        recordsPerBatch: cfg.sseRecordsPerBatch, recordBytes: RECORD_BYTES,
        delivered: res.delivered, expected: res.expected, complete: res.complete, outOfOrder: res.outOfOrder, duplicates: res.duplicates,
        disconnects: res.disconnects, beforeAck: res.beforeAck,
        fromAck: decodeHistogram(res.fromAck), fromSend: decodeHistogram(res.fromSend), ackHist,
        serverCpuPct, clientCpuPct: res.clientCpuPct, serverCpuMs, loadAvg1: loadavg()[0], appendErrors: prod.errors,
      };
    } finally {
      await swarm.stop();
    }
  });
}
