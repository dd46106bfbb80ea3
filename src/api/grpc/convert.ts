// svc.v1 messages ↔ the core's transport-neutral types. Pure functions; every rule that turns a
// malformed message into INVALID_ARGUMENT before the core sees it is applied here: the ones HTTP
// shares come from the protocol leaf (protocol/rules.ts), the ones only protobuf needs are here.

import { keyFromBytes, keyToBytes } from '../../storage/format/key-bytes.ts';
import { invalid } from '../../core/errors.ts';
import { streamDefaultsOf, type ReadStart } from '../../core/types.ts';
import type { Position } from '../../protocol/position.ts';
import type { Header, RecordInput, SequencedRecord } from '../../protocol/records.ts';
import type {
  BucketConfig, BucketCreate, BucketInfo, ProducerPolicy, StorageClass, StreamConfig, StreamCreate, StreamInfo, TimestampingMode,
} from '../../protocol/resources.ts';
import {
  checkBatch, checkBucketName, checkCreationToken, checkFencingToken, checkHeaderCount, checkKey, checkLocation,
  checkNewBucketName, checkRecordCount, checkU64, decodeStreamCursor, encodeStreamCursor, listPageLimit, readTimeSaturated,
  recordTimestampFromWire,
} from '../../protocol/rules.ts';
import type { AppendRecord__Output } from '../../gen/svc/v1/AppendRecord.ts';
import type { BucketConfig as PbBucketConfig, BucketConfig__Output } from '../../gen/svc/v1/BucketConfig.ts';
import type { BucketInfo as PbBucketInfo } from '../../gen/svc/v1/BucketInfo.ts';
import type { Position as PbPosition } from '../../gen/svc/v1/Position.ts';
import type { SequencedRecord as PbSequencedRecord } from '../../gen/svc/v1/SequencedRecord.ts';
import type { StreamConfig as PbStreamConfig, StreamConfig__Output } from '../../gen/svc/v1/StreamConfig.ts';
import type { StreamInfo as PbStreamInfo } from '../../gen/svc/v1/StreamInfo.ts';

// ---- Keys ----------------------------------------------------------------------------------------
// The wire key is bytes; the core holds it as a string (protocol/key-bytes.ts), the same string the HTTP
// surface makes of the same bytes percent-encoded, so both transports reach one stream.

export function keyFromWire(bytes: Uint8Array): string {
  return checkKey(keyFromBytes(bytes));
}

export function keyToWire(key: string): Buffer {
  return keyToBytes(key);
}

export const bucketFromWire = (bucket: string): string => checkBucketName(bucket);

/** A request's stream address (bucket, key), checked as over HTTP. */
export const addressFromWire = (m: { bucket: string; key: Uint8Array }): { bucket: string; key: string } => (
  { bucket: bucketFromWire(m.bucket), key: keyFromWire(m.key) }
);
export const newBucketFromWire = (bucket: string): string => checkNewBucketName(bucket);

export const fencingTokenFromWire: (t: string) => string = checkFencingToken;

/** A 64-bit field decoded to a JS number: refused past 2^53 instead of silently rounded. */
export const u64FromWire: (v: number, field: string) => number = checkU64;

/** A signed 64-bit time (a read's timestamp start or until_ms, as over HTTP): refused past 2^53. */
export function i64FromWire(v: number, field: string): number {
  if (!Number.isSafeInteger(v)) throw invalid(`${field} must be an integer of magnitude below 2^53`);
  return v;
}

/**
 * A position or time that selects records (a read's start, until_ms). The wire's uint64/int64 is
 * exact; the loader hands it over as a number, rounded past 2^53. The core's positions and times are
 * safe integers, so any value past 2^53 - 1 lies past all of them: it saturates there and gets the
 * answer its meaning calls for (a start past the tail: OUT_OF_RANGE with the tail, or the tail under
 * clamp), as over HTTP, rather than INVALID_ARGUMENT for a valid uint64.
 */
export function selectorFromWire(v: number): number {
  if (Number.isNaN(v)) return 0;
  return Math.max(-Number.MAX_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, Math.trunc(v)));
}

/**
 * A uint64 position a request names (match_seq_num, a trim point), as HTTP's positionField does:
 * protobuf cannot carry more than 2^64 - 1, and past 2^53 - 1 it lies past every position the core
 * holds, so it saturates there and gets its meaning's answer (a match_seq_num miss with the tail, a
 * trim to the tail) rather than INVALID_ARGUMENT for a valid uint64. Negative (an int64 field) is refused.
 */
export function positionFromWire(v: number, field: string): number {
  if (Number.isInteger(v) && v > Number.MAX_SAFE_INTEGER) return Number.MAX_SAFE_INTEGER;
  if (v < 0) throw invalid(`${field} must be a non-negative integer`);
  return checkU64(v, field);
}

/** A read's time bound (a timestamp start, until_ms): as selectorFromWire, but saturating one past
 *  2^53 - 1 (readTimeSaturated), since a record may carry that time itself. */
