// Input rules every transport applies the same way (HTTP in api/routes.ts and api/wire.ts, gRPC in
// api/grpc/convert.ts): bucket names, key sizes, listing cursors and page sizes, the byte bounds on
// tokens and labels, 64-bit fields as JS numbers, and the Limits table's caps on a batch. Each rule
// throws the invalid_argument ServiceError that names what is wrong; a transport only decodes its
// wire form into the values checked here, so both answer a bad input with the same words.
//
// Part of the protocol leaf: browser-safe, and nothing imported from outside src/protocol/.

import { invalid } from './errors.ts';
import { keyFromBytes, keyToBytes } from './key-bytes.ts';
import {
  APPEND_RECORDS_MAX, BATCH_CONTENT_BYTES_MAX, BUCKET_NAME_BYTES_MAX, CREATION_TOKEN_BYTES_MAX, FENCING_TOKEN_BYTES_MAX,
  LIST_PAGE_DEFAULT, LIST_PAGE_MAX, LOCATION_BYTES_MAX, RECORD_CONTENT_BYTES_MAX, RECORD_HEADERS_MAX, STREAM_KEY_BYTES_MAX,
} from './limits.ts';
import { contentBytes, type RecordInput } from './records.ts';
import { utf8ByteLength } from './utf8.ts';

// ---- Names, keys, listings ---------------------------------------------------------------------

const BUCKET_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** Reserved by the Gateway's `api.{zone}` host: never a bucket. */
const RESERVED_BUCKET = 'api';

/** 1-128 of A-Z a-z 0-9 . _ -, starting with a letter or digit. */
export function isBucketName(name: string): boolean {
  // Those characters are ASCII, so a name's length in UTF-16 units is its length in bytes.
  return name !== '' && name.length <= BUCKET_NAME_BYTES_MAX && BUCKET_NAME_RE.test(name);
}

export function checkBucketName(name: string): string {
  if (!isBucketName(name)) {
    throw invalid(`bucket names are 1-${BUCKET_NAME_BYTES_MAX} characters of A-Z a-z 0-9 . _ - starting with a letter or digit`);
  }
  return name;
}

/** The Gateway's `api` host name, in any case (host names ignore case, so `API.{zone}` is the api
 *  host too): no spelling of it is ever a bucket. */
export function isReservedBucketName(name: string): boolean {
  return name.toLowerCase() === RESERVED_BUCKET;
}

/** A name for a bucket about to be created: also not the reserved one. */
export function checkNewBucketName(name: string): string {
  checkBucketName(name);
  if (isReservedBucketName(name)) throw invalid(`the bucket name ${name} is reserved (api, in any case)`);
  return name;
}

/** A stream key as the core holds it (key-bytes.ts): 1 to STREAM_KEY_BYTES_MAX bytes. */
export function checkKey(key: string): string {
  if (key === '') throw invalid('key is required');
  // At most 3 bytes per UTF-16 unit (an escaped byte is 1): a short key cannot be over the limit.
  if (key.length * 3 > STREAM_KEY_BYTES_MAX && keyToBytes(key).length > STREAM_KEY_BYTES_MAX) {
    throw invalid(`a key is at most ${STREAM_KEY_BYTES_MAX} bytes`);
  }
  return key;
}

/** Stream listing cursors are opaque base64url strings (unpadded) of the last key's bytes. */
export const encodeStreamCursor = (key: string): string => (key === '' ? '' : base64UrlEncode(keyToBytes(key)));

export function decodeStreamCursor(c: string | null): string {
  if (c === null || c === '') return '';
  if (!/^[A-Za-z0-9_-]+$/.test(c)) throw invalid('start_after is not a valid cursor');
  return keyFromBytes(base64UrlDecode(c));
}

/** A listing's page size: absent or 0 means the default, anything above the cap is the cap. */
export const listPageLimit = (limit: number | undefined): number => (
  limit === undefined || limit <= 0 ? LIST_PAGE_DEFAULT : Math.min(limit, LIST_PAGE_MAX)
);

