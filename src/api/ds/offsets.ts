// DS offsets ↔ svcd sequence numbers. A DS offset names a position between records of the svcd
// stream: `<seq>_<sub>` with both parts 16 decimal digits, where <seq> is the svcd seq_num of the next
// record to read (so the offset after a read is the read's last record's seq_num + 1) and <sub> is 0
// (kept for the protocol's two-part shape; svcd positions are whole records). Fixed width makes the
// protocol's lexicographic order the numeric one. `-1` is the stream's start and `now` its tail.

import { dsInvalid } from './errors.ts';

const WIDTH = 16;
const OFFSET_RE = /^(\d{16})_(\d{16})$/;
const ZERO_SUB = '0'.repeat(WIDTH);

export type DsOffset = { kind: 'start' } | { kind: 'now' } | { kind: 'seq'; seq: number };

export function formatOffset(seq: number): string {
  return `${String(seq).padStart(WIDTH, '0')}_${ZERO_SUB}`;
}

/** A client's offset; anything but `-1`, `now` or the fixed shape is 400. */
export function parseOffset(raw: string): DsOffset {
  if (raw === '-1') return { kind: 'start' };
  if (raw === 'now') return { kind: 'now' };
  const m = OFFSET_RE.exec(raw);
  // <sub> is always 0 here: another would name a position svcd never hands out (read as 0 before).
  if (!m || m[2] !== ZERO_SUB) throw dsInvalid(`malformed offset ${JSON.stringify(raw.slice(0, 64))}`);
  const seq = Number(m[1]);
  if (!Number.isSafeInteger(seq)) throw dsInvalid('offset out of range');
  return { kind: 'seq', seq };
}
