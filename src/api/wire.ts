// JSON at the edge: decoding and validating request bodies and queries into core types, and encoding
// records back (a byte field rides its plain name when it is valid UTF-8, its `_b64` sibling otherwise).

import {
  APPEND_RECORDS_MAX, CREATION_TOKEN_BYTES_MAX, FENCING_TOKEN_BYTES_MAX, RECORD_CONTENT_BYTES_MAX,
  RECORD_HEADERS_MAX,
} from '../config/limits.ts';
import { invalid } from '../core/errors.ts';
import { checkBatch } from './rules.ts';
import type { BucketCreate, StreamConfigInput, StreamCreate } from '../core/service-api.ts';
import {
  BUCKET_CONFIG_KEYS, PRODUCER_POLICIES, STORAGE_CLASSES, STREAM_CONFIG_KEYS, TIMESTAMPING_MODES,
  type AppendAck, type AppendInput, type BucketConfig, type Position, type Header, type RecordInput, type SequencedRecord,
} from '../core/types.ts';

type Json = Record<string, unknown>;

export function parseJsonObject(body: Uint8Array, allowEmpty: boolean): Json {
  if (body.length === 0 || isBlank(body)) {
    if (allowEmpty) return {};
    throw invalid('request body is required');
  }
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.length).toString('utf8'));
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

const B64_RE = /^[A-Za-z0-9+/]*={0,2}$/;
const B64URL_RE = /^[A-Za-z0-9_-]*={0,2}$/;

/** Strict base64 (standard or url-safe alphabet); anything else is a 400. */
export function decodeB64(s: unknown, field: string): Buffer {
  if (typeof s !== 'string') throw invalid(`${field} must be a base64 string`);
  const clean = s.length % 4 === 1 ? null : s;
  if (clean === null || !(B64_RE.test(s) || B64URL_RE.test(s))) throw invalid(`${field} is not valid base64`);
  return Buffer.from(s, B64_RE.test(s) ? 'base64' : 'base64url');
}

export function u64(v: unknown, field: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw invalid(`${field} must be a non-negative integer`);
  return v;
}

function i64(v: unknown, field: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw invalid(`${field} must be an integer`);
  return v;
}

function str(v: unknown, field: string, maxBytes: number): string {
  if (typeof v !== 'string') throw invalid(`${field} must be a string`);
  if (Buffer.byteLength(v) > maxBytes) throw invalid(`${field} is longer than ${maxBytes} bytes`);
  return v;
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
    case 'location': return str(v, k, 256);
    default: return u64(v, k);
  }
}

const STREAM_FIELDS = new Set<string>(STREAM_CONFIG_KEYS);
const BUCKET_FIELDS = new Set<string>(BUCKET_CONFIG_KEYS);
/** Read-only fields a client may echo back (a GET's answer sent as a body); they are ignored. */
const STREAM_ECHO_FIELDS = new Set(['stream_id', 'bucket', 'key', 'created_at_unix_ms', 'fencing_token']);
const BUCKET_ECHO_FIELDS = new Set(['created_at_unix_ms']);

export function decodeStreamConfig(o: Json, withToken: boolean): StreamCreate {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === null) continue;
    if (STREAM_FIELDS.has(k)) out[k] = configField(k, v, true);
    else if (withToken && k === 'creation_token') out[k] = str(v, k, CREATION_TOKEN_BYTES_MAX);
    else if (!STREAM_ECHO_FIELDS.has(k)) throw invalid(`unknown field ${k}`);
  }
  return out as StreamCreate;
}

export function decodeStreamPatch(o: Json): StreamConfigInput {
  return decodeStreamConfig(o, false);
}

export function decodeBucketConfig(o: Json, pathName: string, withToken: boolean): BucketCreate {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === null) continue;
    if (k === 'name') {
      if (v !== pathName) throw invalid(`body names bucket ${String(v)} but the path names ${pathName}`);
    } else if (BUCKET_FIELDS.has(k)) {
      const x = configField(k, v, false);
      out[k] = x;
    } else if (k === 'creation_token') {
      if (withToken) out[k] = str(v, k, CREATION_TOKEN_BYTES_MAX);
    } else if (!BUCKET_ECHO_FIELDS.has(k)) throw invalid(`unknown field ${k}`);
  }
  return out as Partial<BucketConfig> & { creation_token?: string };
}

