// Records on the JSON wire: text rides `body`, bytes ride `body_b64` (and the same for header names
// and values); read answers are decoded field by field back to bytes, whichever sibling carried them.

import type { JsonRecordInput } from '../../protocol/json.ts';
import type { RecordPage } from '../../protocol/records.ts';
import { utf8ByteLength } from '../../protocol/utf8.ts';
import { base64Decode, base64Encode, utf8Encode } from '../bytes.ts';
import { SvcError } from '../errors.ts';
import type { AppendRecord, Position, ReadRecord, RecordHeader } from '../types.ts';

/** Bytes a record adds to a JSON batch beyond its content (braces, field names): an estimate used
 *  only to keep batches under their byte bound. */
export const RECORD_JSON_OVERHEAD_BYTES = 16;

function byteField(out: Record<string, string>, name: string, v: string | Uint8Array): void {
  if (typeof v === 'string') out[name] = v;
  else out[`${name}_b64`] = base64Encode(v);
}

export function encodeRecord(r: AppendRecord): JsonRecordInput {
  const out: JsonRecordInput = {};
  byteField(out as Record<string, string>, 'body', r.body);
  if (r.headers && r.headers.length > 0) {
    out.headers = r.headers.map(([n, v]) => {
      const h: Record<string, string> = {};
      byteField(h, 'name', n);
      byteField(h, 'value', v);
      return h;
    });
  }
  if (r.timestamp_ms !== undefined) out.timestamp_ms = r.timestamp_ms;
  return out;
}

const lenOf = (v: string | Uint8Array): number => (typeof v === 'string' ? utf8ByteLength(v) : v.length);

/** The record's content in bytes (body plus headers), as the server's caps count it. */
export function recordBytes(r: AppendRecord): number {
  let n = lenOf(r.body);
  if (r.headers) for (const [name, value] of r.headers) n += lenOf(name) + lenOf(value);
  return n;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function bytesOf(o: Record<string, unknown>, name: string, required: boolean): Uint8Array {
  const plain = o[name];
  if (typeof plain === 'string') return utf8Encode(plain);
  const b64 = o[`${name}_b64`];
  if (typeof b64 === 'string') {
    try {
      return base64Decode(b64);
    } catch {
      throw new SvcError('protocol', `${name}_b64 in the answer is not base64`);
    }
  }
  if (required) throw new SvcError('protocol', `a record in the answer has neither ${name} nor ${name}_b64`);
  return new Uint8Array(0);
}

export function decodePosition(v: unknown, what: string): Position {
  if (!isObject(v) || typeof v.seq_num !== 'number' || typeof v.timestamp_ms !== 'number') {
    throw new SvcError('protocol', `the answer's ${what} is not a position`);
  }
  return { seq_num: v.seq_num, timestamp_ms: v.timestamp_ms };
}

export function decodeRecord(v: unknown): ReadRecord {
  if (!isObject(v) || typeof v.seq_num !== 'number' || typeof v.timestamp_ms !== 'number') {
    throw new SvcError('protocol', 'a record in the answer has no seq_num or timestamp_ms');
  }
  const headers: RecordHeader[] = [];
  if (Array.isArray(v.headers)) {
    for (const h of v.headers) {
      if (!isObject(h)) throw new SvcError('protocol', 'a header in the answer is not an object');
      headers.push({ name: bytesOf(h, 'name', true), value: bytesOf(h, 'value', false) });
    }
  }
  return { seq_num: v.seq_num, timestamp_ms: v.timestamp_ms, headers, body: bytesOf(v, 'body', true) };
}

/** `{records, tail}` of a read page or an SSE batch frame. */
export function decodeRecordsAnswer(v: unknown, what: string): RecordPage {
  if (!isObject(v) || !Array.isArray(v.records)) throw new SvcError('protocol', `the ${what} answer has no records array`);
  return { records: v.records.map(decodeRecord), tail: decodePosition(v.tail, `${what} tail`) };
}
