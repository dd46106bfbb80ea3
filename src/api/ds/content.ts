// Content types and message framing. A stream's content type decides how appends become messages
// (JSON: each top-level value, an array flattened one level; anything else: the bytes as sent) and how
// reads answer them (JSON: one array of the messages; bytes: concatenated; SSE: text lines or base64).

import { DS_RECORD_CHUNK_BYTES_MAX } from './limits.ts';
import { dsInvalid } from './errors.ts';

export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

/** The media type without parameters, lowercased: what two content types are compared by. */
export function mediaType(ct: string): string {
  return ct.split(';')[0].trim().toLowerCase();
}

export const isJson = (ct: string): boolean => mediaType(ct) === 'application/json';

/** Text streams ride SSE as text lines; everything else as base64. */
export function isText(ct: string): boolean {
  const m = mediaType(ct);
  return m.startsWith('text/') || m === 'application/json' || m.endsWith('+json') || m === 'application/x-ndjson';
}

/** The messages of an append body. JSON bodies must parse; an empty JSON array is 400 on POST (a PUT
 *  with `[]` makes an empty stream). Byte bodies are cut to fit svcd's record cap; reads rejoin them. */
export function messagesOf(body: Buffer, contentType: string, allowEmptyArray: boolean): Uint8Array[] {
  if (isJson(contentType)) {
    let value: unknown;
    try {
      value = JSON.parse(body.toString('utf8'));
    } catch {
      throw dsInvalid('the body is not valid JSON');
    }
    const values = Array.isArray(value) ? value as unknown[] : [value];
    if (values.length === 0 && !allowEmptyArray) throw dsInvalid('an empty JSON array appends nothing');
    const out = values.map((v) => Buffer.from(JSON.stringify(v), 'utf8'));
    for (const m of out) if (m.length > DS_RECORD_CHUNK_BYTES_MAX) throw dsInvalid(`a JSON message is over ${DS_RECORD_CHUNK_BYTES_MAX} bytes`);
    return out;
  }
  const out: Uint8Array[] = [];
  for (let i = 0; i < body.length; i += DS_RECORD_CHUNK_BYTES_MAX) out.push(body.subarray(i, i + DS_RECORD_CHUNK_BYTES_MAX));
  return out;
}

/** A catch-up read's body: a JSON array of the messages, or their bytes joined. */
export function readBody(messages: Uint8Array[], contentType: string): Buffer {
  if (!isJson(contentType)) return Buffer.concat(messages);
  const parts: Buffer[] = [Buffer.from('[')];
  messages.forEach((m, i) => { if (i > 0) parts.push(Buffer.from(',')); parts.push(Buffer.from(m)); });
  parts.push(Buffer.from(']'));
  return Buffer.concat(parts);
}
