// Presigned object URLs for ReadPlan's `presigned` vending on the fs backend: the star signs a GET of
// one settled object with its own secret, and serves it itself on the data bridge:
//
//   GET /v1/objects/{percent-encoded object key}?size=<bytes>&expires=<unix ms>&sig=<base64url>
//   Range: bytes=a-b | bytes=a- | bytes=-n        (optional; one range)
//
// sig = HMAC-SHA256(secret, "GET\n" + object key + "\n" + size + "\n" + expires), base64url.
// The signature is the route's whole authorization (level 'open'): a bad or missing signature and an
// expired URL are 403; a ranged GET answers 206 with Content-Range, a plain GET 200 with the object;
// a range starting past the object is 416. The object size rides the signed URL (segments are
// immutable), so a ranged read never needs a stat of the object.
//
// The secret lives in <dataDir>/presign.key (32 random bytes, created 0600 at first start), so URLs
// stay valid across a restart of the same star until they expire.

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, openSync, readFileSync, writeSync, closeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ServiceError } from '../core/errors.ts';
import type { ObjectStore } from '../storage/objects/object-store.ts';

/** Length of a freshly generated presign secret. */
export const PRESIGN_SECRET_BYTES = 32;
/** Shortest secret accepted from disk (a truncated key file refuses to boot rather than sign weakly). */
export const PRESIGN_SECRET_BYTES_MIN = 32;
/** File name of the secret inside the data dir. */
export const PRESIGN_KEY_FILE = 'presign.key';
/** Largest single response of the object route (a whole segment is at most a WAL file plus footer). */
export const PRESIGN_RESPONSE_BYTES_MAX = 256 * 1024 * 1024;
/** Path prefix of the object route on the data bridge. */
export const OBJECT_ROUTE_PREFIX = '/v1/objects/';

