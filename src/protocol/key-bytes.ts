// Stream keys are byte strings (spec: "The key is any byte string"; gRPC carries them as bytes). The
// core holds a key as a JS string: valid UTF-8 decodes as usual, and each byte of an invalid sequence
// becomes the lone surrogate U+DC00 + byte (the "surrogateescape" of Python's PEP 383). Decoding
// valid UTF-8 never yields a lone surrogate, so the mapping is one-to-one: the same bytes reach the
// same stream over HTTP (percent-encoded) and gRPC, and no byte key collides with a text key.

//
// Part of the protocol leaf: browser-safe (no `node:` import, no Node global it cannot do without),
// so the browser client and the server map keys the same way.

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const utf8Encoder = new TextEncoder();

/** Node's Buffer, found at run time (never imported), or undefined in a browser. Its UTF-8 encoder
 *  takes about a fifth of TextEncoder's time on short strings in Node 20, and a key is encoded on
 *  every request a scope grant is checked against. */
interface HostBuffer { from(s: string, encoding: 'utf8'): Uint8Array }
const NodeBuffer: HostBuffer | undefined = (globalThis as { Buffer?: HostBuffer }).Buffer;

/** UTF-8 bytes of `s` (a lone surrogate as U+FFFD's, as both encoders do). */
const utf8Bytes: (s: string) => Uint8Array = NodeBuffer
  ? (s) => NodeBuffer.from(s, 'utf8')
  : (s) => utf8Encoder.encode(s);

const ESCAPE_BASE = 0xdc00;

/** The key named by `bytes`. */
export function keyFromBytes(bytes: Uint8Array): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return decodeEscaping(bytes);
  }
}

/** The bytes a key names (the inverse of keyFromBytes). In Node they are a Buffer at run time;
 *  storage/format/key-bytes.ts gives server code that needs the Buffer type its own view. */
export function keyToBytes(key: string): Uint8Array {
  if (keyIsText(key)) return utf8Bytes(key);
  const parts: Uint8Array[] = [];
  let length = 0;
  let run = 0;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (isEscapedByte(key, i, c)) {
      if (run < i) length += push(parts, utf8Bytes(key.slice(run, i)));
      length += push(parts, Uint8Array.of(c - ESCAPE_BASE));
      run = i + 1;
    }
  }
  if (run < key.length) length += push(parts, utf8Bytes(key.slice(run)));
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function push(parts: Uint8Array[], p: Uint8Array): number {
  parts.push(p);
  return p.length;
}

/** Whether the key's bytes are valid UTF-8 (it holds no escaped byte). */
export function keyIsText(key: string): boolean {
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff && isEscapedByte(key, i, c)) return false;
  }
  return true;
}

/** A low surrogate U+DC80–U+DCFF that is not the second half of a pair stands for one raw byte. */
function isEscapedByte(key: string, i: number, c: number): boolean {
  if (c < ESCAPE_BASE + 0x80 || c > ESCAPE_BASE + 0xff) return false;
  const prev = i > 0 ? key.charCodeAt(i - 1) : 0;
  return !(prev >= 0xd800 && prev <= 0xdbff);
}

/** UTF-8 decoding where every byte that does not start a well-formed sequence is escaped alone. */
function decodeEscaping(b: Uint8Array): string {
  let out = '';
  let i = 0;
  while (i < b.length) {
    const n = wellFormedLength(b, i);
    if (n === 0) {
      out += String.fromCharCode(ESCAPE_BASE + b[i]);
      i += 1;
    } else {
      out += strictUtf8.decode(b.subarray(i, i + n));
      i += n;
    }
  }
  return out;
}

/** Length of the well-formed UTF-8 sequence at b[i] (Unicode Table 3-7), or 0 when there is none. */
function wellFormedLength(b: Uint8Array, i: number): number {
  const c0 = b[i];
  if (c0 < 0x80) return 1;
  const cont = (k: number, lo = 0x80, hi = 0xbf): boolean => i + k < b.length && b[i + k] >= lo && b[i + k] <= hi;
  if (c0 >= 0xc2 && c0 <= 0xdf) return cont(1) ? 2 : 0;
  if (c0 === 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if ((c0 >= 0xe1 && c0 <= 0xec) || c0 === 0xee || c0 === 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (c0 === 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;
  if (c0 === 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c0 >= 0xf1 && c0 <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c0 === 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

/** A string for people: each escaped byte as \xHH, any other lone surrogate as U+FFFD. */
export function showRawBytes(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    out += isEscapedByte(s, i, c) ? `\\x${(c - ESCAPE_BASE).toString(16).toUpperCase().padStart(2, '0')}` : s[i];
  }
  return out.toWellFormed();
}
