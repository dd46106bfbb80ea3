// The flusher's write pattern on this disk, three ways: a small group commit (2 KB) appended to a
// growing file, written into a sparse (ftruncate-extended) file, and into a zero-filled one, each
// followed by fdatasync. Why the flusher zero-fills its WAL files ahead (src/storage/wal/flusher-worker.ts):
// overwriting blocks the file owns needs no journal commit for its size or block map.
//   npx tsx bench/fdatasync-modes.ts          FDATASYNC_OPS=3000 FDATASYNC_ROUNDS=2
import { closeSync, fdatasyncSync, ftruncateSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const OPS = Number(process.env.FDATASYNC_OPS ?? 3000);
const ROUNDS = Number(process.env.FDATASYNC_ROUNDS ?? 2);
const GROUP_BYTES = 2000;
const FILE_BYTES = 8 * 1024 * 1024;

type Mode = 'append' | 'sparse' | 'zero-filled';

function run(mode: Mode): string {
  const path = join(tmpdir(), `svcd-fdatasync-${mode}-${process.pid}`);
  const fd = openSync(path, 'w+');
  try {
    if (mode === 'sparse') ftruncateSync(fd, FILE_BYTES);
    if (mode === 'zero-filled') {
      const zeros = Buffer.alloc(1024 * 1024);
      for (let at = 0; at < FILE_BYTES; at += zeros.length) writeSync(fd, zeros, 0, zeros.length, at);
    }
    fdatasyncSync(fd);
    const group = Buffer.alloc(GROUP_BYTES, 1);
    const lat: number[] = [];
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < OPS; i++) {
      const s = performance.now();
      writeSync(fd, group, 0, group.length, i * GROUP_BYTES);
      fdatasyncSync(fd);
      lat.push(performance.now() - s);
    }
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    lat.sort((a, b) => a - b);
    const pct = (p: number): string => lat[Math.min(lat.length - 1, Math.floor(lat.length * p))].toFixed(3);
    return `| ${mode} | ${Math.round((OPS / wallMs) * 1000).toLocaleString('en-US')} | ${pct(0.5)} | ${pct(0.99)} | ${((cpu.user + cpu.system) / OPS).toFixed(1)} |`;
  } finally {
    closeSync(fd);
    unlinkSync(path);
  }
}

console.log(`${GROUP_BYTES} B write + fdatasync, ${OPS} per mode, ${ROUNDS} rounds interleaved, in ${tmpdir()}\n`);
console.log('| file | ops/s | p50 ms | p99 ms | CPU µs/op |');
console.log('| --- | --- | --- | --- | --- |');
for (let r = 0; r < ROUNDS; r++) for (const mode of ['append', 'sparse', 'zero-filled'] as const) console.log(run(mode));
