// Record formats on the command line, in and out:
//   text    (default) in: each line is one record, its body the line's bytes without the newline;
//           out: each body followed by a newline. Bodies are bytes: a line that is not UTF-8 is sent
//           as bytes (body_b64) and printed back byte for byte.
//   json    one object per line, the spec's record shape: in {body|body_b64, headers?, timestamp_ms?}
//           with headers [{name|name_b64, value|value_b64}]; out adds seq_num and timestamp_ms, and a
//           byte field that is not UTF-8 rides its _b64 sibling.
//   base64  one base64 body per line.

import { base64Decode, base64Encode, utf8DecodeStrict } from '../../client/bytes.ts';
import type { AppendRecord, HeaderInput, ReadRecord } from '../../client/index.ts';
import { UsageError } from './args.ts';

export const FORMATS = ['text', 'json', 'base64'] as const;
export type Format = (typeof FORMATS)[number];

/** The longest input line: a record holds at most 1 MiB of content, which JSON or base64 enlarge. */
export const LINE_BYTES_MAX = 4 * 1024 * 1024;

export function parseFormat(v: string | undefined): Format {
  if (v === undefined) return 'text';
  if ((FORMATS as readonly string[]).includes(v)) return v as Format;
  throw new UsageError(`--format must be one of ${FORMATS.join(', ')}, got ${JSON.stringify(v)}`);
}

/** Input data that cannot become a record (line number included). */
export class InputError extends Error {}

/** Lines of a byte stream, without their '\n' (a last line without one is still a line). */
export async function* lines(source: AsyncIterable<Uint8Array>, what: string): AsyncGenerator<Uint8Array> {
  let carry: Buffer = Buffer.alloc(0);
  let lineNo = 0;
  for await (const chunk of source) {
    let buf = carry.length > 0 ? Buffer.concat([carry, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    for (let nl = buf.indexOf(10, start); nl >= 0; nl = buf.indexOf(10, start)) {
      lineNo++;
      yield buf.subarray(start, nl);
      start = nl + 1;
    }
    buf = buf.subarray(start);
    if (buf.length > LINE_BYTES_MAX) throw new InputError(`${what}: line ${lineNo + 1} is longer than ${LINE_BYTES_MAX} bytes`);
    carry = Buffer.from(buf); // copy: the chunk's memory is not ours to keep
  }
  if (carry.length > 0) yield carry;
}

function bytesField(o: Record<string, unknown>, name: string, required: boolean, where: string): string | Uint8Array {
  // The spec: exactly one of body / body_b64 (at most one of value / value_b64); never pick one.
  if (o[name] !== undefined && o[`${name}_b64`] !== undefined) throw new InputError(`${where}: both ${name} and ${name}_b64`);
  if (typeof o[name] === 'string') return o[name] as string;
  const b = o[`${name}_b64`];
  if (typeof b === 'string') {
    try {
      return base64Decode(b);
    } catch {
      throw new InputError(`${where}: ${name}_b64 is not base64`);
    }
  }
  if (required) throw new InputError(`${where}: needs ${name} or ${name}_b64`);
  return '';
}

/** One input line as a record. */
export function recordFromLine(line: Uint8Array, format: Format, where: string): AppendRecord {
  if (format === 'text') {
    const text = utf8DecodeStrict(line);
    return { body: text ?? new Uint8Array(line) };
  }
  const text = utf8DecodeStrict(line);
  if (text === undefined) throw new InputError(`${where}: not UTF-8`);
  if (format === 'base64') {
    try {
      return { body: base64Decode(text.trim()) };
    } catch {
      throw new InputError(`${where}: not base64`);
    }
  }
  let o: unknown;
  try { o = JSON.parse(text); } catch { throw new InputError(`${where}: not JSON`); }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new InputError(`${where}: a record is a JSON object`);
  const r = o as Record<string, unknown>;
  const rec: AppendRecord = { body: bytesField(r, 'body', true, where) };
  if (r.headers !== undefined) {
    if (!Array.isArray(r.headers)) throw new InputError(`${where}: headers is an array`);
    rec.headers = r.headers.map((h: unknown, i: number): HeaderInput => {
      if (typeof h !== 'object' || h === null) throw new InputError(`${where}: headers[${i}] is an object`);
      const ho = h as Record<string, unknown>;
      return [bytesField(ho, 'name', true, `${where} headers[${i}]`), bytesField(ho, 'value', false, `${where} headers[${i}]`)];
    });
  }
  if (r.timestamp_ms !== undefined) {
    if (typeof r.timestamp_ms !== 'number' || !Number.isSafeInteger(r.timestamp_ms)) throw new InputError(`${where}: timestamp_ms is an integer`);
    rec.timestamp_ms = r.timestamp_ms;
  }
  return rec;
}

function put(o: Record<string, unknown>, name: string, b: Uint8Array): void {
  const s = utf8DecodeStrict(b);
  if (s === undefined) o[`${name}_b64`] = base64Encode(b);
  else o[name] = s;
}

/** A record as printed, newline included. */
export function recordToOutput(r: ReadRecord, format: Format): string | Uint8Array {
  if (format === 'text') {
    const out = new Uint8Array(r.body.length + 1);
    out.set(r.body);
    out[r.body.length] = 10;
    return out;
  }
  if (format === 'base64') return `${base64Encode(r.body)}\n`;
  const o: Record<string, unknown> = { seq_num: r.seq_num, timestamp_ms: r.timestamp_ms };
  if (r.headers.length > 0) {
    o.headers = r.headers.map((h) => {
      const ho: Record<string, unknown> = {};
      put(ho, 'name', h.name);
      put(ho, 'value', h.value);
      return ho;
    });
  }
  put(o, 'body', r.body);
  return `${JSON.stringify(o)}\n`;
}
