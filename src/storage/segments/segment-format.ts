// A settled segment: one stream's batch frames back to back, then a footer index, then a trailer.
//   footer entry (40 bytes): u64 firstSeq · u32 recordCount · u32 frameBytes · u64 offset · u64 minTs · u64 maxTs
//   trailer (16 bytes): u32 entryCount · u32 footerCrc32c · u32 version · u32 magic
//   (version 0: written before segments carried one; same layout)
// The footer lets a reader (this star, another star, or a ReadPlan consumer) find a seq_num or a time
// with one ranged GET.

import { crc32c } from '../format/crc32c.ts';
import { FRAME_HEADER_BYTES, frameIsIntact, readU32, readU64, recordContentBytesAt, sealFrame, writeU64 } from '../format/record-codec.ts';

export const SEGMENT_MAGIC = 0x47535653; // 'SVSG'
export const FOOTER_ENTRY_BYTES = 40;
export const TRAILER_BYTES = 16;
/** The segment layout this build writes, and the newest it reads. */
export const SEGMENT_FORMAT_VERSION = 1;

export interface FooterEntry {
  firstSeq: number;
  recordCount: number;
  frameBytes: number;
  offset: number;
  minTs: number;
  maxTs: number;
}

export interface BuiltSegment {
  bytes: Buffer;
  footerOffset: number;
  footerBytes: number;
  /** The records it holds: [firstSeq, endSeq), stamped minTs to maxTs. */
  firstSeq: number;
  endSeq: number;
  minTs: number;
  maxTs: number;
  /** Their content (bodies, header names and values), as retention counts it. */
  contentBytes: number;
}

/** Appends the footer to the frames, sealing each frame's checksum unless the frames come already
 *  sealed and verified (from the WAL), which saves a pass over every byte. One pass, reading each
 *  record's length and timestamp in place: a WAL file's worth of 100 B appends (400,000 frames) took
 *  about 1.2 s of the settle thread when every frame was decoded into objects, twice. */
export function buildSegment(frames: readonly Uint8Array[], alreadySealed = false): BuiltSegment {
  let framesBytes = 0;
  for (const f of frames) framesBytes += f.length;
  const footerBytes = frames.length * FOOTER_ENTRY_BYTES + TRAILER_BYTES;
  const out = Buffer.allocUnsafe(framesBytes + footerBytes);
  const built: BuiltSegment = { bytes: out, footerOffset: framesBytes, footerBytes, firstSeq: 0, endSeq: 0, minTs: 0, maxTs: 0, contentBytes: 0 };
  let p = 0; // where the next frame goes
  let e = framesBytes; // where its footer entry goes
  for (let i = 0; i < frames.length; i++) {
    const f = frames[i];
    out.set(f, p);
    if (!alreadySealed) sealFrame(out, p, f.length);
    const count = readU32(out, p + 12);
    const firstSeq = readU64(out, p + 32);
    let r = p + FRAME_HEADER_BYTES;
    let minTs = 0;
    let maxTs = 0;
    for (let k = 0; k < count; k++) {
      maxTs = readU64(out, r + 4);
      if (k === 0) minTs = maxTs;
      built.contentBytes += recordContentBytesAt(out, r);
      r += 4 + readU32(out, r);
    }
    if (i === 0) { built.firstSeq = firstSeq; built.minTs = minTs; }
    built.endSeq = firstSeq + count;
    built.maxTs = maxTs;
    writeU64(out, e, firstSeq);
    out.writeUInt32LE(count, e + 8);
    out.writeUInt32LE(f.length, e + 12);
    writeU64(out, e + 16, p);
    writeU64(out, e + 24, minTs);
    writeU64(out, e + 32, maxTs);
    p += f.length;
    e += FOOTER_ENTRY_BYTES;
  }
  out.writeUInt32LE(frames.length, e);
  out.writeUInt32LE(crc32c(out, framesBytes, e), e + 4);
  out.writeUInt32LE(SEGMENT_FORMAT_VERSION, e + 8);
  out.writeUInt32LE(SEGMENT_MAGIC, e + 12);
  return built;
}

/** A segment's footer index as fetched: its entries read in place, never unpacked into objects. A
 *  WAL file's worth of 100 B appends is one segment of about 450,000 entries: unpacking them took
 *  67-250 ms of the event loop and about 60 MB kept, and finding a seq_num scanned them all per page. */
