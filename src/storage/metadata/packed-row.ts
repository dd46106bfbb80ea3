// A stream row packed into one string, as the local store and a star hold the rows of streams at
// rest. As objects, a row with one segment took about 0.8 KiB of heap in a dozen objects and heap
// numbers; packed it is one flat string of about 200 bytes, and a snapshot of a million of them
// loads without building a million object graphs (issue 13: 1,000,000 streams on one star).
//
// The form is a JSON array, its fields by position. Bucket and key are not in it: whoever holds a
// packed row holds it under its address. The config is the array of its values in
// STREAM_CONFIG_KEYS order when it has exactly those keys (else the object as it is; that list only
// grows at its end, so stored arrays keep their meaning), and a
// segment's object key is left out when it is the one segmentKey() gives its range.

import { STREAM_CONFIG_KEYS } from '../../protocol/resources.ts';
import { segmentKey } from '../segments/segment-key.ts';
import type { SegmentMeta, StreamMeta } from './metadata-store.ts';

/** A StreamMeta without its bucket and key, packed (see the top of this file). */
export type PackedRow = string;

type PackedSegment = [number, number, number, number, number, number, number, number] | [number, number, number, number, number, number, number, number, string];
type PackedFields = [
  id: string, config: unknown[] | Record<string, unknown>, createdAtMs: number, creationToken: string, fencingToken: string,
  trimSeq: number, settledEndSeq: number, settledEndTs: number, segments: PackedSegment[],
];

function packConfig(config: Record<string, unknown>): unknown[] | Record<string, unknown> {
  const keys = Object.keys(config);
  // By position only when that loses nothing: exactly the known keys, none undefined (JSON would
  // turn an undefined array element into null).
  if (keys.length !== STREAM_CONFIG_KEYS.length || !STREAM_CONFIG_KEYS.every((k) => config[k] !== undefined)) return config;
  return STREAM_CONFIG_KEYS.map((k) => config[k]);
}

function unpackConfig(c: unknown[] | Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(c)) return c;
  // Packed under an older, shorter key list: the keys added since are absent, as in an old row.
  const config: Record<string, unknown> = {};
  for (let i = 0; i < c.length && i < STREAM_CONFIG_KEYS.length; i++) config[STREAM_CONFIG_KEYS[i]] = c[i];
  return config;
}

function packSegment(streamId: string, s: SegmentMeta): PackedSegment {
  const fields: PackedSegment = [s.first_seq, s.end_seq, s.min_ts, s.max_ts, s.content_bytes, s.size_bytes, s.footer_offset, s.footer_bytes];
  return s.object_key === segmentKey(streamId, s.first_seq, s.end_seq) ? fields : [...fields, s.object_key];
}

function unpackSegment(streamId: string, p: PackedSegment): SegmentMeta {
  return {
    object_key: p[8] ?? segmentKey(streamId, p[0], p[1]),
    first_seq: p[0], end_seq: p[1], min_ts: p[2], max_ts: p[3],
    content_bytes: p[4], size_bytes: p[5], footer_offset: p[6], footer_bytes: p[7],
  };
}

export function packRow(row: StreamMeta): PackedRow {
  const fields: PackedFields = [
    row.stream_id, packConfig(row.config), row.created_at_unix_ms, row.creation_token, row.fencing_token,
    row.trim_seq, row.settled_end_seq, row.settled_end_ts, row.segments.map((s) => packSegment(row.stream_id, s)),
  ];
  return JSON.stringify(fields);
}

export function unpackRow(bucket: string, key: string, packed: PackedRow): StreamMeta {
  const [id, config, created, creationToken, fencingToken, trimSeq, settledEndSeq, settledEndTs, segments] = JSON.parse(packed) as PackedFields;
  return {
    stream_id: id, bucket, key, config: unpackConfig(config), created_at_unix_ms: created,
    creation_token: creationToken, fencing_token: fencingToken, trim_seq: trimSeq,
    settled_end_seq: settledEndSeq, settled_end_ts: settledEndTs, segments: segments.map((s) => unpackSegment(id, s)),
  };
}

/** What a listing shows of a row: its id, config and creation time, without building its segments
 *  (a third of the cost of unpackRow: a ListStreams page unpacks up to 1,000 rows). */
export type RowHead = Pick<StreamMeta, 'stream_id' | 'bucket' | 'key' | 'config' | 'created_at_unix_ms'>;

export function unpackRowHead(bucket: string, key: string, packed: PackedRow): RowHead {
  const [id, config, created] = JSON.parse(packed) as PackedFields;
  return { stream_id: id, bucket, key, config: unpackConfig(config), created_at_unix_ms: created };
}

/** The stream id of a packed row, without unpacking it (a restart maps WAL frames to their streams). */
export function packedStreamId(packed: PackedRow): string {
  // The id is the first JSON string: up to its closing quote, or, if it held an escaped quote before
  // a comma (no id does), by the whole parse.
  try {
    return JSON.parse(packed.slice(1, packed.indexOf('",', 2) + 1)) as string;
  } catch {
    return (JSON.parse(packed) as PackedFields)[0];
  }
}

/** Whether a packed row names any settled segment, without unpacking it (segments come last). */
export function packedHasSegments(packed: PackedRow): boolean {
  return !packed.endsWith(',[]]');
}
