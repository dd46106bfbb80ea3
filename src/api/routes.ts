// The one HTTP route table, transport-neutral. Each route declares its method, path, the scope action
// that guards it (so authorization cannot be forgotten) and its body cap; the uWS adapter and the
// node:http adapter (native-free/) both serve exactly this table.

import {
  CONTROL_BODY_BYTES_MAX, APPEND_BODY_BYTES_MAX, ROUTE_MATCH_CACHE_ENTRIES_MAX, ROUTE_MATCH_CACHE_PATH_CHARS_MAX,
} from '../config/limits.ts';
import {
  checkBucketName, checkFencingToken, checkKey, checkNewBucketName, decodeStreamCursor, encodeStreamCursor, listPageLimit,
  readTimeSaturated,
} from '../protocol/rules.ts';
import type { BucketsAnswer, FenceAnswer, ReadAnswer, StreamJson, StreamsAnswer } from '../protocol/json.ts';
import type { ExchangedToken, StreamInfo } from '../protocol/resources.ts';
import { ServiceError, invalid, notFound } from '../core/errors.ts';
import { keyFromBytes, keyIsText, keyToBytes } from '../storage/format/key-bytes.ts';
import type { StreamService, Subscription } from '../core/service-api.ts';
import type { AppendInput, ReadStart } from '../core/types.ts';
import { checkFencingPin, type Principal } from '../auth/index.ts';
import { serveSignedObject, type ObjectVending } from './presign.ts';
import {
  decodeAppend, decodeBucketConfig, encodeAppendAck, decodeStreamConfig, decodeStreamPatch, encodeRecord, parseJsonObject, positionField,
} from './wire.ts';

/** The scope action a route needs (spec: Authentication, "What each action covers"). */
export type RouteAction = 'append' | 'read' | 'list' | 'create' | 'delete' | 'trim' | 'none';
/** What the grant must cover: one stream, one bucket (lone `*` key match), or every bucket (`*:*`). */
export type RouteLevel = 'stream' | 'bucket' | 'all' | 'open';

export interface RequestCtx {
  params: { bucket: string; key: string };
  query: URLSearchParams;
  header(name: string): string | undefined;
  body: Buffer;
  /** Who is calling (TRUSTED_PRINCIPAL when auth is off). */
  principal: Principal;
  /** The api-key exchange, when this star can sign tokens. */
  exchange?: (body: unknown) => Promise<ExchangedToken>;
  /** The presigned object URLs this star serves (ReadPlan vending on fs), once it listens. */
  vending?: ObjectVending;
  /** Whether the star can take appends now (what /readyz says); absent: it can. */
  ready?: () => boolean;
}

export type RouteResult =
  | { kind: 'json'; status: number; body: unknown; /** the body already serialized */ text?: string }
  | { kind: 'empty'; status: number }
  | { kind: 'sse'; subscription: Subscription; base64: boolean }
  | { kind: 'bytes'; status: number; headers: [string, string][]; body: Buffer };

export interface Route {
  method: string;
  /** Segments; ':bucket' and ':key' are parameters. */
  path: readonly string[];
  /** Name of the verb, as the gRPC plane and the authorizer know it. */
  verb: string;
  action: RouteAction;
  level: RouteLevel;
  bodyBytesMax: number;
  /** Large append bodies are parsed on a worker (see WORKER_PARSE_BYTES_MIN). */
  parseOffThread?: boolean;
  /** Refusals that need no service call, made before the dispatcher takes a capped slot for the
   *  request (an event stream's), so a request that can never succeed is 400, not a retryable 503. */
  precheck?(ctx: RequestCtx): void;
  handle(svc: StreamService, ctx: RequestCtx, pre?: AppendInput): Promise<RouteResult> | RouteResult;
}

/** A subscription's start: the Last-Event-ID header over the query's seq_num or timestamp_ms (spec:
 *  Subscribe), or tail_offset (the last n records, then follow), as a read and gRPC Subscribe take;
 *  400 without one. */
function subscribeStart(c: RequestCtx): ReadStart {
  const lastId = c.header('last-event-id');
  // A cursor past the tail waits at the tail, as a larger one saturated to 2^53 - 1 does.
  if (lastId !== undefined && lastId !== '') return { kind: 'seq_num', value: saturated(u64Query(lastId, 'Last-Event-ID')) };
  const start = readStart(c.query)?.start;
  if (!start) throw invalid('a start is required: seq_num, timestamp_ms or tail_offset, or the Last-Event-ID header');
  return start;
}