export function timeSelectorFromWire(v: number): number {
  if (Number.isNaN(v)) return 0;
  return readTimeSaturated(Math.trunc(v));
}

/** Stream listing cursors: the same opaque base64url strings as over HTTP. */
export const streamCursorToWire = encodeStreamCursor;
export const streamCursorFromWire = (c: string): string => decodeStreamCursor(c);

// ---- Positions and records -----------------------------------------------------------------------

export function positionToWire(p: Position): PbPosition {
  return { seq_num: p.seq_num, timestamp_ms: p.timestamp_ms };
}

function headersToWire(headers: Header[]): { name: Uint8Array; value: Uint8Array }[] {
  return headers.map((h) => ({ name: h.name, value: h.value }));
}

export function recordToWire(r: SequencedRecord): PbSequencedRecord {
  return { seq_num: r.seq_num, timestamp_ms: r.timestamp_ms, headers: headersToWire(r.headers), body: r.body };
}

/** Decoded records of one batch, and their content size (bodies plus header names and values). */
export function recordsFromWire(records: AppendRecord__Output[]): { records: RecordInput[]; bytes: number } {
  checkRecordCount(records.length);
  const out: RecordInput[] = new Array(records.length);
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    checkHeaderCount(r.headers.length, i);
    const headers: Header[] = new Array(r.headers.length);
    for (let j = 0; j < r.headers.length; j++) headers[j] = { name: r.headers[j].name, value: r.headers[j].value };
    out[i] = r.timestamp_ms === undefined ? { headers, body: r.body }
      : { timestamp_ms: recordTimestampFromWire(r.timestamp_ms, `records[${i}].timestamp_ms`), headers, body: r.body };
  }
  return { records: out, bytes: checkBatch(out) };
}

// ---- Enums ---------------------------------------------------------------------------------------

const CLASS_TO_WIRE: Record<StorageClass, string> = { standard: 'STORAGE_CLASS_STANDARD', express: 'STORAGE_CLASS_EXPRESS' };
const POLICY_TO_WIRE: Record<ProducerPolicy, string> = { any: 'PRODUCER_POLICY_ANY', fenced: 'PRODUCER_POLICY_FENCED' };
const MODE_TO_WIRE: Record<TimestampingMode, string> = {
  'client-prefer': 'TIMESTAMPING_MODE_CLIENT_PREFER',
  'client-require': 'TIMESTAMPING_MODE_CLIENT_REQUIRE',
  arrival: 'TIMESTAMPING_MODE_ARRIVAL',
};

function invert<T extends string>(table: Record<T, string>): Map<string, T> {
  return new Map(Object.entries(table).map(([k, v]) => [v as string, k as T]));
}
const CLASS_FROM_WIRE = invert(CLASS_TO_WIRE);
const POLICY_FROM_WIRE = invert(POLICY_TO_WIRE);
const MODE_FROM_WIRE = invert(MODE_TO_WIRE);

/** An enum field's core value; undefined for *_UNSPECIFIED (not set). Unknown values are refused. */
function enumFromWire<T>(value: string | number | undefined, table: Map<string, T>, field: string): T | undefined {
  if (value === undefined || value === 0 || (typeof value === 'string' && value.endsWith('_UNSPECIFIED'))) return undefined;
  const v = typeof value === 'string' ? table.get(value) : undefined;
  if (v === undefined) throw invalid(`unknown ${field}: ${String(value)}`);
  return v;
}

// ---- Stream and bucket config --------------------------------------------------------------------

const STREAM_NUMERIC_FIELDS = [
  'retention_max_age_ms', 'retention_max_bytes', 'batch_max_bytes', 'batch_max_records',
  'batch_max_delay_ms', 'throughput_max_bytes_per_second',
] as const;

/** The set fields of a StreamConfig message (absent message: nothing set). */
export function streamConfigFromWire(c: StreamConfig__Output | null | undefined): Partial<StreamConfig> {
  const out: Partial<StreamConfig> = {};
  if (!c) return out;
  const cls = enumFromWire(c.storage_class, CLASS_FROM_WIRE, 'storage_class');
  if (cls !== undefined) out.class = cls;
  const policy = enumFromWire(c.producer_policy, POLICY_FROM_WIRE, 'producer_policy');
  if (policy !== undefined) out.producer_policy = policy;
  const mode = enumFromWire(c.timestamping_mode, MODE_FROM_WIRE, 'timestamping_mode');
  if (mode !== undefined) out.timestamping_mode = mode;
  for (const f of STREAM_NUMERIC_FIELDS) {
    const v = c[f];
    if (v !== undefined && v !== null) out[f] = u64FromWire(v, f);
  }
  if (c.timestamping_uncapped !== undefined && c.timestamping_uncapped !== null) out.timestamping_uncapped = c.timestamping_uncapped;
  return out;
}