export class SegmentFooter {
  /** Entries in the footer. */
  readonly length: number;
  /** Bytes the footer holds (what a cache of footers counts). */
  readonly byteLength: number;

  private constructor(private readonly buf: Uint8Array, n: number) {
    this.length = n;
    this.byteLength = buf.length;
  }

  /** Checks a footer fetched as [footerOffset, footerOffset + footerBytes): trailer magic, length,
   *  checksum and version. Throws what is wrong. */
  static read(buf: Uint8Array): SegmentFooter {
    const t = buf.length - TRAILER_BYTES;
    if (t < 0 || readU32(buf, t + 12) !== SEGMENT_MAGIC) throw new Error('segment footer: bad magic');
    const n = readU32(buf, t);
    if (n * FOOTER_ENTRY_BYTES !== t) throw new Error('segment footer: bad length');
    if (readU32(buf, t + 4) !== crc32c(buf, 0, t)) throw new Error('segment footer: bad checksum');
    const version = readU32(buf, t + 8);
    if (version > SEGMENT_FORMAT_VERSION) {
      throw new Error(`segment of format version ${version}, newer than this build's ${SEGMENT_FORMAT_VERSION}: a newer svcd wrote it`);
    }
    return new SegmentFooter(buf, n);
  }

  firstSeq(i: number): number { return readU64(this.buf, i * FOOTER_ENTRY_BYTES); }
  recordCount(i: number): number { return readU32(this.buf, i * FOOTER_ENTRY_BYTES + 8); }
  frameBytes(i: number): number { return readU32(this.buf, i * FOOTER_ENTRY_BYTES + 12); }
  offset(i: number): number { return readU64(this.buf, i * FOOTER_ENTRY_BYTES + 16); }
  minTs(i: number): number { return readU64(this.buf, i * FOOTER_ENTRY_BYTES + 24); }
  maxTs(i: number): number { return readU64(this.buf, i * FOOTER_ENTRY_BYTES + 32); }
  endSeq(i: number): number { return this.firstSeq(i) + this.recordCount(i); }

  /** The first entry whose records reach past `seq` (length when none does). Entries are in seq
   *  order, so this is a binary search. */
  indexAfterSeq(seq: number): number {
    return this.firstIndexWhere((i) => this.endSeq(i) > seq);
  }

  /** The first entry whose newest record is stamped at or after `ts` (length when none is).
   *  Timestamps never go backwards within a stream, so this is a binary search too. */
  indexReachingTs(ts: number): number {
    return this.firstIndexWhere((i) => this.maxTs(i) >= ts);
  }

  /** The first entry `holds` is true of, for a `holds` false up to some entry and true from it on. */
  private firstIndexWhere(holds: (i: number) => boolean): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (holds(mid)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  entry(i: number): FooterEntry {
    return { firstSeq: this.firstSeq(i), recordCount: this.recordCount(i), frameBytes: this.frameBytes(i), offset: this.offset(i), minTs: this.minTs(i), maxTs: this.maxTs(i) };
  }
}

/** Every entry of a footer as an object (tests and tools that decode a segment themselves; the star
 *  reads through SegmentFooter). */
export function parseFooter(buf: Uint8Array): FooterEntry[] {
  const f = SegmentFooter.read(buf);
  return Array.from({ length: f.length }, (_, i) => f.entry(i));
}

/** What is wrong with a settled segment's bytes as fetched whole, or undefined when nothing is: its
 *  length against the row's, its footer (magic, checksum, version), and every frame's checksum. */
export function segmentFault(bytes: Uint8Array, seg: { size_bytes: number; footer_offset: number; footer_bytes: number }): string | undefined {
  if (bytes.length !== seg.size_bytes) return `length ${bytes.length}, the row says ${seg.size_bytes}`;
  let footer: SegmentFooter;
  try {
    footer = SegmentFooter.read(bytes.subarray(seg.footer_offset, seg.footer_offset + seg.footer_bytes));
  } catch (err) {
    return (err as Error).message;
  }
  for (let i = 0; i < footer.length; i++) {
    const offset = footer.offset(i);
    const frameBytes = footer.frameBytes(i);
    if (offset + frameBytes > seg.footer_offset || !frameIsIntact(bytes, offset, frameBytes)) {
      return `frame at ${offset} (records from ${footer.firstSeq(i)}) fails its checksum`;
    }
  }
  return undefined;
}