const json = (status: number, body: unknown): RouteResult => ({ kind: 'json', status, body });
const empty = (status: number): RouteResult => ({ kind: 'empty', status });

// ------------------------------------------------------------------ query helpers

const U64_MAX = (1n << 64n) - 1n;
const I64_MIN = -(1n << 63n);
const I64_MAX = (1n << 63n) - 1n;
/** Decimal digits that always fit a safe integer (15 nines < 2^53): parsed without a bigint. */
const SAFE_DIGITS_MAX = 15;
const DIGITS = /^\d+$/;
const SIGNED_DIGITS = /^-?\d+$/;

/**
 * An unsigned 64-bit query value, exact: a number up to 2^53 - 1, a bigint past it (sequence numbers
 * are uint64 in the spec). Past 2^64 - 1 it is a 400 naming the parameter.
 */
function u64Query(v: string, name: string): number | bigint {
  if (!DIGITS.test(v)) throw invalid(`${name} must be a non-negative integer`);
  if (v.length <= SAFE_DIGITS_MAX) return Number(v);
  const n = BigInt(v);
  if (n > U64_MAX) throw invalid(`${name} must be at most 2^64-1 (${U64_MAX})`);
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}

/** A signed 64-bit query value (times in ms), exact as u64Query is; past int64 a 400 naming it. */
function i64Query(v: string, name: string): number | bigint {
  if (!SIGNED_DIGITS.test(v)) throw invalid(`${name} must be an integer`);
  if (v.length <= SAFE_DIGITS_MAX) return Number(v);
  const n = BigInt(v);
  if (n < I64_MIN || n > I64_MAX) throw invalid(`${name} must be a signed 64-bit integer`);
  return Number.isSafeInteger(Number(n)) && BigInt(Number(n)) === n ? Number(n) : n;
}

/**
 * An unsigned 64-bit value as the core's number. The core's positions are safe integers below
 * 2^53 - 1, so any value past it lies past every one of them: it saturates there and gets the same
 * answer (a start past the tail, a limit clamped), never a rounded neighbour. Times saturate one
 * further (readTimeSaturated), since a record may be stamped 2^53 - 1 itself.
 */
const saturated = (n: number | bigint): number => (typeof n === 'number' ? n : Number.MAX_SAFE_INTEGER);

function uintParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  return v === null ? undefined : saturated(u64Query(v, name));
}

/** A time parameter (timestamp_ms, until_ms): saturates past every stored time (readTimeSaturated). */
function timeParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  return v === null ? undefined : readTimeSaturated(i64Query(v, name));
}

function boolParam(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  if (v === null || v === 'false') return false;
  if (v === 'true' || v === '') return true;
  throw invalid(`${name} must be true or false`);
}

function base64Param(q: URLSearchParams): boolean {
  const f = q.get('format');
  if (f === null || f === 'raw') return false;
  if (f === 'base64') return true;
  throw invalid('format must be raw or base64');
}

/** A read's start, with the exact sequence number asked for when it lies past 2^53 - 1 (so a 416
 *  can name it rather than its saturated stand-in). */
interface QueryStart { start: ReadStart; exact?: bigint }

/** Exactly one of seq_num / timestamp_ms / tail_offset (the read query). */
function readStart(q: URLSearchParams): QueryStart | undefined {
  const seqText = q.get('seq_num');
  const seq = seqText === null ? undefined : u64Query(seqText, 'seq_num');
  const ts = timeParam(q, 'timestamp_ms');
  const off = uintParam(q, 'tail_offset');
  const given = [seq, ts, off].filter((x) => x !== undefined).length;
  if (given > 1) throw invalid('exactly one of seq_num, timestamp_ms, tail_offset is allowed');
  if (seq !== undefined) return seqStart(seq);
  if (ts !== undefined) return { start: { kind: 'timestamp_ms', value: ts } };
  if (off !== undefined) return { start: { kind: 'tail_offset', value: off } };
  return undefined;
}

const seqStart = (seq: number | bigint): QueryStart => (typeof seq === 'number'
  ? { start: { kind: 'seq_num', value: seq } }
  : { start: { kind: 'seq_num', value: saturated(seq) }, exact: seq });

