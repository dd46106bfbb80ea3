// The Node twin of the k6 scripts: plays scenarios.json (same order, stages, payloads and
// thresholds as append.js and sse.js) with raw keep-alive HTTP/1.1 connections and hdr histograms,
// prints k6-style metrics and threshold results, and exits 99 when a threshold fails (as k6 does).
//   npx tsx loadtest/run.ts                      (starts its own svcd)
//   BASE_URL=http://127.0.0.1:8080 npx tsx loadtest/run.ts
//   LOADTEST_SCALE=0.2 LOADTEST_ONLY=append_single_100b npx tsx loadtest/run.ts
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChild } from '../bench/lib/child.ts';
import { fix, int, ms, table } from '../bench/lib/format.ts';
import { decodeHistogram, newHistogram, pctMs, recordNs, type Histogram } from '../bench/lib/hist.ts';
import { buildRequest, Http1Conn } from '../bench/lib/http1.ts';
import { runPacedProducer } from '../bench/lib/producer.ts';
import type { SwarmResult, SwarmStart } from '../bench/loadgen/sse-spec.ts';
import { startServer, type RunningServer } from '../test/helpers/server.ts';
import { appendBody, compare, durationMs, GAP_MS, parseThreshold, schedule, sseBatchBody, sseBatches, vusAt } from './lib/plan.js';
import type { AppendScenario, Scenarios, SseScenario, Stage, Thresholds } from './scenario-types.js';

const HERE = dirname(fileURLToPath(import.meta.url));
/** How often the ramping controller adjusts the number of VUs. */
const CONTROL_TICK_MS = 50;
/** k6's exit code when a threshold fails. */
const EXIT_THRESHOLDS_FAILED = 99;

type Metric =
  | { kind: 'trend'; hist: Histogram }
  | { kind: 'rate'; hits: number; total: number }
  | { kind: 'counter'; count: number; seconds: number };

interface Outcome {
  name: string;
  metrics: Record<string, Metric>;
  thresholds: Thresholds;
  extra: [string, string][];
}

function scaled(stages: Stage[], scale: number): Stage[] {
  return stages.map((s) => ({ duration: `${Math.max(1, Math.round(durationMs(s.duration) * scale))}ms`, target: s.target }));
}

async function ensureStream(host: string, port: number, bucket: string, stream: string): Promise<void> {
  const c = await Http1Conn.open(host, port);
  try {
    for (const path of [`/v1/buckets/${bucket}`, `/v1/streams/${bucket}/${stream}`]) {
      const r = await c.request(buildRequest('POST', path, '{}'));
      if (r.status !== 201 && r.status !== 409) throw new Error(`POST ${path}: HTTP ${r.status} ${r.body.toString()}`);
    }
  } finally {
    c.close();
  }
}

/** ramping-vus, closed loop: each VU is one keep-alive connection appending as soon as its ack arrives. */
async function runAppend(host: string, port: number, bucket: string, a: AppendScenario, scale: number): Promise<Outcome> {
  await ensureStream(host, port, bucket, a.stream);
  const stages = scaled(a.stages, scale);
  const totalMs = stages.reduce((t, s) => t + durationMs(s.duration), 0);
  const req = buildRequest('POST', `/v1/streams/${bucket}/${a.stream}/records`, appendBody(a.recordBytes, a.recordsPerRequest));
  const duration = newHistogram();
  let reqs = 0;
  let failed = 0;
  let records = 0;
  let firstError: string | undefined;
  const vus: { stop: boolean; conn?: Http1Conn }[] = [];
  let peak = 0;
  const startVu = (): void => {
    const vu: { stop: boolean; conn?: Http1Conn } = { stop: false };
    vus.push(vu);
    Http1Conn.open(host, port).then((conn) => {
      vu.conn = conn;
      const loop = (): void => {
        if (vu.stop) { conn.close(); return; }
        const t0 = process.hrtime.bigint();
        conn.send(req, (err, res) => {
          recordNs(duration, Number(process.hrtime.bigint() - t0));
          reqs++;
          if (err || !res || res.status !== 200) {
            failed++;
            firstError ??= err?.message ?? `HTTP ${res?.status} ${res?.body.toString().slice(0, 160)}`;
            if (err) return;
          } else records += a.recordsPerRequest;
          loop();
        });
      };
      loop();
    }, (err: Error) => { failed++; firstError ??= err.message; });
  };
  const t0 = performance.now();
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const t = performance.now() - t0;
      const want = t >= totalMs ? 0 : vusAt(stages, t);
      while (vus.filter((v) => !v.stop).length < want) startVu();
      for (let i = vus.length - 1; i >= 0 && vus.filter((v) => !v.stop).length > want; i--) if (!vus[i].stop) vus[i].stop = true;
      peak = Math.max(peak, vus.filter((v) => !v.stop).length);
      if (t >= totalMs) { clearInterval(timer); resolve(); }
    }, CONTROL_TICK_MS);
  });
  const seconds = (performance.now() - t0) / 1000;
  return {
    name: a.name,
    thresholds: a.thresholds,
    metrics: {
      http_req_duration: { kind: 'trend', hist: duration },
      http_req_failed: { kind: 'rate', hits: failed, total: reqs },
      http_reqs: { kind: 'counter', count: reqs, seconds },
      appended_records: { kind: 'counter', count: records, seconds },
    },
    extra: [['peak VUs', int(peak)], ['first error', firstError ?? '–']],
  };
}

