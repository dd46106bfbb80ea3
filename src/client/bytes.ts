// Byte helpers that run in browsers and in Node alike: UTF-8 through TextEncoder/TextDecoder and
// base64 through Buffer when the runtime has one (Node: native speed), else through btoa/atob.
// Nothing here imports a `node:` module, so the HTTP client stays browser-safe.

const encoder = new TextEncoder();
const fatalDecoder = new TextDecoder('utf-8', { fatal: true });
const lossyDecoder = new TextDecoder('utf-8');

/** Node's Buffer, found at run time (never imported), or undefined in a browser. */
interface BufferLike {
  from(data: Uint8Array | ArrayBufferLike | string, byteOffsetOrEncoding?: number | string, length?: number): Uint8Array & { toString(encoding: string): string };
}
const NodeBuffer: BufferLike | undefined = (globalThis as { Buffer?: BufferLike }).Buffer;

/** Characters handed to String.fromCharCode at once when base64-encoding without Buffer (stays under
 *  every engine's argument-count limit). */
const FROM_CHAR_CODE_CHUNK_BYTES = 0x8000;

export function utf8Encode(s: string): Uint8Array {
  return encoder.encode(s);
}

/** The text of `b` when it is valid UTF-8, else undefined (never lossy). */
export function utf8DecodeStrict(b: Uint8Array): string | undefined {
  try {
    return fatalDecoder.decode(b);
  } catch {
    return undefined;
  }
}

/** The text of `b`, with U+FFFD for invalid sequences (for display only). */
export function utf8DecodeLossy(b: Uint8Array): string {
  return lossyDecoder.decode(b);
}

export function base64Encode(b: Uint8Array): string {
  if (NodeBuffer) return NodeBuffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
  let bin = '';
  for (let i = 0; i < b.length; i += FROM_CHAR_CODE_CHUNK_BYTES) {
    bin += String.fromCharCode(...b.subarray(i, i + FROM_CHAR_CODE_CHUNK_BYTES));
  }
  return btoa(bin);
}

const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

/** Decodes standard base64 (padding optional); throws on other characters, so a corrupt answer is
 *  never silently read as different bytes. */
export function base64Decode(s: string): Uint8Array {
  if (!BASE64_RE.test(s) || s.length % 4 === 1) throw new TypeError('not base64');
  if (NodeBuffer) {
    const b = NodeBuffer.from(s, 'base64');
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  }
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** `s` as bytes: strings are UTF-8. */
export function toBytes(s: string | Uint8Array): Uint8Array {
  return typeof s === 'string' ? utf8Encode(s) : s;
}
