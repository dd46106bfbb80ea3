// How a DS stream is laid out as svcd records. Every record carries a `ds` header naming its kind:
//   meta  — the first record (seq 0): content type, TTL or Expires-At, creation time. Written in the
//           same batch as a PUT's initial body, so a stream is never seen half-created.
//   data  — one message: the bytes of a byte/text stream (an append over DS_RECORD_CHUNK_BYTES_MAX is
//           cut into several data records of one batch) or one JSON value of a JSON stream.
//   close — the stream is closed; nothing may follow. Rides in the same batch as a final append.
//   pad   — a fork's stand-in for a record of its source that is not data (the source's meta or
//           close), so the fork keeps its source's seq_nums and therefore its offsets (fork.ts).
//   ref   — a fork of this stream was made (`ds-ref: +1`) or deleted (`-1`); `ds-child` names it.
//   gone  — the stream was deleted while forks of it lived: it answers 410 until the last goes.
// A data record that continues the append before it (the second and later message or chunk of one
// batch) carries `ds-cont`, so an append's extent is known again when a fork cuts one at a sub-offset.
// The last record of an append's batch also carries the producer tuple (`ds-pid`, `ds-pe`, `ds-ps`)
// and the writer's Stream-Seq (`ds-ss`), so the dedup state commits in the same durable write as the
// data it deduplicates; the state is rebuilt from these headers after a restart. Records without a
// `ds` header (written through svcd's own API) read as data.

import type { Header, RecordInput, SequencedRecord } from '../../protocol/records.ts';

export type RecordKind = 'meta' | 'data' | 'close' | 'pad' | 'ref' | 'gone';

export interface DsMeta {
  /** The content type as the creator sent it (answered back verbatim). */
  contentType: string;
  /** Stream-TTL in seconds (sliding: from the last read or write). */
  ttlSeconds?: number;
  /** Stream-Expires-At as the creator sent it, and its instant. */
  expiresAt?: string;
  expiresAtMs?: number;
  createdAtMs: number;
  /** A fork: its source's path, the Stream-Fork-Offset asked ('' for the source's tail) and the
   *  sub-offset (0 for none), kept so a repeated PUT is recognised as the same fork. */
  fork?: { from: string; offset: string; sub: number };
}

export interface ProducerTuple {
  id: string;
  epoch: number;
  seq: number;
}

const enc = new TextEncoder();
const dec = new TextDecoder();
const h = (name: string, value: string): Header => ({ name: enc.encode(name), value: enc.encode(value) });

export function headerOf(r: SequencedRecord, name: string): string | undefined {
  for (const x of r.headers) {
    if (x.name.length === name.length && dec.decode(x.name) === name) return dec.decode(x.value);
  }
  return undefined;
}

export function kindOf(r: SequencedRecord): RecordKind {
  const k = headerOf(r, 'ds');
  return k === 'meta' || k === 'close' || k === 'pad' || k === 'ref' || k === 'gone' ? k : 'data';
}

export function metaRecord(m: DsMeta): RecordInput {
  const headers = [h('ds', 'meta'), h('ds-ct', m.contentType), h('ds-created', String(m.createdAtMs))];
  if (m.ttlSeconds !== undefined) headers.push(h('ds-ttl', String(m.ttlSeconds)));
  if (m.expiresAt !== undefined) headers.push(h('ds-exp', m.expiresAt));
  if (m.fork) headers.push(h('ds-fork-from', m.fork.from), h('ds-fork-offset', m.fork.offset), h('ds-fork-sub', String(m.fork.sub)));
  return { headers, body: new Uint8Array(0) };
}

export function parseMeta(r: SequencedRecord): DsMeta | undefined {
  if (kindOf(r) !== 'meta') return undefined;
  const m: DsMeta = { contentType: headerOf(r, 'ds-ct') ?? 'application/octet-stream', createdAtMs: Number(headerOf(r, 'ds-created') ?? 0) };
  const ttl = headerOf(r, 'ds-ttl');
  if (ttl !== undefined) m.ttlSeconds = Number(ttl);
  const exp = headerOf(r, 'ds-exp');
  if (exp !== undefined) { m.expiresAt = exp; m.expiresAtMs = Date.parse(exp); }
  const from = headerOf(r, 'ds-fork-from');
  if (from !== undefined) m.fork = { from, offset: headerOf(r, 'ds-fork-offset') ?? '', sub: Number(headerOf(r, 'ds-fork-sub') ?? 0) };
  return m;
}

export function dataRecord(body: Uint8Array, continues = false): RecordInput {
  return { headers: continues ? [h('ds', 'data'), h('ds-cont', '1')] : [h('ds', 'data')], body };
}

export const continuesAppend = (r: SequencedRecord): boolean => headerOf(r, 'ds-cont') !== undefined;

export function padRecord(): RecordInput {
  return { headers: [h('ds', 'pad')], body: new Uint8Array(0) };
}

export function closeRecord(): RecordInput {
  return { headers: [h('ds', 'close')], body: new Uint8Array(0) };
}

/** Stamps the batch's last record with the producer tuple and Stream-Seq (see the file comment). */
export function stampLast(batch: RecordInput[], producer: ProducerTuple | undefined, streamSeq: string | undefined): void {
  const last = batch[batch.length - 1];
  if (producer) last.headers.push(h('ds-pid', producer.id), h('ds-pe', String(producer.epoch)), h('ds-ps', String(producer.seq)));
  if (streamSeq !== undefined) last.headers.push(h('ds-ss', streamSeq));
}

export function producerOf(r: SequencedRecord): ProducerTuple | undefined {
  const id = headerOf(r, 'ds-pid');
  if (id === undefined) return undefined;
  return { id, epoch: Number(headerOf(r, 'ds-pe')), seq: Number(headerOf(r, 'ds-ps')) };
}

export const streamSeqOf = (r: SequencedRecord): string | undefined => headerOf(r, 'ds-ss');

export function refRecord(child: string, delta: 1 | -1): RecordInput {
  return { headers: [h('ds', 'ref'), h('ds-child', child), h('ds-ref', delta > 0 ? '+1' : '-1')], body: new Uint8Array(0) };
}

export function refOf(r: SequencedRecord): { child: string; delta: 1 | -1 } | undefined {
  const child = headerOf(r, 'ds-child');
  return child === undefined ? undefined : { child, delta: headerOf(r, 'ds-ref') === '-1' ? -1 : 1 };
}

export function goneRecord(): RecordInput {
  return { headers: [h('ds', 'gone')], body: new Uint8Array(0) };
}