async function runSse(host: string, port: number, bucket: string, s: SseScenario, scale: number): Promise<Outcome> {
  await ensureStream(host, port, bucket, s.stream);
  const rampMs = Math.round(durationMs(s.connectRamp) * scale);
  const holdMs = Math.round(durationMs(s.hold) * scale);
  const graceMs = Math.round(durationMs(s.grace) * Math.max(scale, 0.5));
  const batches = Math.max(1, sseBatches({ ...s, hold: `${holdMs}ms` }));
  const tailConn = await Http1Conn.open(host, port);
  const tailRes = await tailConn.request(buildRequest('GET', `/v1/streams/${bucket}/${s.stream}/records/tail`));
  tailConn.close();
  const tj = JSON.parse(tailRes.body.toString()) as { tail?: { seq_num: number }; seq_num?: number };
  const seq = tj.tail?.seq_num ?? tj.seq_num ?? 0;
  const swarm = startChild('loadgen/sse-swarm.ts');
  try {
    await swarm.next('ready-to-start');
    const base = process.hrtime.bigint();
    swarm.send({
      type: 'start', host, port, path: `/v1/streams/${bucket}/${s.stream}/records/subscribe?seq_num=${seq}`,
      subscribers: s.subscribers, batches, baseNs: base.toString(), mark: s.marker, connectOverMs: rampMs,
    } satisfies SwarmStart);
    const ready = await swarm.next<{ type: string; connected?: number; message?: string }>('ready', 'error');
    if (ready.type === 'error') throw new Error(ready.message);
    const prod = await runPacedProducer({
      host, port, path: `/v1/streams/${bucket}/${s.stream}/records`, batches, batchesPerS: s.batchesPerS, base,
      body: (i, sentRelNs) => sseBatchBody(s, i, sentRelNs),
    });
    swarm.send({ type: 'finish', ackNs: prod.ackNs, graceMs });
    const r = await swarm.next<SwarmResult | { type: 'error'; message: string }>('result', 'error');
    if (r.type === 'error') throw new Error((r as { message: string }).message);
    const res = r as SwarmResult;
    const fromAck = decodeHistogram(res.fromAck);
    return {
      name: s.name,
      thresholds: s.thresholds,
      metrics: {
        sse_delivery_ms: { kind: 'trend', hist: decodeHistogram(res.fromSend) },
        sse_missed_batches: { kind: 'counter', count: res.expected - res.delivered, seconds: (rampMs + holdMs + graceMs) / 1000 },
        sse_connect_failed: { kind: 'rate', hits: res.subscribers - res.connected, total: res.subscribers },
        sse_stream_errors: { kind: 'counter', count: res.disconnects, seconds: (rampMs + holdMs + graceMs) / 1000 },
      },
      extra: [
        ['delivery from ack p50 / p99 ms', `${ms(pctMs(fromAck, 50))} / ${ms(pctMs(fromAck, 99))}`],
        ['producer ack p50 / p99 ms', `${ms(pctMs(prod.ackHist, 50))} / ${ms(pctMs(prod.ackHist, 99))}`],
        ['delivered / expected', `${int(res.delivered)} / ${int(res.expected)}`],
        ['producer errors', `${prod.errors}${prod.firstError ? ` (${prod.firstError})` : ''}`],
      ],
    };
  } finally {
    await swarm.stop();
  }
}

