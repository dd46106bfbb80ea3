// JSON at the edge: decoding and validating request bodies and queries into core types, and encoding
// records back (a byte field rides its plain name when it is valid UTF-8, its `_b64` sibling otherwise).

import { APPEND_RECORDS_MAX, RECORD_CONTENT_BYTES_MAX } from '../config/limits.ts';
import { isAscii, isUtf8 } from 'node:buffer';
import { invalid } from '../core/errors.ts';
import type { AppendInput } from '../core/types.ts';
import type { JsonHeader, JsonRecord } from '../protocol/json.ts';
import type { AppendAck, Header, RecordInput, SequencedRecord } from '../protocol/records.ts';
import { keyToBytes } from '../protocol/key-bytes.ts';
import {
  BUCKET_CONFIG_KEYS, PRODUCER_POLICIES, STORAGE_CLASSES, STREAM_CONFIG_KEYS, TIMESTAMPING_MODES,
  type BucketConfig, type BucketCreate, type StreamConfigInput, type StreamCreate,
} from '../protocol/resources.ts';
import {
  checkBatch, checkCreationToken, checkFencingToken, checkHeaderCount, checkLocation, checkRecordCount, checkU64,
  recordTimestampFromWire,
} from '../protocol/rules.ts';

type Json = Record<string, unknown>;

