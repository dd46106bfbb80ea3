// The textual stream address of the spec, `svc://<bucket>/<key>`, parsed and printed; and the one
// percent-encoding of a key used both there and in HTTP paths.
//
// Printing encodes every key byte outside A-Z a-z 0-9 - . _ ~ as %HH (uppercase hex), the spec's rule
// for keys in scope grants, so a printed key pastes into a grant unchanged and `orders/eu` prints as
// `orders%2Feu`. Parsing is lenient where nothing is ambiguous: a bucket name cannot hold '/', so every
// character after the bucket's slash belongs to the key, a raw '/' included (`svc://b/orders/eu` names
// the key `orders/eu`), and characters other than '%' stand for their UTF-8 bytes. A '%' must start
// a %HH escape. parse(format(a)) gives `a` back for every address; format(parse(s)) is canonical.

import { BUCKET_NAME_BYTES_MAX, STREAM_KEY_BYTES_MAX } from '../protocol/limits.ts';
import { isBucketName } from '../protocol/rules.ts';
import { utf8DecodeStrict, utf8Encode } from './bytes.ts';

/** A stream key: text (sent as its UTF-8 bytes) or raw bytes (the spec lets a key be any bytes). */
export type StreamKey = string | Uint8Array;

export interface BucketAddress {
  bucket: string;
}

export interface StreamAddress {
  bucket: string;
  key: StreamKey;
}

/** `svc://bucket` or `svc://bucket/key`. */
export interface SvcAddress {
  bucket: string;
  key?: StreamKey;
}

export const ADDRESS_SCHEME = 'svc://';
/** Bucket names: 1-128 of A-Z a-z 0-9 . _ -, starting with a letter or digit (the server's rule;
 *  the characters are ASCII, so its byte bound counts characters). */
export const BUCKET_NAME_CHARS_MAX = BUCKET_NAME_BYTES_MAX;
/** Keys: 1-1024 bytes (the server's rule). */
export const KEY_BYTES_MAX = STREAM_KEY_BYTES_MAX;

const HEX = '0123456789ABCDEF';

/** A string that is not a valid address, with the reason. */
export class AddressError extends Error {
  constructor(readonly input: string, reason: string) {
    super(`bad address ${JSON.stringify(input)}: ${reason}`);
    this.name = 'AddressError';
  }
}

/** The bytes of a key (UTF-8 for text). */
export function keyBytes(key: StreamKey): Uint8Array {
  return typeof key === 'string' ? utf8Encode(key) : key;
}

/** A key as text when its bytes are UTF-8, else the bytes themselves. */
export function keyFromBytes(bytes: Uint8Array): StreamKey {
  return utf8DecodeStrict(bytes) ?? bytes;
}

function isUnreserved(b: number): boolean {
  return (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a)
    || b === 0x2d || b === 0x2e || b === 0x5f || b === 0x7e;
}

/** The key as one percent-encoded segment: every byte outside A-Z a-z 0-9 - . _ ~ as %HH. */
export function encodeKey(key: StreamKey): string {
  const bytes = keyBytes(key);
  let out = '';
  for (const b of bytes) out += isUnreserved(b) ? String.fromCharCode(b) : `%${HEX[b >> 4]}${HEX[b & 15]}`;
  return out;
}

/** Why `bucket` is not a bucket name (the server's rule, protocol/rules.ts), or undefined. */
export function checkBucketName(bucket: string): string | undefined {
  if (isBucketName(bucket)) return undefined;
  if (bucket.length === 0) return 'the bucket name is empty';
  if (bucket.length > BUCKET_NAME_CHARS_MAX) return `the bucket name is longer than ${BUCKET_NAME_CHARS_MAX} characters`;
  return 'a bucket name is A-Z a-z 0-9 . _ - and starts with a letter or digit';
}

/** Parses `svc://bucket` or `svc://bucket/key`; throws AddressError with the reason. */
export function parseAddress(text: string): SvcAddress {
  if (text.slice(0, ADDRESS_SCHEME.length).toLowerCase() !== ADDRESS_SCHEME) {
    throw new AddressError(text, `an address starts with ${ADDRESS_SCHEME}`);
  }
  const rest = text.slice(ADDRESS_SCHEME.length);
  const slash = rest.indexOf('/');
  const bucket = slash < 0 ? rest : rest.slice(0, slash);
  const bad = checkBucketName(bucket);
  if (bad) throw new AddressError(text, bad);
  if (slash < 0) return { bucket };
  const bytes = decodeKeyText(text, rest.slice(slash + 1));
  if (bytes.length === 0) throw new AddressError(text, 'the key is empty (write svc://bucket for a bucket)');
  if (bytes.length > KEY_BYTES_MAX) throw new AddressError(text, `the key is longer than ${KEY_BYTES_MAX} bytes`);
  return { bucket, key: keyFromBytes(bytes) };
}

/** Parses an address that must name a stream. */
export function parseStreamAddress(text: string): StreamAddress {
  const a = parseAddress(text);
  if (a.key === undefined) throw new AddressError(text, 'a stream address is svc://bucket/key');
  return { bucket: a.bucket, key: a.key };
}

function decodeKeyText(input: string, s: string): Uint8Array {
  const parts: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x25) {
      const hex = s.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw new AddressError(input, `'%' at key offset ${i} does not start a %HH escape`);
      parts.push(parseInt(hex, 16));
      i += 2;
    } else if (c < 0x80) {
      parts.push(c);
    } else {
      // One code point (a surrogate pair stays whole) as its UTF-8 bytes.
      const cp = s.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      if (cp > 0xffff) i++;
      else if (cp >= 0xd800 && cp <= 0xdfff) throw new AddressError(input, 'the key holds a lone surrogate');
      for (const b of utf8Encode(ch)) parts.push(b);
    }
  }
  return Uint8Array.from(parts);
}

/** Prints the canonical `svc://bucket[/key]`. */
export function formatAddress(addr: SvcAddress): string {
  const bad = checkBucketName(addr.bucket);
  if (bad) throw new AddressError(addr.bucket, bad);
  if (addr.key === undefined) return `${ADDRESS_SCHEME}${addr.bucket}`;
  return `${ADDRESS_SCHEME}${addr.bucket}/${encodeKey(addr.key)}`;
}
