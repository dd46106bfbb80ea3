// Reads pages of committed records for one stream: from settled segments through the object store
// (footer index cached), or from the in-memory batches not yet settled. A page never spans the
// settled frontier.

import { forEachRecord, frameTimestamps, newestRecordsFitting } from '../storage/format/record-codec.ts';
import type { ObjectStore } from '../storage/objects/object-store.ts';
import { parseFooter, type FooterEntry } from '../storage/segments/segment-format.ts';
import type { SegmentMeta } from '../storage/metadata/metadata-store.ts';
import type { StreamState } from './stream-state.ts';
import type { SequencedRecord } from './types.ts';
import { ServiceError } from './errors.ts';

/** Footers kept in memory (one per recently read segment). */
const FOOTER_CACHE_ENTRIES_MAX = 4096;

/** One settled read asks the object store for at most this many bytes at once. */
const SETTLED_READ_SPAN_BYTES_MAX = 4 * 1024 * 1024;

/** End (exclusive) of the run of footer entries from `from` that a page still wanting `records`
 *  records and `contentBytes` bytes from `seq` on can use: at least one entry, then entries while
 *  the page could still want them and the run stays within SETTLED_READ_SPAN_BYTES_MAX. Frame bytes
 *  exceed content bytes, so a run never holds much more than the page takes; when it holds less,
 *  the next run carries on. */
function spanOf(entries: readonly FooterEntry[], from: number, seq: number, records: number, contentBytes: number): number {
  const start = entries[from].offset;
  let wantedRecords = entries[from].firstSeq + entries[from].recordCount - seq;
  let frameBytes = entries[from].frameBytes;
  let end = from + 1;
  while (end < entries.length && wantedRecords < records && frameBytes < contentBytes) {
    const e = entries[end];
    if (e.offset + e.frameBytes - start > SETTLED_READ_SPAN_BYTES_MAX) break;
    wantedRecords += e.recordCount;
    frameBytes += e.frameBytes;
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
  private readonly footers = new Map<string, FooterEntry[]>();
  /** Retention by bytes: where the last cut inside a segment fell, for the room it was given. A
   *  segment's records never change, so the sweep (every second) reads its frames again only when
   *  newer records changed the room left for it. Emptied when it reaches FOOTER_CACHE_ENTRIES_MAX. */
  private readonly retentionCuts = new Map<string, { roomBytes: number; watermark: number }>();

  constructor(private readonly objects: ObjectStore) {}

  private async footer(seg: SegmentMeta): Promise<FooterEntry[]> {
    const hit = this.footers.get(seg.object_key);
    if (hit) return hit;
    const buf = await this.objects.get(seg.object_key, { offset: seg.footer_offset, length: seg.footer_bytes });
    const entries = parseFooter(buf);
    if (this.footers.size >= FOOTER_CACHE_ENTRIES_MAX) {
      const oldest = this.footers.keys().next().value;
      if (oldest !== undefined) this.footers.delete(oldest);
    }
    this.footers.set(seg.object_key, entries);
    return entries;
  }

  forget(objectKey: string): void {
    this.footers.delete(objectKey);
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
    let done = false;
    // Collects one record; false ends the page.
    const take = (r: SequencedRecord, content: number): boolean => {
      if (lim.untilMs !== undefined && r.timestamp_ms >= lim.untilMs) { done = true; return false; }
      if (out.length > 0 && bytes + content > lim.maxBytes) { done = true; return false; }
      out.push(r);
      bytes += content;
      if (out.length >= lim.limit || bytes >= lim.maxBytes) { done = true; return false; }
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
        const entries = await this.readOrGone(st, out, seg.object_key, seq, () => this.footer(seg));
        if (!entries) return out;
        let ei = entries.findIndex((e) => e.firstSeq + e.recordCount > seq);
        while (!done && ei >= 0 && ei < entries.length) {
          // One ranged GET for the run of frames this page can still use (on S3 each GET is a round
          // trip; reading them one by one made a 1,000-record page 1,000 requests).
          const span = spanOf(entries, ei, seq, lim.limit - out.length, lim.maxBytes - bytes);
          const first = entries[ei];
          const spanEnd = entries[span - 1].offset + entries[span - 1].frameBytes;
          const buf = await this.readOrGone(st, out, seg.object_key, seq, () => this.objects.get(seg.object_key, { offset: first.offset, length: spanEnd - first.offset }));
          if (!buf || seq < st.trimSeq) return out;
          for (; ei < span && !done; ei++) {
            const e = entries[ei];
            const frame = buf.subarray(e.offset - first.offset, e.offset - first.offset + e.frameBytes);
            forEachRecord(frame, 0, seq - e.firstSeq, (r, c) => {
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
      for (const e of await this.footer(seg)) {
        if (e.maxTs < ts || e.firstSeq + e.recordCount <= st.trimSeq) continue;
        const frame = await this.objects.get(seg.object_key, { offset: e.offset, length: e.frameBytes });
        const i = frameTimestamps(frame).findIndex((t, idx) => t >= ts && e.firstSeq + idx >= st.trimSeq);
        if (i >= 0) return e.firstSeq + i;
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
    const entries = await this.footer(seg);
    let room = roomBytes;
    for (let i = entries.length - 1; i >= 0; i--) {
      const e = entries[i];
      const frame = await this.objects.get(seg.object_key, { offset: e.offset, length: e.frameBytes });
      const { kept, bytes } = newestRecordsFitting(frame, 0, room);
      if (kept < e.recordCount) return e.firstSeq + e.recordCount - kept;
      room -= bytes;
    }
    return entries.length > 0 ? entries[0].firstSeq : seg.end_seq;
  }
}