export function parseJsonObject(body: Uint8Array, allowEmpty: boolean): Json {
  if (body.length === 0 || isBlank(body)) {
    if (allowEmpty) return {};
    throw invalid('request body is required');
  }
  const b = Buffer.from(body.buffer, body.byteOffset, body.length);
  // toString('utf8') would turn bytes that are not UTF-8 into U+FFFD, silently changing the text a
  // client sent (spec: bodies are UTF-8 text, reads are never lossy): such a body is refused whole.
  if (!isUtf8(b)) throw invalid('request body is not valid UTF-8');
  let v: unknown;
  try {
    v = JSON.parse(b.toString('utf8'));
  } catch {
    throw invalid('malformed JSON body');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw invalid('request body must be a JSON object');
  return v as Json;
}

function isBlank(b: Uint8Array): boolean {
  for (const c of b) if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return false;
  return true;
}

// The alphabet, then at most two '=' (simple character classes: linear on a 140 MiB body, where a
// repeated group overflows the regex engine's stack). The padding's rules are checked apart
// (wellFormedB64).
const B64_RE = /^[A-Za-z0-9+/]*={0,2}$/;
const B64URL_RE = /^[A-Za-z0-9_-]*={0,2}$/;
const B64_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Whole quanta of four, then a last one of two or three characters, padded with '=' to four or not
 *  at all ('==' alone, 'YQ=', 'A' are no base64), whose unused low bits are zero as an encoder writes
 *  them ('YQ' for 'a'; 'YR' would decode to 'a' too, so two strings would name one value). */
function wellFormedB64(s: string): boolean {
  let pad = 0;
  while (pad < 2 && s.charCodeAt(s.length - 1 - pad) === 0x3d) pad++;
  const data = s.length - pad;
  const rest = data % 4;
  if (pad > 0 ? rest !== 4 - pad : rest === 1) return false;
  if (rest === 0) return true;
  const c = s[data - 1];
  const v = c === '+' || c === '-' ? 62 : c === '/' || c === '_' ? 63 : B64_DIGITS.indexOf(c);
  return (v & (rest === 2 ? 0x0f : 0x03)) === 0;
}

/** Strict base64 (standard or url-safe alphabet, padded or not, canonical); anything else is a 400. */
export function decodeB64(s: unknown, field: string): Buffer {
  if (typeof s !== 'string') throw invalid(`${field} must be a base64 string`);
  const standard = B64_RE.test(s);
  if (!(standard || B64URL_RE.test(s)) || !wellFormedB64(s)) throw invalid(`${field} is not valid base64`);
  return Buffer.from(s, standard ? 'base64' : 'base64url');
}

const U64_MAX = (1n << 64n) - 1n;

/**
 * A top-level uint64 body field that selects a position (match_seq_num, a trim's seq_num). JSON.parse
 * rounds integers past 2^53 (2^64 - 1 and 2^64 parse alike), so such a value is read again from the
 * literal as written: past 2^64 - 1 it is a 400 naming the field; up to it, it lies past every
 * position the core holds (safe integers) and saturates there, getting the same answer (a
 * match_seq_num miss: 412 with the tail; a trim past the tail: trimmed to it).
 */
export function positionField(v: unknown, field: string, body: Uint8Array): number {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return v;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw invalid(`${field} must be a non-negative integer`);
  const literal = topLevelLiteral(body, field);
  if (literal === undefined || !/^\d+$/.test(literal)) throw invalid(`${field} past 2^53 must be written as plain digits`);
  if (BigInt(literal) > U64_MAX) throw invalid(`${field} must be at most 2^64-1 (${U64_MAX})`);
  return Number.MAX_SAFE_INTEGER;
}

/** The number literal a field of the body's object is written with. A quote inside a JSON string
 *  is escaped, so `"field":` outside one is the key itself (nested objects the decoder refuses). */
function topLevelLiteral(body: Uint8Array, field: string): string | undefined {
  const text = Buffer.from(body.buffer, body.byteOffset, body.length).toString('latin1');
  return new RegExp(`"${field}"\\s*:\\s*(-?[0-9.eE+-]+)`).exec(text)?.[1];
}

/** A string field, held to its rule (protocol/rules.ts: the byte bound on a token or label). */
function str(v: unknown, field: string, rule: (s: string) => string): string {
  if (typeof v !== 'string') throw invalid(`${field} must be a string`);
  return rule(v);
}

function bool(v: unknown, field: string): boolean {
  if (typeof v !== 'boolean') throw invalid(`${field} must be a boolean`);
  return v;
}

function oneOf<T extends string>(v: unknown, field: string, allowed: readonly T[], allowEmpty: boolean): T | '' {
  if (typeof v !== 'string' || !(allowed.includes(v as T) || (allowEmpty && v === ''))) {
    throw invalid(`${field} must be one of ${allowed.join(', ')}`);
  }
  return v as T | '';
}

/** One config field, validated by its name. */
function configField(k: string, v: unknown, allowEmptyEnum: boolean): unknown {
  switch (k) {
    case 'class': case 'default_class': return oneOf(v, k, STORAGE_CLASSES, allowEmptyEnum);
    case 'producer_policy': case 'default_producer_policy': return oneOf(v, k, PRODUCER_POLICIES, allowEmptyEnum);
    case 'timestamping_mode': case 'default_timestamping_mode': return oneOf(v, k, TIMESTAMPING_MODES, allowEmptyEnum);
    case 'timestamping_uncapped': case 'default_timestamping_uncapped':
    case 'create_stream_on_append': case 'create_stream_on_read': return bool(v, k);
    case 'location': return str(v, k, checkLocation);
    default: return checkU64(v, k);
  }
}

const STREAM_FIELDS = new Set<string>(STREAM_CONFIG_KEYS);
const BUCKET_FIELDS = new Set<string>(BUCKET_CONFIG_KEYS);
/** Read-only fields a client may echo back (a GET's answer sent as a body); they are ignored. */
const STREAM_ECHO_FIELDS = new Set(['stream_id', 'bucket', 'key', 'key_b64', 'created_at_unix_ms', 'fencing_token']);
const BUCKET_ECHO_FIELDS = new Set(['created_at_unix_ms']);

/** A stream's create or PATCH body. The descriptor's own fields may come back in it (a GET's answer
 *  sent again), but a bucket or key other than the path's is 400 (spec: Errors). */
export function decodeStreamConfig(o: Json, withToken: boolean, path: { bucket: string; key: string }): StreamCreate {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === null) continue;
    if (STREAM_FIELDS.has(k)) out[k] = configField(k, v, true);
    else if (withToken && k === 'creation_token') out[k] = str(v, k, checkCreationToken);
    else if (!STREAM_ECHO_FIELDS.has(k)) throw invalid(`unknown field ${k}`);
    else if (k === 'bucket' && v !== path.bucket) throw invalid(`body names bucket ${String(v)} but the path names ${path.bucket}`);
    else if (k === 'key' && v !== path.key) throw invalid('body names another key than the path');
    else if (k === 'key_b64' && v !== Buffer.from(keyToBytes(path.key)).toString('base64')) throw invalid('key_b64 names another key than the path');
    // A stream is created unfenced: a token here would be dropped, and the caller would think it set.
    else if (k === 'fencing_token' && withToken && v !== '') throw invalid('a stream is created without a fencing token; install one with the fence verb');
  }
  return out as StreamCreate;
}