/** A 416 for a saturated start names the start the client sent. */
function exactPastTail(err: unknown, start: QueryStart): unknown {
  if (start.exact === undefined || !(err instanceof ServiceError) || err.code !== 'range_not_satisfiable') return err;
  return new ServiceError('range_not_satisfiable', `start ${start.exact} is past the tail ${err.detail.tail?.seq_num ?? ''}`, err.detail);
}

const listLimit = (q: URLSearchParams): number => listPageLimit(uintParam(q, 'limit'));


// ------------------------------------------------------------------ the table

const B = ':bucket';
const K = ':key';

export const ROUTES: readonly Route[] = [
  {
    method: 'GET', path: ['healthz'], verb: 'Health', action: 'none', level: 'open', bodyBytesMax: 0,
    // What the Gateway probes: a star that cannot take appends (its metadata store or WAL disk away,
    // a PostgreSQL statement long unanswered, draining) answers 503, so new requests go to the other
    // stars first and take its streams over once its leases lapse.
    handle: (_svc, c) => {
      if (c.ready?.() === false) throw new ServiceError('unavailable', 'this star cannot take appends now (see its /readyz); retry shortly');
      return json(200, { status: 'ok' });
    },
  },
  {
    method: 'POST', path: ['v1', 'token', 'exchange'], verb: 'ExchangeToken', action: 'none', level: 'open', bodyBytesMax: CONTROL_BODY_BYTES_MAX,
    handle: async (_svc, c) => {
      if (!c.exchange) throw new ServiceError('unimplemented', 'token exchange needs jwt auth with a symmetric signing key');
      return json(200, await c.exchange(parseJsonObject(c.body, false)));
    },
  },
  // ---- buckets
  {
    method: 'GET', path: ['v1', 'buckets'], verb: 'ListBuckets', action: 'list', level: 'all', bodyBytesMax: 0,
    handle: async (svc, c) => {
      const page = await svc.listBuckets(c.query.get('start_after') ?? '', listLimit(c.query));
      return json(200, { buckets: page.items, next: page.next } satisfies BucketsAnswer);
    },
  },
  {
    method: 'POST', path: ['v1', 'buckets', B], verb: 'CreateBucket', action: 'create', level: 'bucket', bodyBytesMax: CONTROL_BODY_BYTES_MAX,
    handle: async (svc, c) => {
      checkNewBucketName(c.params.bucket);
      const body = decodeBucketConfig(parseJsonObject(c.body, true), c.params.bucket, true);
      return json(201, await svc.createBucket(c.params.bucket, body));
    },
  },
  {
    method: 'GET', path: ['v1', 'buckets', B], verb: 'GetBucket', action: 'read', level: 'bucket', bodyBytesMax: 0,
    handle: async (svc, c) => json(200, await svc.getBucket(c.params.bucket)),
  },
  {
    method: 'PUT', path: ['v1', 'buckets', B], verb: 'UpdateBucket', action: 'create', level: 'bucket', bodyBytesMax: CONTROL_BODY_BYTES_MAX,
    handle: async (svc, c) => {
      const body = decodeBucketConfig(parseJsonObject(c.body, true), c.params.bucket, false);
      return json(200, await svc.updateBucket(c.params.bucket, body));
    },
  },
  {
    method: 'DELETE', path: ['v1', 'buckets', B], verb: 'DeleteBucket', action: 'delete', level: 'bucket', bodyBytesMax: 0,
    handle: async (svc, c) => { await svc.deleteBucket(c.params.bucket); return empty(204); },
  },
  // ---- streams
  {
    method: 'GET', path: ['v1', 'streams', B], verb: 'ListStreams', action: 'list', level: 'bucket', bodyBytesMax: 0,
    handle: async (svc, c) => {
      const page = await svc.listStreams(c.params.bucket, decodeStreamCursor(c.query.get('start_after')), listLimit(c.query));
      return json(200, { streams: page.items.map(streamJson), next: encodeStreamCursor(page.next) } satisfies StreamsAnswer);
    },
  },
  {
    method: 'POST', path: ['v1', 'streams', B, K], verb: 'CreateStream', action: 'create', level: 'stream', bodyBytesMax: CONTROL_BODY_BYTES_MAX,
    handle: async (svc, c) => {
      const body = decodeStreamConfig(parseJsonObject(c.body, true), true, c.params);
      return json(201, streamJson(await svc.createStream(c.params.bucket, c.params.key, body)));
    },
  },
  {
    method: 'GET', path: ['v1', 'streams', B, K], verb: 'GetStream', action: 'read', level: 'stream', bodyBytesMax: 0,
    handle: async (svc, c) => json(200, streamJson(await svc.getStream(c.params.bucket, c.params.key))),
  },
  {
    method: 'PATCH', path: ['v1', 'streams', B, K], verb: 'ReconfigureStream', action: 'create', level: 'stream', bodyBytesMax: CONTROL_BODY_BYTES_MAX,
    handle: async (svc, c) => {
      const o = parseJsonObject(c.body, true);
      const patch = decodeStreamPatch(o, c.params);
      // A fencing token may come back in a GET's answer sent again; any other value (another token,
      // '' on a fenced stream, not a string) would be dropped while the caller thinks it set: 400.
      const token = o.fencing_token;
      if (token !== undefined && token !== null && token !== (await svc.getStream(c.params.bucket, c.params.key)).fencing_token) {
        throw invalid('PATCH does not change the fencing token; the fence verb does');
      }
      return json(200, streamJson(await svc.reconfigureStream(c.params.bucket, c.params.key, patch)));
    },
  },
  {
    method: 'DELETE', path: ['v1', 'streams', B, K], verb: 'DeleteStream', action: 'delete', level: 'stream', bodyBytesMax: 0,
    handle: async (svc, c) => { await svc.deleteStream(c.params.bucket, c.params.key); return empty(204); },
  },
  // ---- records
  {
    method: 'POST', path: ['v1', 'streams', B, K, 'records'], verb: 'Append', action: 'append', level: 'stream',
    bodyBytesMax: APPEND_BODY_BYTES_MAX, parseOffThread: true,
    // Not async, like Star.append: one promise from the ring to the answer on the hottest route.
    handle: (svc, c, pre) => {
      const input = pre ?? decodeAppend(c.body);
      checkFencingPin(c.principal, 'Append', input.fencing_token);
      if (c.principal.expMs !== undefined) input.deadlineMs = c.principal.expMs;
      return svc.append(c.params.bucket, c.params.key, input).then((ack): RouteResult => ({ kind: 'json', status: 200, body: ack, text: encodeAppendAck(ack) }));
    },
  },
  {
    method: 'GET', path: ['v1', 'streams', B, K, 'records'], verb: 'Read', action: 'read', level: 'stream', bodyBytesMax: 0,
    handle: async (svc, c) => {
      const q = c.query;
      const start = readStart(q);
      if (!start) throw invalid('exactly one of seq_num, timestamp_ms or tail_offset is required');
      const base64 = base64Param(q);
      const res = await svc.read(c.params.bucket, c.params.key, {
        start: start.start, limit: uintParam(q, 'limit') ?? 0, maxBytes: uintParam(q, 'max_bytes') ?? 0,
        untilMs: timeParam(q, 'until_ms'), clamp: boolParam(q, 'clamp'),
      }).catch((err: unknown) => { throw exactPastTail(err, start); });
      return json(200, { records: res.records.map((r) => encodeRecord(r, base64)), tail: res.tail } satisfies ReadAnswer);
    },
  },
  {
    method: 'GET', path: ['v1', 'streams', B, K, 'records', 'tail'], verb: 'CheckTail', action: 'read', level: 'stream', bodyBytesMax: 0,
    handle: async (svc, c) => json(200, await svc.readTail(c.params.bucket, c.params.key)),
  },
  {
    method: 'GET', path: ['v1', 'streams', B, K, 'records', 'subscribe'], verb: 'Subscribe', action: 'read', level: 'stream', bodyBytesMax: 0,
    precheck: (c) => { base64Param(c.query); subscribeStart(c); },
    handle: async (svc, c) => {
      const base64 = base64Param(c.query);
      const subscription = await svc.subscribe(c.params.bucket, c.params.key, subscribeStart(c));
      return { kind: 'sse', subscription, base64 };
    },
  },
  {
    method: 'POST', path: ['v1', 'streams', B, K, 'trim'], verb: 'Trim', action: 'trim', level: 'stream', bodyBytesMax: CONTROL_BODY_BYTES_MAX,
    handle: async (svc, c) => {
      const o = parseJsonObject(c.body, false);
      for (const k of Object.keys(o)) if (k !== 'seq_num' && k !== 'timestamp_ms') throw invalid(`unknown field ${k}`);
      const hasSeq = o.seq_num !== undefined && o.seq_num !== null;
      const hasTs = o.timestamp_ms !== undefined && o.timestamp_ms !== null;
      if (hasSeq === hasTs) throw invalid('exactly one of seq_num or timestamp_ms is required');
      const field = hasSeq ? 'seq_num' : 'timestamp_ms';
      // Past 2^53 (to 2^64 - 1), a trim point lies past every record: it trims to the tail.
      const v = positionField(o[field], field, c.body);
      await svc.trim(c.params.bucket, c.params.key, hasSeq ? { seq_num: v } : { timestamp_ms: v });
      return empty(204);
    },
  },
  {
    method: 'POST', path: ['v1', 'streams', B, K, 'fence'], verb: 'Fence', action: 'append', level: 'stream', bodyBytesMax: CONTROL_BODY_BYTES_MAX,
    handle: async (svc, c) => {
      const o = parseJsonObject(c.body, true);
      for (const k of Object.keys(o)) if (k !== 'fencing_token') throw invalid(`unknown field ${k}`);
      const t = o.fencing_token ?? '';
      if (typeof t !== 'string') throw invalid('fencing_token must be a string');
      checkFencingToken(t);
      checkFencingPin(c.principal, 'Fence', t);
      return json(200, { tail: await svc.fence(c.params.bucket, c.params.key, t) } satisfies FenceAnswer);
    },
  },
  // ---- presigned objects (ReadPlan vending on the fs backend): the URL's signature is its auth
  {
    method: 'GET', path: ['v1', 'objects', K], verb: 'GetObject', action: 'none', level: 'open', bodyBytesMax: 0,
    handle: async (_svc, c) => ({ kind: 'bytes', ...(await serveSignedObject(c.vending, c.params.key, c.query, c.header('range'))) }),
  },
];

