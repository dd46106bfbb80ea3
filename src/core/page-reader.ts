// Reads pages of committed records for one stream: from settled segments through the object store
// (footer index cached), or from the in-memory batches not yet settled. A page never spans the
// settled frontier.

import { forEachRecord, frameTimestamps, newestRecordsFitting } from '../storage/format/record-codec.ts';
import type { ObjectStore } from '../storage/objects/object-store.ts';
import { SegmentFooter } from '../storage/segments/segment-format.ts';
import type { SegmentMeta } from '../storage/metadata/metadata-store.ts';
import type { StreamState } from './stream-state.ts';
import type { SequencedRecord } from './types.ts';
import { ServiceError } from './errors.ts';
import { READ_HEADER_METER_BYTES, READ_PAGE_HEADERS_MAX } from '../config/limits.ts';

/** Footers kept in memory (one per recently read segment), and the bytes they may hold together:
 *  one WAL file's worth of small appends makes a footer of about 18 MB. */
const FOOTER_CACHE_ENTRIES_MAX = 4096;
const FOOTER_CACHE_BYTES_MAX = 64 * 1024 * 1024;

/** One settled read asks the object store for at most this many bytes at once. */
const SETTLED_READ_SPAN_BYTES_MAX = 4 * 1024 * 1024;

/** End (exclusive) of the run of footer entries from `from` that a page still wanting `records`
 *  records and `contentBytes` bytes from `seq` on can use: at least one entry, then entries while
 *  the page could still want them and the run stays within SETTLED_READ_SPAN_BYTES_MAX. Frame bytes
 *  exceed content bytes, so a run never holds much more than the page takes; when it holds less,
 *  the next run carries on. */
function spanOf(f: SegmentFooter, from: number, seq: number, records: number, contentBytes: number): number {
  const start = f.offset(from);
  let wantedRecords = f.endSeq(from) - seq;
  let frameBytes = f.frameBytes(from);
  let end = from + 1;
  while (end < f.length && wantedRecords < records && frameBytes < contentBytes) {
    if (f.offset(end) + f.frameBytes(end) - start > SETTLED_READ_SPAN_BYTES_MAX) break;
    wantedRecords += f.recordCount(end);
    frameBytes += f.frameBytes(end);
    end += 1;
  }
  return end;
}

export interface PageLimits {
  limit: number;
  maxBytes: number;
  untilMs?: number;
}

export class PageReader {
  private readonly footers = new Map<string, SegmentFooter>();
  private footerBytes = 0;
  /** Retention by bytes: where the last cut inside a segment fell, for the room it was given. A
   *  segment's records never change, so the sweep (every second) reads its frames again only when
   *  newer records changed the room left for it. Emptied when it reaches FOOTER_CACHE_ENTRIES_MAX. */
  private readonly retentionCuts = new Map<string, { roomBytes: number; watermark: number }>();

  constructor(private readonly objects: ObjectStore) {}

  private async footer(seg: SegmentMeta): Promise<SegmentFooter> {
    const hit = this.footers.get(seg.object_key);
    if (hit) return hit;
    const buf = await this.objects.get(seg.object_key, { offset: seg.footer_offset, length: seg.footer_bytes });
    const footer = SegmentFooter.read(buf);
    this.dropFooter(seg.object_key); // a concurrent read may have cached it meanwhile
    while (this.footers.size > 0 && (this.footers.size >= FOOTER_CACHE_ENTRIES_MAX || this.footerBytes + footer.byteLength > FOOTER_CACHE_BYTES_MAX)) {
      const oldest = this.footers.keys().next().value!;
      this.dropFooter(oldest);
    }
    this.footers.set(seg.object_key, footer);
    this.footerBytes += footer.byteLength;
    return footer;
  }

  private dropFooter(objectKey: string): void {
    const f = this.footers.get(objectKey);
    if (!f) return;
    this.footers.delete(objectKey);
    this.footerBytes -= f.byteLength;
  }

  forget(objectKey: string): void {
    this.dropFooter(objectKey);
    this.retentionCuts.delete(objectKey);
  }