export function decodeStreamPatch(o: Json, path: { bucket: string; key: string }): StreamConfigInput {
  return decodeStreamConfig(o, false, path);
}

export function decodeBucketConfig(o: Json, pathName: string, withToken: boolean): BucketCreate {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === null) continue;
    if (k === 'name') {
      if (v !== pathName) throw invalid(`body names bucket ${String(v)} but the path names ${pathName}`);
    } else if (BUCKET_FIELDS.has(k)) {
      // An empty-string enum means the service's default, as a stream's means its bucket's (and as
      // gRPC's UNSPECIFIED does): left unset.
      const x = configField(k, v, true);
      if (x !== '') out[k] = x;
    } else if (k === 'creation_token') {
      if (withToken) out[k] = str(v, k, checkCreationToken);
    } else if (!BUCKET_ECHO_FIELDS.has(k)) throw invalid(`unknown field ${k}`);
  }
  return out as Partial<BucketConfig> & { creation_token?: string };
}

/** Where a field sits, for error messages only: built when one is thrown, never per record. */
const at = (i: number, j?: number): string => (j === undefined ? `records[${i}]` : `records[${i}].headers[${j}]`);

/** A UTF-8 text field as bytes. A string too short to be over the record limit in UTF-8 (3 bytes per
 *  UTF-16 unit at most) is not measured; a longer one is refused before it is encoded. */
function textBytes(v: unknown, i: number, j: number | undefined, name: string): Buffer {
  if (typeof v !== 'string') throw invalid(`${at(i, j)}.${name} must be a string`);
  // A `\ud800` escape is valid JSON but names no character: UTF-8 cannot hold it, and encoding it
  // would store U+FFFD instead of what was sent. Such text is refused, never changed.
  if (!v.isWellFormed()) throw invalid(`${at(i, j)}.${name} is not valid Unicode text (a lone surrogate)`);
  if (v.length * 3 > RECORD_CONTENT_BYTES_MAX && Buffer.byteLength(v) > RECORD_CONTENT_BYTES_MAX) {
    throw invalid(`${at(i, j)}.${name} is longer than ${RECORD_CONTENT_BYTES_MAX} bytes`);
  }
  return Buffer.from(v, 'utf8');
}

function decodeHeader(h: unknown, i: number, j: number): Header {
  if (h === null || typeof h !== 'object' || Array.isArray(h)) throw invalid(`${at(i, j)} must be an object`);
  const o = h as Json;
  for (const k in o) if (!HEADER_FIELDS.has(k)) throw invalid(`${at(i, j)}: unknown field ${k}`);
  const hasName = o.name !== undefined;
  const hasNameB64 = o.name_b64 !== undefined;
  if (hasName === hasNameB64) throw invalid(`${at(i, j)}: exactly one of name or name_b64 is required`);
  const name = hasName ? textBytes(o.name, i, j, 'name') : decodeB64(o.name_b64, `${at(i, j)}.name_b64`);
  if (o.value !== undefined && o.value_b64 !== undefined) throw invalid(`${at(i, j)}: at most one of value or value_b64`);
  const value = o.value !== undefined
    ? textBytes(o.value, i, j, 'value')
    : o.value_b64 !== undefined ? decodeB64(o.value_b64, `${at(i, j)}.value_b64`) : EMPTY_BYTES;
  return { name, value };
}

/** The fields a record input and a header may carry (spec: Record, Header). */
const RECORD_FIELDS = new Set(['body', 'body_b64', 'headers', 'timestamp_ms']);
const HEADER_FIELDS = new Set(['name', 'name_b64', 'value', 'value_b64']);

/** Shared by every header without a value (never written to). */
const EMPTY_BYTES = Buffer.alloc(0);

