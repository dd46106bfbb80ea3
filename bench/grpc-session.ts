// AppendSession vs HTTP appends: throughput and ack latency at the same record sizes and batch shapes,
// against one real svcd child (uWS data bridge + gRPC planes, fs backend, fresh data dir).
//
//   npx tsx bench/grpc-session.ts            (about 50 s: 4 shapes x 2 transports x PHASE_MS + warmups)
//
// Both transports keep WINDOW batches in flight: HTTP as WINDOW concurrent keep-alive requests (one
// request is one durable batch), gRPC as one session pipelining WINDOW batches. Latency is measured
// per batch, from handing it to the transport to its ack, in microseconds (hdr-histogram-js).
import * as http from 'node:http';
import { newHistogram, pctMs, type Histogram } from './lib/hist.ts';
import type { AppendSessionRequest } from '../src/gen/svc/v1/AppendSessionRequest.ts';
import type { AppendSessionResponse__Output } from '../src/gen/svc/v1/AppendSessionResponse.ts';
import { connect, call } from '../test/grpc/client.ts';
import { removeDir, startServer } from '../test/helpers/server.ts';

const PHASE_MS = 5000;
const WARMUP_MS = 500;
const WINDOW = 64;
const SHAPES = [
  { recordBytes: 100, records: 1 },
  { recordBytes: 100, records: 100 },
  { recordBytes: 4096, records: 1 },
  { recordBytes: 4096, records: 100 },
] as const;

interface Result {
  shape: string;
  transport: string;
  batches: number;
  seconds: number;
  recordBytes: number;
  records: number;
  hist: Histogram;
}

const nowUs = (): number => Number(process.hrtime.bigint() / 1000n);

/** Runs `start(done)` WINDOW-wide until the phase ends; each started batch reports its ack. */
async function drive(measureMs: number, startOne: () => Promise<void>): Promise<{ hist: Histogram; batches: number; seconds: number }> {
  const hist = newHistogram();
  let batches = 0;
  const t0 = Date.now();
  const stopAt = t0 + measureMs;
  const lane = async (): Promise<void> => {
    while (Date.now() < stopAt) {
      const s = nowUs();
      await startOne();
      hist.recordValue(Math.max(1, nowUs() - s));
      batches += 1;
    }
  };
  await Promise.all(Array.from({ length: WINDOW }, lane));
  return { hist, batches, seconds: (Date.now() - t0) / 1000 };
}

function httpAppender(port: number, key: string, body: Buffer): () => Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: WINDOW });
  const path = `/v1/streams/bench/${encodeURIComponent(key)}/records`;
  return () => new Promise<void>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path, agent, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** One session; batches are written as lanes ask, acks resolve them in order. */
function sessionAppender(data: ReturnType<typeof connect>['data'], key: string, msg: AppendSessionRequest): { append: () => Promise<void>; close: () => Promise<void> } {
  const s = data.AppendSession();
  const waiting: { resolve: () => void; reject: (e: Error) => void }[] = [];
  let failed: Error | undefined;
  s.on('data', (_a: AppendSessionResponse__Output) => waiting.shift()?.resolve());
  const ended = new Promise<void>((resolve) => {
    s.on('error', (e: Error) => { failed = e; for (const w of waiting.splice(0)) w.reject(e); resolve(); });
    s.on('end', () => resolve());
  });
  s.write({ open: { bucket: 'bench', key: Buffer.from(key) } });
  return {
    append: () => new Promise<void>((resolve, reject) => {
      if (failed) { reject(failed); return; }
      waiting.push({ resolve, reject });
      s.write(msg);
    }),
    close: async () => { s.end(); await ended; },
  };
}

function fmt(r: Result): string[] {
  const bps = r.batches / r.seconds;
  const p = (q: number): string => pctMs(r.hist, q).toFixed(2);
  return [
    r.shape, r.transport, Math.round(bps).toLocaleString('en-US'), Math.round(bps * r.records).toLocaleString('en-US'),
    ((bps * r.records * r.recordBytes) / 1e6).toFixed(1), p(50), p(99), p(99.9),
  ];
}

function table(rows: string[][]): string {
  const head = ['shape', 'transport', 'batches/s', 'records/s', 'MB/s', 'p50 ms', 'p99 ms', 'p99.9 ms'];
  const all = [head, ...rows];
  const w = head.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  const line = (r: string[]): string => r.map((c, i) => (i < 2 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  ');
  return [line(head), w.map((n) => '-'.repeat(n)).join('  '), ...rows.map(line)].join('\n');
}

async function main(): Promise<void> {
  const server = await startServer({ args: ['--grpc-listen', '127.0.0.1:0'] });
  let grpcPort = 0;
  for (let i = 0; i < 250 && !grpcPort; i++) {
    const m = /svcd grpc listening on [^\s:]+:(\d+)/.exec(server.output());
    if (m) grpcPort = Number(m[1]);
    else await new Promise((r) => setTimeout(r, 20));
  }
  if (!grpcPort) throw new Error(`no grpc line:\n${server.output()}`);
  const clients = connect(grpcPort);
  const rows: string[][] = [];
  try {
    await call(clients.data.CreateBucket.bind(clients.data), { bucket: 'bench', config: { create_stream_on_append: true } });
    for (const shape of SHAPES) {
      const label = `${shape.recordBytes} B x ${shape.records}`;
      const text = 'x'.repeat(shape.recordBytes);
      const httpBody = Buffer.from(JSON.stringify({ records: Array.from({ length: shape.records }, () => ({ body: text })) }));
      const grpcMsg: AppendSessionRequest = { batch: { records: Array.from({ length: shape.records }, () => ({ body: Buffer.from(text) })) } };

      const httpKey = `http-${shape.recordBytes}-${shape.records}`;
      const h = httpAppender(server.port, httpKey, httpBody);
      await drive(WARMUP_MS, h);
      const hr = await drive(PHASE_MS, h);
      rows.push(fmt({ shape: label, transport: 'HTTP append', ...hr, ...shape }));

      const session = sessionAppender(clients.data, `grpc-${shape.recordBytes}-${shape.records}`, grpcMsg);
      await drive(WARMUP_MS, session.append);
      const gr = await drive(PHASE_MS, session.append);
      await session.close();
      rows.push(fmt({ shape: label, transport: 'gRPC session', ...gr, ...shape }));
      console.error(`done: ${label}`);
    }
  } finally {
    clients.close();
    await server.stop();
    removeDir(server.dataDir);
  }
  console.log(`\nAppendSession vs HTTP append, ${WINDOW} batches in flight, ${PHASE_MS / 1000} s per cell, loopback, fs backend\n`);
  console.log(table(rows));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
