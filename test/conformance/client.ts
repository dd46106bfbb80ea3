// Small shared helpers for the black-box HTTP conformance suite: JSON requests over the global fetch,
// raw requests (verbatim paths, streamed bodies) over node:http, unique names and common assertions.
import http from 'node:http';
import assert from 'node:assert/strict';
import { removeDir, type RunningServer } from '../helpers/server.ts';

/** Every request made through these helpers gives up after this long (a bounded wait, never an assertion). */
export const REQUEST_TIMEOUT_MS = 30_000;

let counter = 0;
/** A name unique within this process and across runs: lowercase letters, digits and '-'. */
export function uniq(prefix = 't'): string {
  counter += 1;
  return `${prefix}-${process.pid.toString(36)}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
}

export interface Res<T = any> {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body, or undefined when the body is empty or not JSON. */
  body: T;
}

export type Query = Record<string, string | number | boolean | undefined>;

export function qs(query: Query): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  }
  return parts.length > 0 ? `?${parts.join('&')}` : '';
}

export const bucketPath = (bucket: string): string => `/v1/buckets/${encodeURIComponent(bucket)}`;
export const streamPath = (bucket: string, key: string): string =>
  `/v1/streams/${encodeURIComponent(bucket)}/${encodeURIComponent(key)}`;

export interface RecordIn {
  body?: string;
  body_b64?: string;
  headers?: Array<{ name?: string; name_b64?: string; value?: string; value_b64?: string }>;
  timestamp_ms?: number;
}

export interface Position { seq_num: number; timestamp_ms: number }

export interface ReqInit {
  headers?: Record<string, string>;
  /** Send this text verbatim as the body instead of JSON.stringify(body). */
  raw?: string;
}

export class Client {
  constructor(readonly baseUrl: string) {}

  async req<T = any>(method: string, path: string, body?: unknown, init: ReqInit = {}): Promise<Res<T>> {
    const headers: Record<string, string> = { ...(init.headers ?? {}) };
    let payload: string | undefined;
    if (init.raw !== undefined) {
      payload = init.raw;
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
    } else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    const res = await fetch(this.baseUrl + path, {
      method, headers, body: payload, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await res.text();
    let parsed: any;
    if (text.length > 0) {
      try { parsed = JSON.parse(text); } catch { parsed = undefined; }
    }
    return { status: res.status, headers: res.headers, text, body: parsed as T };
  }

  get<T = any>(path: string, init?: ReqInit): Promise<Res<T>> { return this.req<T>('GET', path, undefined, init); }
  post<T = any>(path: string, body?: unknown, init?: ReqInit): Promise<Res<T>> { return this.req<T>('POST', path, body, init); }
  put<T = any>(path: string, body?: unknown, init?: ReqInit): Promise<Res<T>> { return this.req<T>('PUT', path, body, init); }
  patch<T = any>(path: string, body?: unknown, init?: ReqInit): Promise<Res<T>> { return this.req<T>('PATCH', path, body, init); }
  del<T = any>(path: string, init?: ReqInit): Promise<Res<T>> { return this.req<T>('DELETE', path, undefined, init); }

  // --- buckets ---
  async createBucket(config: Record<string, unknown> = {}, name = uniq('b')): Promise<string> {
    const res = await this.post(bucketPath(name), config);
    assert.equal(res.status, 201, `create bucket ${name}: ${res.text}`);
    return name;
  }

  // --- streams ---
  async createStream(bucket: string, key: string, config: Record<string, unknown> = {}): Promise<any> {
    const res = await this.post(streamPath(bucket, key), config);
    assert.equal(res.status, 201, `create stream ${bucket}/${key}: ${res.text}`);
    return res.body;
  }

  /** A fresh bucket (with the given bucket config) holding one fresh stream (with the given stream config). */
  async freshStream(streamConfig: Record<string, unknown> = {}, bucketConfig: Record<string, unknown> = {}):
  Promise<{ bucket: string; key: string; path: string }> {
    const bucket = await this.createBucket(bucketConfig);
    const key = uniq('s');
    await this.createStream(bucket, key, streamConfig);
    return { bucket, key, path: streamPath(bucket, key) };
  }

  // --- records ---
  append(bucket: string, key: string, records: RecordIn[], extra: Record<string, unknown> = {}): Promise<Res> {
    return this.post(`${streamPath(bucket, key)}/records`, { records, ...extra });
  }

  async appendOk(bucket: string, key: string, records: RecordIn[], extra: Record<string, unknown> = {}):
  Promise<{ start: Position; end: Position; tail: Position }> {
    const res = await this.append(bucket, key, records, extra);
    assert.equal(res.status, 200, `append: ${res.text}`);
    return res.body;
  }

  read(bucket: string, key: string, query: Query): Promise<Res> {
    return this.get(`${streamPath(bucket, key)}/records${qs(query)}`);
  }

  async readOk(bucket: string, key: string, query: Query): Promise<{ records: any[]; tail: Position }> {
    const res = await this.read(bucket, key, query);
    assert.equal(res.status, 200, `read ${JSON.stringify(query)}: ${res.text}`);
    return res.body;
  }

  async tail(bucket: string, key: string): Promise<Position> {
    const res = await this.get(`${streamPath(bucket, key)}/records/tail`);
    assert.equal(res.status, 200, `tail: ${res.text}`);
    return res.body;
  }
}

/** n records with bodies `${prefix}0`, `${prefix}1`, ... */
export function bodies(n: number, prefix = 'r'): RecordIn[] {
  return Array.from({ length: n }, (_, i) => ({ body: `${prefix}${i}` }));
}

export function assertJsonContentType(headers: Headers | http.IncomingHttpHeaders, what = ''): void {
  const ct = headers instanceof Headers ? headers.get('content-type') : headers['content-type'];
  assert.ok(ct && /^application\/json\b/i.test(ct), `${what} content-type should be application/json, got ${ct}`);
}

/** The spec's error envelope: the status, a JSON content type and {error: non-empty string}. */
export function assertError(res: Res, status: number, what = ''): void {
  assert.equal(res.status, status, `${what} expected ${status}, got ${res.status}: ${res.text}`);
  assertJsonContentType(res.headers, what);
  assert.equal(typeof res.body?.error, 'string', `${what} error body should be {error: string}: ${res.text}`);
  assert.ok(res.body.error.length > 0, `${what} error string should not be empty`);
}

export function assertPosition(p: unknown, what = 'position'): asserts p is Position {
  assert.ok(p && typeof p === 'object', `${what} should be an object: ${JSON.stringify(p)}`);
  const pos = p as Record<string, unknown>;
  assert.ok(Number.isInteger(pos.seq_num) && (pos.seq_num as number) >= 0, `${what}.seq_num: ${JSON.stringify(p)}`);
  assert.ok(Number.isInteger(pos.timestamp_ms), `${what}.timestamp_ms: ${JSON.stringify(p)}`);
}

export const b64 = (s: string | Uint8Array): string => Buffer.from(s).toString('base64');

export interface RawRes { status: number; headers: http.IncomingHttpHeaders; text: string }

/** A request whose path is sent verbatim (fetch would normalize `.`/`..` segments). */
export function rawRequest(baseUrl: string, method: string, path: string,
  opts: { headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<RawRes> {
  const u = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: u.hostname, port: Number(u.port), method, path, headers: opts.headers ?? {},
      timeout: REQUEST_TIMEOUT_MS,
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`raw ${method} ${path} timed out`)));
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

export async function healthz(baseUrl: string): Promise<number> {
  const res = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  await res.arrayBuffer();
  return res.status;
}

/** Runs fn over items with at most `width` in flight. */
export async function pool<T>(items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let i = 0;
  const workers = Array.from({ length: Math.min(width, items.length) }, async () => {
    while (i < items.length) {
      const item = items[i++];
      await fn(item);
    }
  });
  await Promise.all(workers);
}

/** Stops a test server and removes its data dir; if it died during the suite, prints its output and fails. */
export async function stopServer(srv: RunningServer | undefined): Promise<void> {
  if (!srv) return;
  const died = srv.proc.exitCode !== null || srv.proc.signalCode !== null;
  await srv.stop();
  removeDir(srv.dataDir);
  const out = srv.output();
  if (!died && /\bbug\b|unmapped|uncaught|unhandled/i.test(out)) {
    process.stderr.write(`\n--- the server logged errors during the suite; its output:\n${out}\n---\n`);
  }
  if (died) {
    process.stderr.write(`\n--- server died during the suite (exit ${srv.proc.exitCode}, signal ${srv.proc.signalCode}); its output:\n${srv.output()}\n---\n`);
    assert.fail(`the server process died during the suite (exit ${srv.proc.exitCode}, signal ${srv.proc.signalCode})`);
  }
}