function decodeRecord(r: unknown, i: number): RecordInput {
  if (r === null || typeof r !== 'object' || Array.isArray(r)) throw invalid(`${at(i)} must be an object`);
  const o = r as Json;
  // A misspelt field (`timestmp_ms`) must not be dropped silently, as unknown top-level fields are not.
  for (const k in o) if (!RECORD_FIELDS.has(k)) throw invalid(`${at(i)}: unknown field ${k}`);
  const hasBody = o.body !== undefined;
  const hasB64 = o.body_b64 !== undefined;
  if (hasBody === hasB64) throw invalid(`${at(i)}: exactly one of body or body_b64 is required`);
  const body = hasBody ? textBytes(o.body, i, undefined, 'body') : decodeB64(o.body_b64, `${at(i)}.body_b64`);
  let headers: Header[] = NO_HEADERS;
  if (o.headers !== undefined && o.headers !== null) {
    if (!Array.isArray(o.headers)) throw invalid(`${at(i)}.headers must be an array`);
    checkHeaderCount(o.headers.length, i); // before decoding them
    if (o.headers.length > 0) headers = o.headers.map((h, j) => decodeHeader(h, i, j));
  }
  const out: RecordInput = { headers, body };
  if (o.timestamp_ms !== undefined && o.timestamp_ms !== null) {
    out.timestamp_ms = recordTimestampFromWire(o.timestamp_ms, `${at(i)}.timestamp_ms`);
  }
  return out;
}

/** Shared by every record without headers (never written to). */
const NO_HEADERS: Header[] = [];

/** Bytes of the longest body tried by decodePlainAppend; a bigger one goes through JSON.parse. */
const PLAIN_APPEND_BYTES_MAX = 64 * 1024;
const PLAIN_PREFIX = Buffer.from('{"records":[');
const PLAIN_RECORD = Buffer.from('{"body":"');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function startsWithAt(b: Uint8Array, at: number, lit: Uint8Array): boolean {
  if (at + lit.length > b.length) return false;
  for (let i = 0; i < lit.length; i++) if (b[at + i] !== lit[i]) return false;
  return true;
}

/** Whether any byte is below 0x20, a 32-bit word per step (the "has less than" word trick, exact for
 *  the any-test: a borrow only spreads from a byte that is itself below 0x20). Words are read through
 *  an aligned Uint32Array view once the body is long enough to pay for making one. */
function hasControlByte(b: Uint8Array): boolean {
  let i = 0;
  const n = b.length;
  if (n >= CONTROL_SCAN_VIEW_BYTES_MIN) {
    while (((b.byteOffset + i) & 3) !== 0) if (b[i++] < 0x20) return true;
    const words = new Uint32Array(b.buffer, b.byteOffset + i, (n - i) >>> 2);
    for (let k = 0; k < words.length; k++) {
      const w = words[k];
      if (((w - 0x20202020) & ~w & 0x80808080) !== 0) return true;
    }
    i += words.length * 4;
  }
  for (; i + 4 <= n; i += 4) {
    const w = b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24);
    if (((w - 0x20202020) & ~w & 0x80808080) !== 0) return true;
  }
  for (; i < n; i++) if (b[i] < 0x20) return true;
  return false;
}

/** Below this many bytes the word scan reads bytes directly (a Uint32Array view costs more). */
const CONTROL_SCAN_VIEW_BYTES_MIN = 512;

/**
 * The commonest append body, `{"records":[{"body":"…"},…]}` written without spaces, with ASCII
 * bodies and no escapes, decoded straight from its bytes: each body is a view of the request, with
 * no JSON.parse and no string round trip (together 5 % of the main thread at 40k appends/s). Anything
 * else (whitespace, other fields, escapes, control or non-ASCII bytes) answers undefined and takes
 * the general path, which decodes such bodies to the same records or refuses them. The byte checks
 * run over the whole body at once (native isAscii and indexOf, then a word-wide scan), and bodies are
 * cut at their closing quotes with indexOf, so large records cost less than JSON.parse too.
 */
export function decodePlainAppend(body: Uint8Array): RecordInput[] | undefined {
  if (body.length > PLAIN_APPEND_BYTES_MAX || !startsWithAt(body, 0, PLAIN_PREFIX)) return undefined;
  const b = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.length);
  if (!isAscii(b) || b.indexOf(BACKSLASH) >= 0 || hasControlByte(b)) return undefined;
  const records: RecordInput[] = [];
  let p = PLAIN_PREFIX.length;
  for (;;) {
    if (!startsWithAt(b, p, PLAIN_RECORD)) return undefined;
    const start = p + PLAIN_RECORD.length;
    const q = b.indexOf(QUOTE, start);
    // The closing quote and brace, then a comma and the next record, or the end of the array and body.
    if (q < 0 || q + 2 >= b.length || b[q + 1] !== 0x7d) return undefined;
    records.push({ headers: NO_HEADERS, body: b.subarray(start, q) });
    if (records.length > APPEND_RECORDS_MAX) return undefined;
    if (b[q + 2] === 0x2c) { p = q + 3; continue; }
    return b[q + 2] === 0x5d && q + 4 === b.length && b[q + 3] === 0x7d ? records : undefined;
  }
}

