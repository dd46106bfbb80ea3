// Sets WORKER_PARSE_BYTES_MIN: how long parsing an append body blocks the event loop inline, versus
// the main thread's own time when a piscina worker parses it (clone in, clone out). Offloading pays
// once the inline block is well above the main thread's share of the hand-off.
// Run: npx tsx bench/parse-threshold.ts
import { performance } from 'node:perf_hooks';
import { Piscina } from 'piscina';
import { decodeAppend } from '../src/api/wire.ts';
import { encodeBatch } from '../src/storage/format/record-codec.ts';
import { WORKER_PARSE_BYTES_MIN } from '../src/config/limits.ts';

const SIZES_BYTES = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20];
const RECORD_BODY_BYTES = 100;
const ROUNDS = 30;

function body(total: number): Buffer {
  const n = Math.max(1, Math.floor(total / (RECORD_BODY_BYTES + 12)));
  return Buffer.from(JSON.stringify({ records: Array.from({ length: n }, (_, i) => ({ body: `${i}`.padEnd(RECORD_BODY_BYTES, 'x') })) }));
}

const pool = new Piscina({ filename: new URL('../src/workers/boot.mjs', import.meta.url).href, minThreads: 1, maxThreads: 1, execArgv: ['--import', 'tsx'] });
await pool.run(body(1024), { name: 'parseAppend' }); // warm the worker

console.log('| body | inline parse+encode p50 ms | offload: main-thread busy p50 ms | offload: end-to-end p50 ms |');
console.log('|---|---|---|---|');
for (const size of SIZES_BYTES) {
  const b = body(size);
  const inline: number[] = [];
  const busy: number[] = [];
  const e2e: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    let t = performance.now();
    const input = decodeAppend(b);
    encodeBatch('00000000-0000-0000-0000-000000000000', 0, input.records.map((r) => ({ timestamp_ms: 0, headers: r.headers, body: r.body })));
    inline.push(performance.now() - t);
    // Main-thread busy time: event-loop utilization delta across the offloaded parse.
    const elu0 = performance.eventLoopUtilization();
    t = performance.now();
    await pool.run(b, { name: 'parseAppend' });
    e2e.push(performance.now() - t);
    busy.push(performance.eventLoopUtilization(elu0).active);
  }
  const p50 = (xs: number[]): string => xs.sort((x, y) => x - y)[xs.length >> 1].toFixed(3);
  console.log(`| ${(size / 1024).toFixed(0)} KiB | ${p50(inline)} | ${p50(busy)} | ${p50(e2e)} |`);
}
console.log(`\ncurrent WORKER_PARSE_BYTES_MIN = ${WORKER_PARSE_BYTES_MIN / 1024} KiB`);
await pool.destroy();