  /** An object read that may race a trim, a retention pass or a delete removing the segment: the
   *  page stops short with what it has, or, with nothing yet, answers as the stream now stands. An
   *  object missing while the stream still names it is damage, not a trim: an internal error naming
   *  the object (logged as a bug; a client would retry a 410 or 404 forever and never learn why). */
  private async readOrGone<T>(st: StreamState, sofar: readonly SequencedRecord[], objectKey: string, seq: number, read: () => Promise<T>): Promise<T | undefined> {
    try {
      return await read();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      const released = st.deleted || seq < st.trimSeq || !st.meta.segments.some((x) => x.object_key === objectKey);
      if (!released) {
        throw new ServiceError('internal', `segment object ${objectKey} of stream ${st.streamId} (records from ${seq}) is missing from the object store`);
      }
      if (sofar.length > 0) return undefined;
      if (st.deleted) throw new ServiceError('not_found', 'the stream was deleted');
      throw new ServiceError('trimmed', `records below ${st.trimSeq} were trimmed`);
    }
  }

  /** Records from `start` (which must be within [trim, tail)). */
  async page(st: StreamState, start: number, lim: PageLimits): Promise<SequencedRecord[]> {
    const out: SequencedRecord[] = [];
    let bytes = 0;
    let headers = 0;
    let done = false;
    // Collects one record; false ends the page. Its bytes are its content and its headers' metered
    // framing (READ_HEADER_METER_BYTES, READ_PAGE_HEADERS_MAX).
    const take = (r: SequencedRecord, content: number): boolean => {
      if (lim.untilMs !== undefined && r.timestamp_ms >= lim.untilMs) { done = true; return false; }
      const n = r.headers.length;
      const metered = content + n * READ_HEADER_METER_BYTES;
      if (out.length > 0 && (bytes + metered > lim.maxBytes || headers + n > READ_PAGE_HEADERS_MAX)) { done = true; return false; }
      out.push(r);
      bytes += metered;
      headers += n;
      if (out.length >= lim.limit || bytes >= lim.maxBytes || headers >= READ_PAGE_HEADERS_MAX) { done = true; return false; }
      return true;
    };
    let seq = start;
    if (seq < st.settledEnd) {
      // Trim and retention swap in a new segment array while this read awaits I/O: walk the one
      // that was current when the read began, and stop short if the records ahead go away.
      const segs = st.meta.segments;
      let si = segs.findIndex((x) => seq >= x.first_seq && seq < x.end_seq);
      while (!done && si >= 0 && si < segs.length) {
        const seg = segs[si];
        const footer = await this.readOrGone(st, out, seg.object_key, seq, () => this.footer(seg));
        if (!footer) return out;
        let ei = footer.indexAfterSeq(seq);
        while (!done && ei < footer.length) {
          // One ranged GET for the run of frames this page can still use (on S3 each GET is a round
          // trip; reading them one by one made a 1,000-record page 1,000 requests).
          const span = spanOf(footer, ei, seq, lim.limit - out.length, lim.maxBytes - bytes);
          const first = footer.offset(ei);
          const spanEnd = footer.offset(span - 1) + footer.frameBytes(span - 1);
          const buf = await this.readOrGone(st, out, seg.object_key, seq, () => this.objects.get(seg.object_key, { offset: first, length: spanEnd - first }));
          if (!buf || seq < st.trimSeq) return out;
          for (; ei < span && !done; ei++) {
            const at = footer.offset(ei) - first;
            const frame = buf.subarray(at, at + footer.frameBytes(ei));
            forEachRecord(frame, 0, seq - footer.firstSeq(ei), (r, c) => {
              if (!take(r, c)) return false;
              seq = r.seq_num + 1;
              return true;
            });
          }
        }
        si += 1;
      }
      return out; // never across the settled frontier
    }
    let mi = st.memIndexOf(seq);
    while (!done && mi >= 0 && mi < st.mem.length) {
      const b = st.mem[mi];
      forEachRecord(b.frame, 0, seq - b.firstSeq, (r, c) => {
        if (!take(r, c)) return false;
        seq = r.seq_num + 1;
        return true;
      });
      mi += 1;
    }
    return out;
  }

