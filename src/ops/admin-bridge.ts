// The admin bridge (spec: Ops listener and admin bridge): `POST /admin/api/{Method}` with a JSON body
// mirroring the verb's proto request message, answering its proto response message as JSON. Only the
// admin plane's read verbs exist here, served by the same functions as gRPC (api/grpc/admin-reads.ts);
// no mutation is reachable. No authentication: the ops listener is for trusted networks only.
//
// JSON shapes: the proto's snake_case field names; 64-bit integers as JSON numbers; enums by name; a
// bytes field (stream keys, record bodies, header names and values) rides its plain name when it is
// valid UTF-8 and its `_b64` sibling otherwise (the spec's read encoding). A request may send a bytes
// field as a UTF-8 string in its plain name or as base64 in its `_b64` sibling. Every field of an
// answer is present; an absent request field takes its proto default; an unknown one is 400.

import { isUtf8 } from 'node:buffer';
import { asServiceError, invalid } from '../core/errors.ts';
import { ADMIN_READ_VERBS, type AdminReadVerb, type AdminReads } from '../api/grpc/admin-reads.ts';
import { httpStatusOf } from '../api/http-status.ts';
import type { OpsAnswer } from './ops-server.ts';

export const ADMIN_API_PREFIX = '/admin/api/';

/** How each request message's fields decode (proto3: an absent field is its default). */
type FieldKind = 'string' | 'bytes' | 'uint32' | 'uint64';
const REQUEST_FIELDS: { readonly [V in AdminReadVerb]: Readonly<Record<string, FieldKind>> } = {
  ListCredentials: { start_after: 'string', limit: 'uint32' },
  Health: {},
  ListStars: {},
  GetClusterOverview: {},
  ListStreamSummaries: { bucket: 'string', start_after: 'string', limit: 'uint32' },
  ListBucketSummaries: { start_after: 'string', limit: 'uint32' },
  GetStreamDetail: { bucket: 'string', key: 'bytes' },
  GetStreamLiveStats: { bucket: 'string', key: 'bytes' },
  ListAuditQueues: {},
  PeekAuditQueue: { name: 'string', limit: 'uint32' },
  ReadStreamRecords: { bucket: 'string', key: 'bytes', seq_num: 'uint64', limit: 'uint32' },
};

const UINT32_MAX = 2 ** 32 - 1;

function defaultOf(kind: FieldKind): unknown {
  return kind === 'string' ? '' : kind === 'bytes' ? Buffer.alloc(0) : 0;
}

const B64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function decodeField(kind: FieldKind, field: string, v: unknown, b64: boolean): unknown {
  if (b64) {
    if (typeof v !== 'string' || !B64_RE.test(v)) throw invalid(`${field}_b64 must be a base64 string`);
    return Buffer.from(v, 'base64');
  }
  switch (kind) {
    case 'string':
      if (typeof v !== 'string') throw invalid(`${field} must be a string`);
      return v;
    case 'bytes':
      if (typeof v !== 'string') throw invalid(`${field} must be a string (or ${field}_b64 base64)`);
      return Buffer.from(v, 'utf8');
    case 'uint32':
    case 'uint64': {
      // Proto JSON also writes integers as decimal strings; 64-bit values stop at 2^53.
      const n = typeof v === 'string' && /^\d{1,16}$/.test(v) ? Number(v) : v;
      const max = kind === 'uint32' ? UINT32_MAX : Number.MAX_SAFE_INTEGER;
      if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0 || n > max) throw invalid(`${field} must be an integer from 0 to ${max}`);
      return n;
    }
  }
}

/** A request body as the verb's request message (defaults filled, bytes as Buffers). */
export function requestFromJson(verb: AdminReadVerb, body: Buffer): Record<string, unknown> {
  let parsed: unknown = {};
  // Bytes that are not UTF-8 would be read as U+FFFD and name another key: refused, never changed.
  if (!isUtf8(body)) throw invalid('request body is not valid UTF-8');
  const text = body.toString('utf8');
  if (text.trim() !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      throw invalid('malformed JSON body');
    }
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalid('request body must be a JSON object');
  const fields = REQUEST_FIELDS[verb];
  const out: Record<string, unknown> = {};
  for (const [f, kind] of Object.entries(fields)) out[f] = defaultOf(kind);
  const seen = new Set<string>();
  for (const [name, v] of Object.entries(parsed)) {
    const b64 = name.endsWith('_b64') && fields[name.slice(0, -4)] === 'bytes';
    const field = b64 ? name.slice(0, -4) : name;
    if (!Object.hasOwn(fields, field)) throw invalid(`unknown field ${name} for ${verb}`);
    if (seen.has(field)) throw invalid(`at most one of ${field} and ${field}_b64`);
    seen.add(field);
    if (v !== null) out[field] = decodeField(fields[field], field, v, b64);
  }
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function utf8OrUndefined(b: Uint8Array): string | undefined {
  try {
    return utf8.decode(b);
  } catch {
    return undefined;
  }
}

/** A response message as JSON: bytes by the read encoding, everything else as it is. */
export function responseToJson(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(responseToJson);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(v)) {
    if (field instanceof Uint8Array) {
      const text = utf8OrUndefined(field);
      if (text === undefined) out[`${name}_b64`] = Buffer.from(field.buffer, field.byteOffset, field.length).toString('base64');
      else out[name] = text;
    } else {
      out[name] = responseToJson(field);
    }
  }
  return out;
}

export interface AdminBridgeOptions {
  reads: AdminReads;
  /** ReadStreamRecords is served (`--admin-ui-reader`). */
  reader: boolean;
  logError(msg: string, err?: unknown): void;
}

const JSON_TYPE = 'application/json';
const NO_STORE = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' };

function answer(status: number, body: unknown, headers: Record<string, string> = {}): OpsAnswer {
  return { status, type: JSON_TYPE, body: JSON.stringify(body), headers: { ...NO_STORE, ...headers } };
}

/** The bridge's routes: answers every path under /admin/api/, undefined for any other. */
export function adminBridge(opts: AdminBridgeOptions): (method: string, path: string, body: Buffer) => Promise<OpsAnswer | undefined> {
  const served = new Set<string>(ADMIN_READ_VERBS.filter((v) => opts.reader || v !== 'ReadStreamRecords'));
  return async (method, path, body) => {
    if (!path.startsWith(ADMIN_API_PREFIX)) return undefined;
    const name = path.slice(ADMIN_API_PREFIX.length);
    if (!served.has(name)) {
      const why = name === 'ReadStreamRecords'
        ? 'ReadStreamRecords is disabled on this star (--admin-ui-reader=false)'
        : `no admin bridge method ${JSON.stringify(name)}: it serves ${[...served].join(', ')}`;
      return answer(404, { error: why });
    }
    if (method !== 'POST') return answer(405, { error: `${name} takes POST` }, { Allow: 'POST' });
    const verb = name as AdminReadVerb;
    try {
      const req = requestFromJson(verb, body);
      const call = opts.reads[verb] as (r: unknown, gate: () => Promise<void>) => Promise<unknown>;
      return answer(200, responseToJson(await call(req, async () => {})));
    } catch (err) {
      const e = asServiceError(err);
      if (e.code === 'internal') opts.logError(`bug: admin bridge ${verb} failed`, err);
      const status = httpStatusOf(e.code);
      const headers: Record<string, string> = status === 429 || status === 503 ? { 'Retry-After': '1' } : {};
      return answer(status, e.toBody(), headers);
    }
  };
}