function decodeHeader(h: unknown, where: string): Header {
  if (h === null || typeof h !== 'object' || Array.isArray(h)) throw invalid(`${where} must be an object`);
  const o = h as Json;
  const hasName = o.name !== undefined;
  const hasNameB64 = o.name_b64 !== undefined;
  if (hasName === hasNameB64) throw invalid(`${where}: exactly one of name or name_b64 is required`);
  const name = hasName ? Buffer.from(str(o.name, `${where}.name`, RECORD_CONTENT_BYTES_MAX), 'utf8') : decodeB64(o.name_b64, `${where}.name_b64`);
  if (o.value !== undefined && o.value_b64 !== undefined) throw invalid(`${where}: at most one of value or value_b64`);
  const value = o.value !== undefined
    ? Buffer.from(str(o.value, `${where}.value`, RECORD_CONTENT_BYTES_MAX), 'utf8')
    : o.value_b64 !== undefined ? decodeB64(o.value_b64, `${where}.value_b64`) : Buffer.alloc(0);
  return { name, value };
}

function decodeRecord(r: unknown, i: number): RecordInput {
  const where = `records[${i}]`;
  if (r === null || typeof r !== 'object' || Array.isArray(r)) throw invalid(`${where} must be an object`);
  const o = r as Json;
  const hasBody = o.body !== undefined;
  const hasB64 = o.body_b64 !== undefined;
  if (hasBody === hasB64) throw invalid(`${where}: exactly one of body or body_b64 is required`);
  const body = hasBody ? Buffer.from(str(o.body, `${where}.body`, RECORD_CONTENT_BYTES_MAX), 'utf8') : decodeB64(o.body_b64, `${where}.body_b64`);
  let headers: Header[] = [];
  if (o.headers !== undefined && o.headers !== null) {
    if (!Array.isArray(o.headers)) throw invalid(`${where}.headers must be an array`);
    if (o.headers.length > RECORD_HEADERS_MAX) throw invalid(`${where} has more than ${RECORD_HEADERS_MAX} headers`); // before decoding them
    headers = o.headers.map((h, j) => decodeHeader(h, `${where}.headers[${j}]`));
  }
  const out: RecordInput = { headers, body };
  if (o.timestamp_ms !== undefined && o.timestamp_ms !== null) {
    out.timestamp_ms = i64(o.timestamp_ms, `${where}.timestamp_ms`); // the sign is checkBatch's
  }
  return out;
}

export function decodeAppend(body: Uint8Array): AppendInput {
  const o = parseJsonObject(body, false);
  for (const k of Object.keys(o)) {
    if (k !== 'records' && k !== 'match_seq_num' && k !== 'fencing_token') throw invalid(`unknown field ${k}`);
  }
  if (!Array.isArray(o.records) || o.records.length === 0) throw invalid('records must be a non-empty array');
  if (o.records.length > APPEND_RECORDS_MAX) throw invalid(`a batch holds at most ${APPEND_RECORDS_MAX} records`);
  const records = o.records.map(decodeRecord);
  checkBatch(records);
  const out: AppendInput = { records };
  if (o.match_seq_num !== undefined && o.match_seq_num !== null) out.match_seq_num = u64(o.match_seq_num, 'match_seq_num');
  if (o.fencing_token !== undefined && o.fencing_token !== null) out.fencing_token = str(o.fencing_token, 'fencing_token', FENCING_TOKEN_BYTES_MAX);
  return out;
}

// ---------------------------------------------------------------------------- output

const positionJson = (p: Position): string => `{"seq_num":${p.seq_num},"timestamp_ms":${p.timestamp_ms}}`;

/** The append answer, written directly: it is on every append's path, and JSON.stringify of the
 *  nested object showed as 6 % of the main thread in profiles of single-record appends. */
export function encodeAppendAck(a: AppendAck): string {
  return `{"start":${positionJson(a.start)},"end":${positionJson(a.end)},"tail":${positionJson(a.tail)}}`;
}

// ignoreBOM: a leading U+FEFF is content, and reads are never lossy.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function asUtf8(b: Uint8Array): string | undefined {
  try { return utf8.decode(b); } catch { return undefined; }
}

const b64 = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.length).toString('base64');

function byteField(out: Json, name: string, b: Uint8Array, base64: boolean): void {
  if (base64) { out[name] = b64(b); return; }
  const s = asUtf8(b);
  if (s === undefined) out[`${name}_b64`] = b64(b);
  else out[name] = s;
}

export function encodeRecord(r: SequencedRecord, base64: boolean): Json {
  const out: Json = { seq_num: r.seq_num, timestamp_ms: r.timestamp_ms };
  if (r.headers.length) {
    out.headers = r.headers.map((h) => {
      const o: Json = {};
      byteField(o, 'name', h.name, base64);
      byteField(o, 'value', h.value, base64);
      return o;
    });
  }
  byteField(out, 'body', r.body, base64);
  return out;
}