/** The value a threshold aggregation reads from a metric; trends are in ms, like k6's. */
function aggregate(m: Metric, agg: string): number {
  if (m.kind === 'trend') {
    const p = /^p\((.+)\)$/.exec(agg);
    if (p) return pctMs(m.hist, Number(p[1]));
    if (agg === 'avg') return m.hist.mean / 1000;
    if (agg === 'med') return pctMs(m.hist, 50);
    if (agg === 'min') return m.hist.totalCount ? m.hist.minNonZeroValue / 1000 : NaN;
    if (agg === 'max') return m.hist.totalCount ? m.hist.maxValue / 1000 : NaN;
  } else if (m.kind === 'rate') {
    if (agg === 'rate') return m.total ? m.hits / m.total : 0;
  } else {
    if (agg === 'count') return m.count;
    if (agg === 'rate') return m.count / m.seconds;
  }
  throw new Error(`threshold aggregation ${agg} does not apply to a ${m.kind} metric`);
}

function describe(m: Metric): string {
  if (m.kind === 'trend') {
    const h = m.hist;
    return `avg=${ms(h.mean / 1000)} med=${ms(pctMs(h, 50))} p(90)=${ms(pctMs(h, 90))} p(99)=${ms(pctMs(h, 99))} p(99.9)=${ms(pctMs(h, 99.9))} max=${ms(h.maxValue / 1000)} (n=${int(h.totalCount)})`;
  }
  if (m.kind === 'rate') return `${fix(m.total ? (m.hits / m.total) * 100 : 0, 3)} % (${int(m.hits)} of ${int(m.total)})`;
  return `${int(m.count)} (${int(m.count / m.seconds)}/s)`;
}

function report(o: Outcome): boolean {
  const rows: string[][] = Object.entries(o.metrics).map(([k, m]) => [k, describe(m)]);
  for (const [k, v] of o.extra) rows.push([k, v]);
  console.log(`\n## ${o.name}\n\n${table(['metric', 'value'], rows)}\n`);
  const checks: string[][] = [];
  let ok = true;
  for (const [metric, exprs] of Object.entries(o.thresholds)) {
    const m = o.metrics[metric];
    for (const expr of exprs) {
      if (!m) { checks.push([`${metric}{scenario:${o.name}}`, expr, '–', 'missing metric']); ok = false; continue; }
      const t = parseThreshold(expr);
      const v = aggregate(m, t.agg);
      const pass = compare(v, t.op, t.bound);
      ok &&= pass;
      checks.push([`${metric}{scenario:${o.name}}`, expr, fix(v, 3), pass ? '✓' : '✗ failed']);
    }
  }
  console.log(table(['threshold', 'expression', 'value', 'result'], checks));
  return ok;
}

async function main(): Promise<void> {
  const sc = JSON.parse(readFileSync(join(HERE, 'scenarios.json'), 'utf8')) as Scenarios;
  const only = (process.env.LOADTEST_ONLY ?? '').split(',').filter(Boolean);
  const scale = Number(process.env.LOADTEST_SCALE ?? '1');
  if (!(scale > 0)) throw new Error('LOADTEST_SCALE must be a positive number');
  const baseUrl = process.env.BASE_URL ?? process.env.LOADTEST_BASE_URL;
  let server: RunningServer | undefined;
  let host = '127.0.0.1';
  let port: number;
  if (baseUrl) {
    const u = new URL(baseUrl);
    host = u.hostname;
    port = Number(u.port || 80);
  } else {
    server = await startServer({ engine: 'uws' });
    port = server.port;
  }
  const plan = schedule(sc, only);
  console.log(`# svcd load test (Node runner), ${plan.length} scenarios against ${host}:${port}${scale !== 1 ? `, durations × ${scale}` : ''}`);
  let allOk = true;
  try {
    for (const p of plan) {
      process.stderr.write(`loadtest: ${p.name}\n`);
      const o = p.kind === 'append'
        ? await runAppend(host, port, sc.bucket, sc.append.find((a) => a.name === p.name)!, scale)
        : await runSse(host, port, sc.bucket, sc.sse.find((s) => s.name === p.name)!, scale);
      allOk = report(o) && allOk;
      await new Promise((r) => setTimeout(r, GAP_MS * Math.min(1, scale)));
    }
  } finally {
    await server?.stop();
    if (server) server.proc.kill();
  }
  console.log(allOk ? '\nAll thresholds passed.' : '\nSome thresholds failed.');
  process.exit(allOk ? 0 : EXIT_THRESHOLDS_FAILED);
}

main().catch((err) => { console.error(err); process.exit(1); });
