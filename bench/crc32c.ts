// CRC-32C throughput: the CPU instruction (@node-rs/crc32) against the pure-JS slicing-by-8 code, on
// the frame sizes the flusher seals (a 100 B and a 4 KiB record's frame) and on 1 MiB, over a
// SharedArrayBuffer view as in the log ring. `npx tsx bench/crc32c.ts`
import { crc32c, crc32cImplementation, crc32cJs } from '../src/storage/format/crc32c.ts';

const SIZES_BYTES = [120, 4156, 1 << 20];
/** Bytes summed per measurement. */
const WORK_BYTES = 256 << 20;
const ROUNDS = 3;

const ring = new Uint8Array(new SharedArrayBuffer((1 << 20) + 64));
for (let i = 0; i < ring.length; i++) ring[i] = (i * 131 + 7) & 0xff;

console.log(`crc32c() runs: ${crc32cImplementation}\n`);
console.log('| size | implementation | MB/s (best of 3) | µs per call |');
console.log('| --- | --- | --- | --- |');
for (const size of SIZES_BYTES) {
  for (const [name, f] of [['native', crc32c], ['js', crc32cJs]] as const) {
    if (name === 'native' && crc32cImplementation !== 'native') continue;
    const calls = Math.max(1, Math.floor(WORK_BYTES / size));
    let best = Infinity;
    let sink = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const t0 = performance.now();
      for (let i = 0; i < calls; i++) sink ^= f(ring, 8, 8 + size);
      best = Math.min(best, performance.now() - t0);
    }
    if (sink === 0.5) console.log(''); // keeps the sums live
    console.log(`| ${size} B | ${name} | ${((calls * size) / best / 1e3).toFixed(0)} | ${((best / calls) * 1000).toFixed(3)} |`);
  }
}
