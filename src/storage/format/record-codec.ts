// The one binary record format, shared by the log ring, the WAL and segments.
//
// Batch frame (little-endian):
//   0  u32 frameBytes        whole frame, header included
//   4  u32 crc32c            over bytes [8, frameBytes); 0 until the flusher or segment builder seals it
//   8  u8  kind              FRAME_RECORDS or FRAME_ROTATE
//   9  u8  version           FRAME_FORMAT_VERSION (0: written before frames carried one; same layout)
//  10  u8[2] reserved
//  12  u32 recordCount
//  16  u8[16] streamId       uuid bytes
//  32  u64 firstSeq
//  40  records...
// Record: u32 recordBytes (after this field) · u64 timestampMs · u32 headerCount ·
//         headerCount × (u32 nameLen · name · u32 valueLen · value) · u32 bodyLen · body
// Sequence numbers are firstSeq + index; they stay below 2^53, so u64 fields are read as two u32.

import { crc32c } from './crc32c.ts';

export const FRAME_HEADER_BYTES = 40;
export const FRAME_RECORDS = 1;
export const FRAME_ROTATE = 2;
/** The frame layout this build writes, and the newest it reads: a frame of a later version is
 *  refused, never misread (the spec's Versioning: a newer format needs a newer svcd). */
export const FRAME_FORMAT_VERSION = 1;
const RECORD_FIXED_BYTES = 4 + 8 + 4 + 4;
const TWO_32 = 0x1_0000_0000;

export interface CodecHeader { name: Uint8Array; value: Uint8Array }
export interface CodecRecord { timestamp_ms: number; headers: CodecHeader[]; body: Uint8Array }
export interface DecodedRecord extends CodecRecord { seq_num: number }

export interface FrameInfo {
  kind: number;
  version: number;
  frameBytes: number;
  recordCount: number;
  streamId: string;
  firstSeq: number;
}

export function writeU64(buf: Buffer, off: number, v: number): void {
  buf.writeUInt32LE(v % TWO_32, off);
  buf.writeUInt32LE(Math.floor(v / TWO_32), off + 4);
}

export function readU64(buf: Uint8Array, off: number): number {
  const lo = buf[off] | (buf[off + 1] << 8) | (buf[off + 2] << 16) | (buf[off + 3] << 24);
  const hi = buf[off + 4] | (buf[off + 5] << 8) | (buf[off + 6] << 16) | (buf[off + 7] << 24);
  return (hi >>> 0) * TWO_32 + (lo >>> 0);
}

export function readU32(buf: Uint8Array, off: number): number {
  return (buf[off] | (buf[off + 1] << 8) | (buf[off + 2] << 16) | (buf[off + 3] << 24)) >>> 0;
}

// Content bytes as the limits count them: one definition, in the protocol leaf.
export { contentBytes } from '../../protocol/records.ts';

/** contentBytes of the record encoded at `at`, read from its lengths alone: the record's bytes after
 *  its length field, less the timestamp, header count and body length fields, and each header's two
 *  length fields. */
export function recordContentBytesAt(buf: Uint8Array, at: number): number {
  return readU32(buf, at) - 16 - 8 * readU32(buf, at + 12);
}

/** Bytes a record takes inside a frame. */
export function encodedRecordBytes(r: CodecRecord): number {
  let n = RECORD_FIXED_BYTES + r.body.length;
  for (const h of r.headers) n += 8 + h.name.length + h.value.length;
  return n;
}

/** A stream id as the 16 bytes frames carry (callers on the hot path keep this instead of the string). */
export function uuidBytes(id: string): Buffer {
  return Buffer.from(id.replace(/-/g, ''), 'hex');
}

export function uuidToBytes(id: string | Uint8Array, out: Buffer, off: number): void {
  if (typeof id === 'string') out.write(id.replace(/-/g, ''), off, 16, 'hex');
  else out.set(id, off);
}