/** A stream resource as JSON. A key whose bytes are not UTF-8 rides `key_b64` in place of `key`,
 *  as the spec's read encoding carries byte fields. */
function streamJson<T extends StreamInfo>(s: T): StreamJson<T> {
  if (keyIsText(s.key)) return s;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'key') out.key_b64 = keyToBytes(s.key).toString('base64');
    else out[k] = v;
  }
  return out as Omit<T, 'key'> & { key_b64: string };
}

// ------------------------------------------------------------------ matching

export interface RouteMatch {
  route: Route;
  params: { bucket: string; key: string };
  /** A path parameter that cannot name anything (bad percent-encoding, a name or key outside the
   *  rules): 404 per the spec's error table. Raised by the dispatcher only after authentication, so an
   *  anonymous caller learns nothing from the path. */
  badSegment?: ServiceError;
}

function decodeSegment(raw: string, what: string): string {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    throw invalid(`bad percent-encoding in the ${what}`);
  }
}

const HEX_PAIR = /^[0-9A-Fa-f]{2}$/;
const NOT_TARGET_CHAR = /[^\x21-\x7e]/;

/** A key segment's bytes, percent-decoded; any bytes, UTF-8 or not, name a key (storage/format/key-bytes.ts). */
function decodeKeySegment(raw: string): string {
  // A request target is ASCII: a raw byte past it reached us decoded lossily (uWS turns invalid
  // UTF-8 into U+FFFD), so it cannot name the key's bytes; such a key must be percent-encoded.
  if (NOT_TARGET_CHAR.test(raw)) throw invalid('a key outside ASCII must be percent-encoded');
  if (!raw.includes('%')) return raw;
  const parts: Buffer[] = [];
  let run = 0;
  for (let i = raw.indexOf('%'); i >= 0; i = raw.indexOf('%', run)) {
    const hex = raw.slice(i + 1, i + 3);
    if (!HEX_PAIR.test(hex)) throw invalid('bad percent-encoding in the key');
    if (run < i) parts.push(Buffer.from(raw.slice(run, i), 'utf8'));
    parts.push(Buffer.of(parseInt(hex, 16)));
    run = i + 3;
  }
  if (run < raw.length) parts.push(Buffer.from(raw.slice(run), 'utf8'));
  return keyFromBytes(Buffer.concat(parts));
}