export function streamConfigToWire(c: StreamConfig): PbStreamConfig {
  return {
    storage_class: CLASS_TO_WIRE[c.class] as PbStreamConfig['storage_class'],
    producer_policy: POLICY_TO_WIRE[c.producer_policy] as PbStreamConfig['producer_policy'],
    retention_max_age_ms: c.retention_max_age_ms,
    retention_max_bytes: c.retention_max_bytes,
    batch_max_bytes: c.batch_max_bytes,
    batch_max_records: c.batch_max_records,
    batch_max_delay_ms: c.batch_max_delay_ms,
    throughput_max_bytes_per_second: c.throughput_max_bytes_per_second,
    timestamping_mode: MODE_TO_WIRE[c.timestamping_mode] as PbStreamConfig['timestamping_mode'],
    timestamping_uncapped: c.timestamping_uncapped,
  };
}

export function streamCreateFromWire(c: StreamConfig__Output | null, creationToken: string): StreamCreate {
  const body: StreamCreate = streamConfigFromWire(c);
  if (creationToken !== '') body.creation_token = checkCreationToken(creationToken);
  return body;
}

export function streamInfoToWire(s: StreamInfo): PbStreamInfo {
  return {
    stream_id: s.stream_id,
    bucket: s.bucket,
    key: keyToWire(s.key),
    config: streamConfigToWire(s),
    created_at_unix_ms: s.created_at_unix_ms,
  };
}

/** The set fields of a BucketConfig message, as the core's flat `default_*` fields. */
export function bucketConfigFromWire(c: BucketConfig__Output | null | undefined): Partial<BucketConfig> {
  const out: Partial<BucketConfig> = {};
  if (!c) return out;
  if (c.location !== undefined && c.location !== null) out.location = checkLocation(c.location);
  if (c.create_stream_on_append !== undefined && c.create_stream_on_append !== null) out.create_stream_on_append = c.create_stream_on_append;
  if (c.create_stream_on_read !== undefined && c.create_stream_on_read !== null) out.create_stream_on_read = c.create_stream_on_read;
  const d = streamConfigFromWire(c.default_stream_config);
  if (d.class !== undefined) out.default_class = d.class;
  if (d.producer_policy !== undefined) out.default_producer_policy = d.producer_policy;
  if (d.retention_max_age_ms !== undefined) out.default_retention_max_age_ms = d.retention_max_age_ms;
  if (d.retention_max_bytes !== undefined) out.default_retention_max_bytes = d.retention_max_bytes;
  if (d.batch_max_bytes !== undefined) out.default_batch_max_bytes = d.batch_max_bytes;
  if (d.batch_max_records !== undefined) out.default_batch_max_records = d.batch_max_records;
  if (d.batch_max_delay_ms !== undefined) out.default_batch_max_delay_ms = d.batch_max_delay_ms;
  if (d.throughput_max_bytes_per_second !== undefined) out.default_throughput_max_bytes_per_second = d.throughput_max_bytes_per_second;
  if (d.timestamping_mode !== undefined) out.default_timestamping_mode = d.timestamping_mode;
  if (d.timestamping_uncapped !== undefined) out.default_timestamping_uncapped = d.timestamping_uncapped;
  return out;
}

export function bucketCreateFromWire(c: BucketConfig__Output | null, creationToken: string): BucketCreate {
  const body: BucketCreate = bucketConfigFromWire(c);
  if (creationToken !== '') body.creation_token = checkCreationToken(creationToken);
  return body;
}

export function bucketConfigToWire(b: BucketConfig): PbBucketConfig {
  return {
    location: b.location,
    create_stream_on_append: b.create_stream_on_append,
    create_stream_on_read: b.create_stream_on_read,
    default_stream_config: streamConfigToWire(streamDefaultsOf(b)),
  };
}

export function bucketInfoToWire(b: BucketInfo): PbBucketInfo {
  return { name: b.name, config: bucketConfigToWire(b), created_at_unix_ms: b.created_at_unix_ms, creation_token: b.creation_token };
}

// ---- Reads and pages -----------------------------------------------------------------------------

interface StartFields {
  start?: string;
  seq_num?: number;
  timestamp_ms?: number;
  tail_offset?: number;
}

/** The oneof `start` of Read/Subscribe as a ReadStart; none set is INVALID_ARGUMENT. */
export function readStartFromWire(m: StartFields): ReadStart {
  if (m.start === 'seq_num' && m.seq_num !== undefined) return { kind: 'seq_num', value: selectorFromWire(m.seq_num) };
  if (m.start === 'timestamp_ms' && m.timestamp_ms !== undefined) return { kind: 'timestamp_ms', value: timeSelectorFromWire(m.timestamp_ms) };
  if (m.start === 'tail_offset' && m.tail_offset !== undefined) return { kind: 'tail_offset', value: selectorFromWire(m.tail_offset) };
  throw invalid('exactly one start (seq_num, timestamp_ms or tail_offset) is required');
}

/** 0 means the cap; anything above it is clamped to it. */
export function clampToCap(value: number, cap: number): number {
  return value <= 0 || value > cap ? cap : value;
}

export const pageLimit: (limit: number) => number = listPageLimit;