/** Reads <dataDir>/presign.key, creating it (0600, random) at first start. */
export function loadPresignSecret(dataDir: string): Buffer {
  const path = join(dataDir, PRESIGN_KEY_FILE);
  try {
    const fd = openSync(path, 'wx', 0o600);
    try {
      writeSync(fd, randomBytes(PRESIGN_SECRET_BYTES));
    } finally {
      closeSync(fd);
    }
    chmodSync(path, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const secret = readFileSync(path);
  if (secret.length < PRESIGN_SECRET_BYTES_MIN) throw new Error(`${path} holds ${secret.length} bytes; need at least ${PRESIGN_SECRET_BYTES_MIN}`);
  return secret;
}

export interface SignedObject {
  objectKey: string;
  sizeBytes: number;
  expiresAtMs: number;
}

/** Percent-encodes an object key as one path segment (every byte outside A-Z a-z 0-9 - . _ ~). */
export function encodeObjectKey(key: string): string {
  return encodeURIComponent(key).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export class Presigner {
  private readonly secret: Buffer;
  /** e.g. http://127.0.0.1:8080 (no trailing slash). */
  readonly baseUrl: string;

  constructor(secret: Buffer, baseUrl: string) {
    if (secret.length < PRESIGN_SECRET_BYTES_MIN) throw new RangeError('presign secret too short');
    this.secret = secret;
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  private sign(o: SignedObject): Buffer {
    return createHmac('sha256', this.secret).update(`GET\n${o.objectKey}\n${o.sizeBytes}\n${o.expiresAtMs}`).digest();
  }

  /** An absolute URL a consumer may GET (with its own Range) until `expiresAtMs`. */
  url(o: SignedObject): string {
    const q = new URLSearchParams({ size: String(o.sizeBytes), expires: String(o.expiresAtMs), sig: this.sign(o).toString('base64url') });
    return `${this.baseUrl}${OBJECT_ROUTE_PREFIX}${encodeObjectKey(o.objectKey)}?${q.toString()}`;
  }

  /** Checks a request's signature and expiry; throws 403 (permission_denied) otherwise. */
  verify(objectKey: string, query: URLSearchParams, nowMs: number): SignedObject {
    const denied = (why: string): ServiceError => new ServiceError('permission_denied', `presigned URL refused: ${why}`);
    const size = query.get('size');
    const expires = query.get('expires');
    const sig = query.get('sig');
    if (size === null || expires === null || sig === null) throw denied('size, expires and sig are required');
    if (!/^\d{1,16}$/.test(size) || !/^\d{1,16}$/.test(expires) || !/^[A-Za-z0-9_-]{1,100}$/.test(sig)) throw denied('malformed');
    const o: SignedObject = { objectKey, sizeBytes: Number(size), expiresAtMs: Number(expires) };
    const want = this.sign(o);
    const got = Buffer.from(sig, 'base64url');
    if (got.length !== want.length || !timingSafeEqual(got, want)) throw denied('bad signature');
    if (nowMs >= o.expiresAtMs) throw denied('expired');
    return o;
  }
}

export interface ByteRangeReq {
  start: number;
  /** Inclusive. */
  end: number;
}

/** Parses one `bytes=` range against an object of `size` bytes; undefined means the whole object.
 *  Throws 416 (range_not_satisfiable) for a range that selects nothing, 400 for a malformed one. */
export function parseRange(header: string | undefined, size: number): ByteRangeReq | undefined {
  if (header === undefined || header === '') return undefined;
  const m = /^bytes=(\d{0,16})-(\d{0,16})$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) throw new ServiceError('invalid_argument', 'Range must be one bytes=a-b, bytes=a- or bytes=-n');
  let start: number;
  let end: number;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0) throw new ServiceError('range_not_satisfiable', 'an empty suffix range selects nothing');
    start = Math.max(0, size - n);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
    if (m[2] !== '' && Number(m[2]) < start) throw new ServiceError('invalid_argument', 'Range end is before its start');
  }
  if (start >= size) throw new ServiceError('range_not_satisfiable', `range starts past the object's ${size} bytes`);
  return { start, end };
}

export interface ObjectResponse {
  status: number;
  headers: [string, string][];
  body: Buffer;
}

/** What the object route needs: the verifier and the store it reads (installed by main.ts). */
export interface ObjectVending {
  presigner: Presigner;
  objects: ObjectStore;
  nowMs(): number;
}

/** GET /v1/objects/{key}: verifies the signature, then serves the object or the requested range. */
export async function serveSignedObject(v: ObjectVending | undefined, objectKey: string, query: URLSearchParams, rangeHeader: string | undefined): Promise<ObjectResponse> {
  if (!v) throw new ServiceError('not_found', 'this star vends no presigned objects');
  const o = v.presigner.verify(objectKey, query, v.nowMs());
  if (o.sizeBytes > PRESIGN_RESPONSE_BYTES_MAX && rangeHeader === undefined) {
    throw new ServiceError('invalid_argument', `objects over ${PRESIGN_RESPONSE_BYTES_MAX} bytes are served by range only`);
  }
  const range = parseRange(rangeHeader, o.sizeBytes);
  const from = range?.start ?? 0;
  const length = range ? range.end - range.start + 1 : o.sizeBytes;
  if (length > PRESIGN_RESPONSE_BYTES_MAX) throw new ServiceError('invalid_argument', `a range is at most ${PRESIGN_RESPONSE_BYTES_MAX} bytes`);
  let body: Buffer;
  try {
    body = length === 0 ? Buffer.alloc(0) : await v.objects.get(objectKey, { offset: from, length });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new ServiceError('not_found', 'the object is gone (trimmed or deleted): re-plan');
    throw err;
  }
  const headers: [string, string][] = [
    ['Content-Type', 'application/octet-stream'],
    ['Accept-Ranges', 'bytes'],
    ['Cache-Control', 'private, immutable'],
  ];
  if (!range) return { status: 200, headers, body };
  headers.push(['Content-Range', `bytes ${from}-${from + body.length - 1}/${o.sizeBytes}`]);
  return { status: 206, headers, body };
}

/** The data bridge's base URL as consumers reach it: a wildcard listen address names this host. */
export function bridgeBaseUrl(host: string, port: number, tls: boolean): string {
  const h = host === '0.0.0.0' || host === '::' || host === '' ? hostname() : host;
  return `${tls ? 'https' : 'http'}://${h.includes(':') ? `[${h}]` : h}:${port}`;
}
