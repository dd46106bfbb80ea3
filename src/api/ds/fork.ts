// Fork: PUT with Stream-Forked-From makes a new stream holding its source's messages up to an offset
// (Stream-Fork-Offset, default the source's tail), optionally cut inside the append found there
// (Stream-Fork-Sub-Offset: bytes of a byte stream, messages of a JSON stream). The fork is a copy,
// written in ONE svcd batch with its meta record, so it is atomic and never depends on its source
// afterwards (deleting or expiring the source cannot take a fork's data with it). The copy keeps the
// source's seq_nums (non-data records become pads), so an offset means the same position in both.
// Producer state and Stream-Seq are not inherited. A copy is bounded by DS_FORK_COPY_BYTES_MAX and by
// one batch's record count; past either it is 400.

import { APPEND_RECORDS_MAX } from '../../config/limits.ts';
import type { RecordInput, SequencedRecord } from '../../protocol/records.ts';
import { isJson, mediaType } from './content.ts';
import { dsConflict, dsInvalid } from './errors.ts';
import { DS_FORK_COPY_BYTES_MAX, DS_PREFIX, DS_READ_RECORDS_MAX, DS_SCAN_PAGE_BYTES_MAX, DS_STREAM_PATH } from './limits.ts';
import { parseOffset } from './offsets.ts';
import { continuesAppend, dataRecord, kindOf, padRecord, type DsMeta } from './records.ts';
import type { DsState } from './state.ts';
import { liveState, type WriteCtx } from './write.ts';

const UINT_RE = /^(0|[1-9]\d*)$/;

export interface ForkAsk {
  /** The source's svcd key. */
  sourceKey: string;
  fork: NonNullable<DsMeta['fork']>;
}

/** The fork headers of a PUT, or undefined when it is not a fork; the sub-offset without a source,
 *  or above 0 without an offset, or malformed, is 400. */
export function parseForkAsk(header: (n: string) => string | undefined): ForkAsk | undefined {
  const from = header('stream-forked-from');
  const offset = header('stream-fork-offset');
  const subRaw = header('stream-fork-sub-offset');
  if (from === undefined) {
    if (offset !== undefined || subRaw !== undefined) throw dsInvalid('Stream-Fork-Offset and Stream-Fork-Sub-Offset need Stream-Forked-From');
    return undefined;
  }
  let sub = 0;
  if (subRaw !== undefined) {
    if (!UINT_RE.test(subRaw) || !Number.isSafeInteger(Number(subRaw))) throw dsInvalid('Stream-Fork-Sub-Offset must be a non-negative integer');
    sub = Number(subRaw);
    if (sub > 0 && offset === undefined) throw dsInvalid('Stream-Fork-Sub-Offset needs Stream-Fork-Offset');
  }
  if (offset !== undefined) parseOffset(offset);
  return { sourceKey: sourceKeyOf(from), fork: { from, offset: offset ?? '', sub } };
}

/** `/v1/stream/x`, `/ds/v1/stream/x` or a full URL naming one: the source's key. */
export function sourceKeyOf(from: string): string {
  let path = from;
  if (/^https?:\/\//i.test(path)) {
    try { path = new URL(path).pathname; } catch { throw dsInvalid('Stream-Forked-From is not a stream path'); }
  }
  if (path.startsWith(DS_PREFIX + DS_STREAM_PATH)) path = path.slice(DS_PREFIX.length);
  if (!path.startsWith(DS_STREAM_PATH) || path.length === DS_STREAM_PATH.length) throw dsInvalid('Stream-Forked-From is not a stream path');
  return path.slice(DS_STREAM_PATH.length);
}

/** The fork's meta: content type and TTL inherited unless given; a different content type is 409. */
export function forkMeta(c: WriteCtx, source: DsState, ask: ForkAsk, own: DsMeta): DsMeta {
  const src = source.meta!;
  const ctGiven = c.header('content-type');
  if (ctGiven !== undefined && ctGiven.trim() !== '' && mediaType(ctGiven) !== mediaType(src.contentType)) {
    throw dsConflict(`the source's content type is ${src.contentType}`);
  }
  const meta: DsMeta = { ...own, contentType: ctGiven !== undefined && ctGiven.trim() !== '' ? own.contentType : src.contentType, fork: ask.fork };
  if (own.ttlSeconds === undefined && own.expiresAt === undefined) {
    if (src.ttlSeconds !== undefined) meta.ttlSeconds = src.ttlSeconds;
    if (src.expiresAt !== undefined) { meta.expiresAt = src.expiresAt; meta.expiresAtMs = src.expiresAtMs; }
  }
  return meta;
}

/** The records a fork starts with after its meta record (seq 1 onwards), copied from the source. */
export async function forkRecords(c: WriteCtx, ask: ForkAsk, contentType: string): Promise<RecordInput[]> {
  const source = await liveState(c.svc, c.states, ask.sourceKey, c.nowMs);
  const o = ask.fork.offset === '' ? { kind: 'now' as const } : parseOffset(ask.fork.offset);
  const forkSeq = o.kind === 'start' ? 0 : o.kind === 'now' ? source.tail : o.seq;
  if (forkSeq > source.tail) throw dsInvalid('Stream-Fork-Offset is past the end of the source');
  const out: RecordInput[] = [];
  let bytes = 0;
  const keep = (r: RecordInput): void => {
    bytes += r.body.length;
    if (bytes > DS_FORK_COPY_BYTES_MAX || out.length + 2 > APPEND_RECORDS_MAX) throw dsInvalid(`a fork copies at most ${DS_FORK_COPY_BYTES_MAX} bytes in ${APPEND_RECORDS_MAX - 1} records`);
    out.push(r);
  };
  const copy = (r: SequencedRecord): RecordInput => (kindOf(r) === 'data' ? dataRecord(r.body, continuesAppend(r)) : padRecord());
  // Seq 0 is the source's meta record: the fork's own meta takes its place.
  let next = 1;
  // The append a sub-offset cuts: its first record's seq, once found at or after forkSeq.
  let cutAt: number | undefined;
  let remaining = ask.fork.sub;
  scan: while (next < source.tail) {
    const page = await c.svc.read(c.states.bucket, ask.sourceKey, { start: { kind: 'seq_num', value: next }, limit: DS_READ_RECORDS_MAX, maxBytes: DS_SCAN_PAGE_BYTES_MAX, clamp: false });
    if (page.records.length === 0) break;
    for (const r of page.records) {
      next = r.seq_num + 1;
      if (r.seq_num < forkSeq) { keep(copy(r)); continue; }
      if (ask.fork.sub === 0) break scan;
      const isData = kindOf(r) === 'data';
      if (cutAt === undefined) {
        if (!isData || continuesAppend(r)) { keep(padRecord()); continue; }
        cutAt = r.seq_num;
      } else if (!isData || !continuesAppend(r)) break scan;
      // Inside the cut append: whole messages (JSON) or bytes (anything else) until the sub-offset.
      if (remaining === 0) break scan;
      if (isJson(contentType)) { keep(dataRecord(r.body, r.seq_num !== cutAt)); remaining--; }
      else {
        const take = Math.min(remaining, r.body.length);
        keep(dataRecord(r.body.subarray(0, take), r.seq_num !== cutAt));
        remaining -= take;
      }
    }
  }
  if (ask.fork.sub > 0 && (cutAt === undefined || remaining > 0)) throw dsInvalid('Stream-Fork-Sub-Offset is past the end of the append at Stream-Fork-Offset');
  return out;
}