export function bytesToUuid(buf: Uint8Array, off: number): string {
  const h = Buffer.from(buf.buffer, buf.byteOffset + off, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Encodes a batch with the given timestamps. `recordOffsets` (optional) receives each record's offset,
 *  so a batch encoded before sequencing (on a worker) can have its timestamps patched in place. */
export function encodeBatch(
  streamId: string | Uint8Array, firstSeq: number, records: readonly CodecRecord[], recordOffsets?: Uint32Array,
  alloc: (bytes: number) => Buffer = Buffer.allocUnsafe,
): Buffer {
  let size = FRAME_HEADER_BYTES;
  for (const r of records) size += encodedRecordBytes(r);
  const buf = alloc(size);
  buf.writeUInt32LE(size, 0);
  buf.writeUInt32LE(0, 4);
  buf.writeUInt32LE(FRAME_RECORDS | (FRAME_FORMAT_VERSION << 8), 8); // kind, version, reserved bytes zeroed
  buf.writeUInt32LE(records.length, 12);
  uuidToBytes(streamId, buf, 16);
  writeU64(buf, 32, firstSeq);
  let off = FRAME_HEADER_BYTES;
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    const start = off;
    if (recordOffsets) recordOffsets[i] = start;
    off += 4;
    writeU64(buf, off, r.timestamp_ms);
    off += 8;
    buf.writeUInt32LE(r.headers.length, off);
    off += 4;
    for (const h of r.headers) {
      buf.writeUInt32LE(h.name.length, off);
      buf.set(h.name, off + 4);
      off += 4 + h.name.length;
      buf.writeUInt32LE(h.value.length, off);
      buf.set(h.value, off + 4);
      off += 4 + h.value.length;
    }
    buf.writeUInt32LE(r.body.length, off);
    buf.set(r.body, off + 4);
    off += 4 + r.body.length;
    buf.writeUInt32LE(off - start - 4, start);
  }
  return buf;
}

/** Stamps a pre-encoded batch with its stream, first seq_num and per-record timestamps. */
export function patchBatch(frame: Buffer, streamId: string | Uint8Array, firstSeq: number, recordOffsets: Uint32Array, stamps: readonly number[]): void {
  uuidToBytes(streamId, frame, 16);
  writeU64(frame, 32, firstSeq);
  for (let i = 0; i < stamps.length; i++) writeU64(frame, recordOffsets[i] + 4, stamps[i]);
}

/** A control frame that tells the flusher to seal the current WAL file and open the next. */
export function encodeRotate(): Buffer {
  const buf = Buffer.alloc(FRAME_HEADER_BYTES);
  buf.writeUInt32LE(FRAME_HEADER_BYTES, 0);
  buf.writeUInt8(FRAME_ROTATE, 8);
  buf.writeUInt8(FRAME_FORMAT_VERSION, 9);
  return buf;
}

export function frameInfo(buf: Uint8Array, off = 0): FrameInfo {
  return {
    frameBytes: readU32(buf, off),
    kind: buf[off + 8],
    version: buf[off + 9],
    recordCount: readU32(buf, off + 12),
    streamId: bytesToUuid(buf, off + 16),
    firstSeq: readU64(buf, off + 32),
  };
}

export function sealFrame(buf: Uint8Array, off: number, frameBytes: number): void {
  const crc = crc32c(buf, off + 8, off + frameBytes);
  buf[off + 4] = crc & 0xff;
  buf[off + 5] = (crc >>> 8) & 0xff;
  buf[off + 6] = (crc >>> 16) & 0xff;
  buf[off + 7] = crc >>> 24;
}

export function frameIsIntact(buf: Uint8Array, off: number, available: number): boolean {
  if (available < FRAME_HEADER_BYTES) return false;
  const n = readU32(buf, off);
  if (n < FRAME_HEADER_BYTES || n > available) return false;
  return readU32(buf, off + 4) === crc32c(buf, off + 8, off + n);
}

/** Visits the records of a frame from index `from`, stopping when `visit` returns false. No copies:
 *  header and body views alias `buf`. */
export function forEachRecord(
  buf: Uint8Array, off: number, from: number,
  visit: (rec: DecodedRecord, content: number) => boolean,
): void {
  const count = readU32(buf, off + 12);
  const firstSeq = readU64(buf, off + 32);
  let p = off + FRAME_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    const recBytes = readU32(buf, p);
    if (i < from) { p += 4 + recBytes; continue; }
    let q = p + 4;
    const ts = readU64(buf, q);
    q += 8;
    const hc = readU32(buf, q);
    q += 4;
    const headers: CodecHeader[] = [];
    let content = 0;
    for (let h = 0; h < hc; h++) {
      const nl = readU32(buf, q);
      const name = buf.subarray(q + 4, q + 4 + nl);
      q += 4 + nl;
      const vl = readU32(buf, q);
      const value = buf.subarray(q + 4, q + 4 + vl);
      q += 4 + vl;
      headers.push({ name, value });
      content += nl + vl;
    }
    const bl = readU32(buf, q);
    const body = buf.subarray(q + 4, q + 4 + bl);
    content += bl;
    p += 4 + recBytes;
    if (!visit({ seq_num: firstSeq + i, timestamp_ms: ts, headers, body }, content)) return;
  }
}

/** How many of a frame's newest records fit in `roomBytes` of content (as contentBytes counts it),
 *  and their bytes (for retention by bytes, on the one batch that crosses the bound). */
export function newestRecordsFitting(buf: Uint8Array, off: number, roomBytes: number): { kept: number; bytes: number } {
  const sizes: number[] = [];
  forEachRecord(buf, off, 0, (_rec, content) => { sizes.push(content); return true; });
  let kept = 0;
  let bytes = 0;
  for (let i = sizes.length - 1; i >= 0 && bytes + sizes[i] <= roomBytes; i--) {
    bytes += sizes[i];
    kept++;
  }
  return { kept, bytes };
}

/** Timestamps of every record of a frame, in order (for time lookups and retention). */
export function frameTimestamps(buf: Uint8Array, off = 0): number[] {
  const out: number[] = [];
  const count = readU32(buf, off + 12);
  let p = off + FRAME_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    out.push(readU64(buf, p + 4));
    p += 4 + readU32(buf, p);
  }
  return out;
}