export function decodeAppend(body: Uint8Array): AppendInput {
  const plain = decodePlainAppend(body);
  if (plain) {
    checkBatch(plain);
    return { records: plain };
  }
  const o = parseJsonObject(body, false);
  for (const k of Object.keys(o)) {
    if (k !== 'records' && k !== 'match_seq_num' && k !== 'fencing_token') throw invalid(`unknown field ${k}`);
  }
  if (!Array.isArray(o.records) || o.records.length === 0) throw invalid('records must be a non-empty array');
  checkRecordCount(o.records.length); // before decoding them
  const records = o.records.map(decodeRecord);
  checkBatch(records);
  const out: AppendInput = { records };
  if (o.match_seq_num !== undefined && o.match_seq_num !== null) out.match_seq_num = positionField(o.match_seq_num, 'match_seq_num', body);
  if (o.fencing_token !== undefined && o.fencing_token !== null) out.fencing_token = str(o.fencing_token, 'fencing_token', checkFencingToken);
  return out;
}

// ---------------------------------------------------------------------------- output

/** The append answer's text around its six numbers; encodeAppendAck fills the odd slots and joins. */
const ACK_PARTS: (string | number)[] = [
  '{"start":{"seq_num":', 0, ',"timestamp_ms":', 0, '},"end":{"seq_num":', 0, ',"timestamp_ms":', 0, '},"tail":{"seq_num":', 0, ',"timestamp_ms":', 0, '}}',
];

/** The append answer, written directly: it is on every append's path, and JSON.stringify of the
 *  nested object showed as 6 % of the main thread in profiles of single-record appends. One join
 *  over a reused array builds the string flat: a template literal made a cons string per piece,
 *  850 bytes of garbage an answer against 360 (measured with the sampling heap profiler), and the
 *  scavenges that garbage brings pause every append in flight. A timestamp the three positions
 *  share (the usual case) is turned into a string once. */
export function encodeAppendAck(a: AppendAck): string {
  const ts = a.start.timestamp_ms;
  const tsText = String(ts);
  ACK_PARTS[1] = a.start.seq_num;
  ACK_PARTS[3] = tsText;
  ACK_PARTS[5] = a.end.seq_num;
  ACK_PARTS[7] = a.end.timestamp_ms === ts ? tsText : a.end.timestamp_ms;
  ACK_PARTS[9] = a.tail.seq_num;
  ACK_PARTS[11] = a.tail.timestamp_ms === ts ? tsText : a.tail.timestamp_ms;
  return ACK_PARTS.join('');
}

// ignoreBOM: a leading U+FEFF is content, and reads are never lossy.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function asUtf8(b: Uint8Array): string | undefined {
  try { return utf8.decode(b); } catch { return undefined; }
}

const b64 = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.length).toString('base64');

/** A byte field and its `_b64` sibling, as JsonRecord and JsonHeader hold them. */
type ByteField<N extends string> = { [K in N | `${N}_b64`]?: string };

function byteField<N extends 'name' | 'value' | 'body'>(out: ByteField<N>, name: N, b: Uint8Array, base64: boolean): void {
  if (base64) { out[name] = b64(b); return; }
  const s = asUtf8(b);
  if (s === undefined) out[`${name}_b64`] = b64(b);
  else out[name] = s;
}

export function encodeRecord(r: SequencedRecord, base64: boolean): JsonRecord {
  const out: JsonRecord = { seq_num: r.seq_num, timestamp_ms: r.timestamp_ms };
  if (r.headers.length) {
    out.headers = r.headers.map((h) => {
      const o: JsonHeader = {};
      byteField(o, 'name', h.name, base64);
      byteField(o, 'value', h.value, base64);
      return o;
    });
  }
  byteField(out, 'body', r.body, base64);
  return out;
}
