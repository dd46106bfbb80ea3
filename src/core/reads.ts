// What a read of one stream answers (spec: Read query, Read plan): where it starts (a sequence
// number, a time or an offset from the tail, held to the trim watermark and the tail: clamped, or
// refused 410 or 416), the page from there within the star's read limits, and a read plan's
// segments. It reads whichever stream state it is given (a led stream's, a vacant one's detached
// state, another leader's settled view); which one is the star's choice.

import { ServiceError } from './errors.ts';
import type { PageReader } from './page-reader.ts';
import type { PlanResult, PlanStart } from './service-api.ts';
import type { StreamState } from './stream-state.ts';
import { namedSeqText, type ReadOptions, type ReadResult, type ReadStart } from './types.ts';

export class StreamReads {
  /** `recordsMax` and `bytesMax` clamp every page (`--max-read-records`, `--max-read-bytes`). */
  constructor(private readonly reader: PageReader, private readonly recordsMax: number, private readonly bytesMax: number) {}

  /** The sequence number a start names, before the watermark and the tail are applied. */
  async resolveStart(st: StreamState, start: ReadStart): Promise<number> {
    switch (start.kind) {
      case 'seq_num': return start.value;
      // Clamped at 0 (spec: Read query); a start below the trim watermark is then 410 unless the read
      // clamps, as any start is.
      case 'tail_offset': return Math.max(0, st.tail - start.value);
      case 'timestamp_ms': return this.reader.seqAtOrAfter(st, start.value);
    }
  }

  /** Where a read starts: its start resolved, held to the trim watermark and the tail (clamped, or
   *  refused with 410 or 416). */
  async startOf(st: StreamState, opts: ReadOptions): Promise<number> {
    let seq = await this.resolveStart(st, opts.start);
    if (seq < st.trimSeq) {
      if (!opts.clamp) throw new ServiceError('trimmed', `records below ${st.trimSeq} were trimmed`);
      seq = st.trimSeq;
    }
    if (seq > st.tail) {
      if (!opts.clamp) throw new ServiceError('range_not_satisfiable', `start ${namedSeqText(seq)} is past the tail ${st.tail}`, { tail: st.tailPosition() });
      seq = st.tail;
    }
    return seq;
  }

  /** One page from `seq` (empty at the tail), with the tail as of the read. */
  async page(st: StreamState, seq: number, opts: ReadOptions): Promise<ReadResult> {
    const tail = st.tailPosition();
    if (seq >= st.tail) return { records: [], tail };
    const limit = Math.min(opts.limit > 0 ? opts.limit : this.recordsMax, this.recordsMax);
    const maxBytes = Math.min(opts.maxBytes > 0 ? opts.maxBytes : this.bytesMax, this.bytesMax);
    const records = await this.reader.page(st, seq, { limit, maxBytes, untilMs: opts.untilMs });
    return { records, tail };
  }

  async read(st: StreamState, opts: ReadOptions): Promise<ReadResult> {
    return this.page(st, await this.startOf(st, opts), opts);
  }

  /** The settled segments a plan vends from `start`, at most `maxEntries` of them. */
  plan(st: StreamState, start: PlanStart, maxEntries: number): PlanResult {
    const segs = st.meta.segments;
    let i: number;
    if (start.kind === 'seq_num') {
      if (start.value < st.trimSeq) throw new ServiceError('trimmed', `records below ${st.trimSeq} were trimmed`);
      // As a Read without clamp: a start past the tail names no record that will ever be vended there.
      if (start.value > st.tail) throw new ServiceError('range_not_satisfiable', `start ${namedSeqText(start.value)} is past the tail ${st.tail}`, { tail: st.tailPosition() });
      i = segs.findIndex((s) => s.end_seq > start.value);
      if (i < 0) return { segments: [], vended_until: Math.max(start.value, 0), more: false };
    } else {
      i = segs.findIndex((s) => s.max_ts >= start.value && s.end_seq > st.trimSeq);
      if (i < 0) return { segments: [], vended_until: undefined, more: false }; // above the settled ceiling
    }
    // A segment partly below the trim watermark is never vended: its object still holds the trimmed
    // records, and a plan hands out whole objects. Nothing is vended from where the plan starts (as
    // on an unsettled range): the consumer Reads up to the segment's end, where plans resume.
    if (segs[i].first_seq < st.trimSeq) {
      return { segments: [], vended_until: start.kind === 'seq_num' ? start.value : st.trimSeq, more: false };
    }
    const picked = segs.slice(i, i + maxEntries);
    const more = i + maxEntries < segs.length;
    return {
      segments: picked.map((s) => ({
        object_key: s.object_key, payload_bytes: s.footer_offset, footer_offset: s.footer_offset, footer_bytes: s.footer_bytes,
        first_seq: s.first_seq, end_seq: s.end_seq, min_ts: s.min_ts, max_ts: s.max_ts,
      })),
      vended_until: picked[picked.length - 1].end_seq,
      more,
    };
  }
}