/** Decodes and checks the path parameters; a failure is the spec's "bad path segment" (404). */
function pathParams(r: Route, segs: readonly string[]): { params: RouteMatch['params']; badSegment?: ServiceError } {
  const params = { bucket: '', key: '' };
  try {
    for (let i = 0; i < segs.length; i++) {
      if (r.path[i] === B) params.bucket = decodeSegment(segs[i], 'bucket');
      if (r.path[i] === K) params.key = decodeKeySegment(segs[i]);
    }
    if (r.path.includes(B)) checkBucketName(params.bucket);
    if (r.path.includes(K)) checkKey(params.key);
    return { params };
  } catch (err) {
    return { params: { bucket: '', key: '' }, badSegment: notFound(`bad path segment: ${(err as Error).message}`) };
  }
}
/** Routes grouped by segment count and first two literal segments, so a match tries few routes. */
const ROUTE_INDEX = new Map<string, Route[]>();
for (const r of ROUTES) {
  const k = `${r.path.length}/${r.path[0]}/${r.path.length > 1 && !r.path[1].startsWith(':') ? r.path[1] : '*'}`;
  ROUTE_INDEX.set(k, [...(ROUTE_INDEX.get(k) ?? []), r]);
}

const NO_ROUTES: Route[] = [];

/** Every route's second segment is a literal (or absent), so one index lookup finds the candidates. */
function candidates(segs: string[]): Route[] {
  return ROUTE_INDEX.get(`${segs.length}/${segs[0]}/${segs.length > 1 ? segs[1] : '*'}`) ?? NO_ROUTES;
}