function base64UrlEncode(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Decodes base64url already checked to hold only its alphabet. A final lone character (length
 *  4n + 1) holds no whole byte and is dropped, as Node's decoder always did with cursors; atob would
 *  refuse the string instead. */
function base64UrlDecode(s: string): Uint8Array {
  const whole = s.length % 4 === 1 ? s.slice(0, -1) : s;
  const bin = atob(whole.replace(/-/g, '+').replace(/_/g, '/'));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

// ---- Scalar fields ------------------------------------------------------------------------------

/** A 64-bit unsigned field as a JS number: refused past 2^53 instead of silently rounded. */
export function checkU64(v: unknown, field: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw invalid(`${field} must be a non-negative integer below 2^53`);
  return v;
}

/**
 * Record times past 2^53 - 1 stand for this one value: every stored time is a safe integer, so this is
 * later than all of them. A read's time bound past 2^53 - 1 saturates here (a start after every record,
 * an until_ms before none), and a record's timestamp_ms there is capped at arrival like any time
 * ahead of it, or refused on an uncapped stream, which would have to store it exactly.
 */
export const TIME_PAST_SAFE_MS = 2 ** 53;
/** The double a JSON or protobuf int64 of 2^63 - 1 arrives as (it rounds up to 2^63). */
const I64_MAX_AS_DOUBLE = 2 ** 63;

/** A record's timestamp_ms as decoded from JSON or protobuf (a double, rounded past 2^53): a
 *  non-negative safe integer as is, a larger int64 as TIME_PAST_SAFE_MS, anything else refused. */
export function recordTimestampFromWire(v: unknown, field: string): number {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return v;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw invalid(`${field} must be a non-negative integer`);
  if (v > I64_MAX_AS_DOUBLE) throw invalid(`${field} must be a signed 64-bit integer`);
  return TIME_PAST_SAFE_MS;
}

/** A read's time bound (timestamp start, until_ms), already exact: past 2^53 - 1 it saturates at
 *  ±TIME_PAST_SAFE_MS, past every stored time, never at a time a record may carry. */
export function readTimeSaturated(v: number | bigint): number {
  if (typeof v === 'number') return Math.max(-TIME_PAST_SAFE_MS, Math.min(TIME_PAST_SAFE_MS, v));
  return v > 0n ? TIME_PAST_SAFE_MS : -TIME_PAST_SAFE_MS;
}

/** A text field of at most `maxBytes` bytes of UTF-8. */
export function checkTextBytes(v: string, field: string, maxBytes: number): string {
  // Each UTF-16 unit is 1 to 3 bytes (a surrogate pair 4 for two): only a string whose length lies
  // between the two bounds needs measuring, so a short token costs no scan at all.
  if (v.length * 3 > maxBytes && (v.length > maxBytes || utf8ByteLength(v) > maxBytes)) {
    throw invalid(`${field} is longer than ${maxBytes} bytes`);
  }
  return v;
}

export const checkFencingToken = (t: string): string => checkTextBytes(t, 'fencing_token', FENCING_TOKEN_BYTES_MAX);
export const checkCreationToken = (t: string): string => checkTextBytes(t, 'creation_token', CREATION_TOKEN_BYTES_MAX);
/** A bucket's `location` label. */
export const checkLocation = (l: string): string => checkTextBytes(l, 'location', LOCATION_BYTES_MAX);

// ---- Batches ------------------------------------------------------------------------------------

/** Records in one batch: a transport checks the count before it decodes them, then checkBatch. */
export function checkRecordCount(n: number): void {
  if (n > APPEND_RECORDS_MAX) throw invalid(`a batch holds at most ${APPEND_RECORDS_MAX} records`);
}

/** Headers on records[i]: checked before they are decoded, and again by checkBatch. */
export function checkHeaderCount(n: number, i: number): void {
  if (n > RECORD_HEADERS_MAX) throw invalid(`records[${i}] has more than ${RECORD_HEADERS_MAX} headers`);
}

/** The Limits table on one batch: record count, headers per record (each named), content per record
 *  and per batch, timestamps. Returns the batch's content bytes (bodies plus header names and values). */
export function checkBatch(records: readonly RecordInput[]): number {
  if (records.length === 0) throw invalid('records must be a non-empty array');
  checkRecordCount(records.length);
  let total = 0;
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    checkHeaderCount(r.headers.length, i);
    // An empty name is a missing one (spec: Header), on every transport.
    for (let j = 0; j < r.headers.length; j++) if (r.headers[j].name.length === 0) throw invalid(`records[${i}].headers[${j}] has no name`);
    const content = contentBytes(r);
    if (content > RECORD_CONTENT_BYTES_MAX) throw invalid(`records[${i}] is over the ${RECORD_CONTENT_BYTES_MAX}-byte record limit`);
    if (r.timestamp_ms !== undefined && r.timestamp_ms !== TIME_PAST_SAFE_MS && (!Number.isSafeInteger(r.timestamp_ms) || r.timestamp_ms < 0)) {
      throw invalid(`records[${i}].timestamp_ms must be a non-negative integer`);
    }
    total += content;
  }
  if (total > BATCH_CONTENT_BYTES_MAX) throw invalid(`the batch is over the ${BATCH_CONTENT_BYTES_MAX}-byte limit`);
  return total;
}
