// CRC-32C (Castagnoli), slicing-by-8 over eight 256-entry tables. Pure JS so the project stays
// install-script free; it runs on the flusher and the segment builder, never on the event loop.

const POLY_REVERSED = 0x82f63b78;
const TABLES: Uint32Array[] = (() => {
  const t: Uint32Array[] = [];
  for (let k = 0; k < 8; k++) t.push(new Uint32Array(256));
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let j = 0; j < 8; j++) c = c & 1 ? (c >>> 1) ^ POLY_REVERSED : c >>> 1;
    t[0][i] = c >>> 0;
  }
  for (let i = 0; i < 256; i++) {
    for (let k = 1; k < 8; k++) t[k][i] = (t[k - 1][i] >>> 8) ^ t[0][t[k - 1][i] & 0xff];
  }
  return t;
})();

export function crc32c(buf: Uint8Array, start = 0, end = buf.length, seed = 0): number {
  const [t0, t1, t2, t3, t4, t5, t6, t7] = TABLES;
  let crc = ~seed >>> 0;
  let i = start;
  const end8 = start + ((end - start) & ~7);
  while (i < end8) {
    const a = (buf[i] | (buf[i + 1] << 8) | (buf[i + 2] << 16) | (buf[i + 3] << 24)) ^ crc;
    crc =
      t7[a & 0xff] ^ t6[(a >>> 8) & 0xff] ^ t5[(a >>> 16) & 0xff] ^ t4[a >>> 24] ^
      t3[buf[i + 4]] ^ t2[buf[i + 5]] ^ t1[buf[i + 6]] ^ t0[buf[i + 7]];
    i += 8;
  }
  while (i < end) crc = t0[(crc ^ buf[i++]) & 0xff] ^ (crc >>> 8);
  return ~crc >>> 0;
}