/** Matches a raw (still percent-encoded) path. Throws 404 for an unknown path, 405 (with the allowed
 *  methods, HEAD wherever GET is) for a known path and the wrong method. A bad parameter segment is
 *  returned as `badSegment`, for the dispatcher to raise after authentication. */
export function matchRoute(method: string, rawPath: string): RouteMatch {
  // A producer's path repeats on every request: splitting, decoding and checking it again showed as
  // 4 % of the main thread at 40k appends/s, so good matches are kept (frozen: callers share them).
  const cache = MATCH_CACHE[method as keyof typeof MATCH_CACHE];
  const hit = cache?.get(rawPath);
  if (hit) return hit;
  const m = matchUncached(method, rawPath);
  if (cache && !m.badSegment && rawPath.length <= ROUTE_MATCH_CACHE_PATH_CHARS_MAX) {
    if (matchCacheEntries >= ROUTE_MATCH_CACHE_ENTRIES_MAX) {
      for (const c of Object.values(MATCH_CACHE)) c.clear();
      matchCacheEntries = 0;
    }
    Object.freeze(m.params);
    cache.set(rawPath, Object.freeze(m));
    matchCacheEntries++;
  }
  return m;
}

/** Cached matches per method (the methods routes serve; others are never cached). */
const MATCH_CACHE = {
  GET: new Map<string, RouteMatch>(), HEAD: new Map<string, RouteMatch>(), POST: new Map<string, RouteMatch>(),
  PUT: new Map<string, RouteMatch>(), PATCH: new Map<string, RouteMatch>(), DELETE: new Map<string, RouteMatch>(),
};
let matchCacheEntries = 0;

function matchUncached(method: string, rawPath: string): RouteMatch {
  const segs = rawPath.split('/');
  segs.shift();
  for (const s of segs) if (s === '' || s === '.' || s === '..') throw notFound('no such path');
  const allow: string[] = [];
  for (const r of candidates(segs)) {
    let ok = true;
    for (let i = 0; i < segs.length && ok; i++) {
      const p = r.path[i];
      if (p !== B && p !== K && p !== segs[i]) ok = false;
    }
    if (!ok) continue;
    if (r.method === method || (method === 'HEAD' && r.method === 'GET')) {
      // Only a raw `.` or `..` segment is the spec's bad path (checked above): a key is any byte
      // string, so `%2E` and `%2E%2E` name the keys `.` and `..` (a bucket name cannot be either).
      const { params, badSegment } = pathParams(r, segs);
      return badSegment ? { route: r, params, badSegment } : { route: r, params };
    }
    allow.push(r.method);
    if (r.method === 'GET') allow.push('HEAD');
  }
  if (allow.length) throw new ServiceError('method_not_allowed', `method ${method} is not supported here`, { allow });
  throw notFound('no such path');
}

/** The methods a path serves (HEAD wherever GET is); empty for an unknown path. For CORS preflights. */
export function methodsFor(rawPath: string): string[] {
  try {
    matchRoute('OPTIONS', rawPath); // no route serves OPTIONS: this always throws
  } catch (err) {
    if (err instanceof ServiceError && err.code === 'method_not_allowed') return [...(err.detail.allow ?? [])];
  }
  return [];
}