  /** First seq_num whose record is stamped at or after `ts` (the tail when none is). Timestamps
   *  never go backwards within a stream, so this is a search, not a scan. */
  async seqAtOrAfter(st: StreamState, ts: number, retried = false): Promise<number> {
    try {
      return await this.seqAtOrAfterOnce(st, ts);
    } catch (err) {
      // A segment trimmed away under the lookup: the answer now lies in what remains.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' && !retried) return this.seqAtOrAfter(st, ts, true);
      throw err;
    }
  }

  private async seqAtOrAfterOnce(st: StreamState, ts: number): Promise<number> {
    for (const seg of st.meta.segments) {
      if (seg.end_seq <= st.trimSeq || seg.max_ts < ts) continue;
      const f = await this.footer(seg);
      // The first frame both stamped at or after ts and reaching past the trim point holds the answer.
      for (let ei = Math.max(f.indexReachingTs(ts), f.indexAfterSeq(st.trimSeq)); ei < f.length; ei++) {
        const firstSeq = f.firstSeq(ei);
        const frame = await this.objects.get(seg.object_key, { offset: f.offset(ei), length: f.frameBytes(ei) });
        const i = frameTimestamps(frame).findIndex((t, idx) => t >= ts && firstSeq + idx >= st.trimSeq);
        if (i >= 0) return firstSeq + i;
      }
    }
    for (const b of st.mem) {
      if (b.maxTs < ts || b.firstSeq + b.count <= st.trimSeq) continue;
      const i = frameTimestamps(b.frame).findIndex((t, idx) => t >= ts && b.firstSeq + idx >= st.trimSeq);
      if (i >= 0) return b.firstSeq + i;
    }
    return st.tail;
  }

  /** Smallest watermark that leaves at most `maxBytes` of content retained: the newest records whose
   *  content fits, counted record by record (a batch or segment that crosses the bound keeps its
   *  newest records that fit; cutting whole batches lost every record of a batch bigger than the
   *  bound). Whole batches and segments are summed from their totals; only the one that crosses the
   *  bound is read, and in a segment only its frames from the newest back to the crossing. */
  async watermarkForBytes(st: StreamState, maxBytes: number): Promise<number> {
    let total = 0;
    for (let i = st.mem.length - 1; i >= 0; i--) {
      const b = st.mem[i];
      if (total + b.contentBytes <= maxBytes) { total += b.contentBytes; continue; }
      return b.firstSeq + b.count - newestRecordsFitting(b.frame, 0, maxBytes - total).kept;
    }
    for (let i = st.meta.segments.length - 1; i >= 0; i--) {
      const s = st.meta.segments[i];
      if (total + s.content_bytes <= maxBytes) { total += s.content_bytes; continue; }
      const cut = this.retentionCuts.get(s.object_key);
      if (cut && cut.roomBytes === maxBytes - total) return cut.watermark;
      const watermark = await this.cutInSegment(s, maxBytes - total);
      if (this.retentionCuts.size >= FOOTER_CACHE_ENTRIES_MAX) this.retentionCuts.clear();
      this.retentionCuts.set(s.object_key, { roomBytes: maxBytes - total, watermark });
      return watermark;
    }
    return st.trimSeq;
  }

  /** The watermark inside segment `seg` that keeps its newest records fitting `roomBytes`. */
  private async cutInSegment(seg: SegmentMeta, roomBytes: number): Promise<number> {
    const f = await this.footer(seg);
    let room = roomBytes;
    for (let i = f.length - 1; i >= 0; i--) {
      const frame = await this.objects.get(seg.object_key, { offset: f.offset(i), length: f.frameBytes(i) });
      const { kept, bytes } = newestRecordsFitting(frame, 0, room);
      if (kept < f.recordCount(i)) return f.endSeq(i) - kept;
      room -= bytes;
    }
    return f.length > 0 ? f.firstSeq(0) : seg.end_seq;
  }
}
