// One HTTP request to the data bridge or the Gateway: the bearer, a deadline, JSON in and out, the
// error envelope turned into an SvcError, and retries only where they are safe.
//
// Browser-safe: fetch, AbortSignal and TextEncoder only.
//
// Retry rule. A request marked `idempotent` (reads, and writes whose repetition converges: PUT, a
// PATCH, a delete, a create with a creation token, trim, fence) is retried on every retryable
// failure. Any other request is retried only when the failure is definite, i.e. the server refused
// it before acting: 429, a connection refused, a 401 answered before the handler ran (retried once
// with a refreshed token). A failure whose outcome is unknown is returned to the caller with
// `ambiguous` set; the append path decides what to do with it (append.ts).

import type { ErrorBody } from '../../protocol/json.ts';
import { SvcError, kindOfStatus, type ErrorKind } from '../errors.ts';
import { DEFAULT_RETRY, abortError, backoffMs, sleep, type RetryPolicy } from '../retry.ts';

/** Supplies the bearer token for a request; `refresh` is true after the server refused the last one
 *  (401, or a subscription ended by auth-expired), asking for a new token rather than a cached one. */
export type TokenProvider = (ctx: { refresh: boolean }) => string | undefined | Promise<string | undefined>;

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface TransportOptions {
  /** The data bridge or Gateway, e.g. http://127.0.0.1:7070 (a path prefix is kept). */
  url: string;
  /** A fixed bearer token, or a provider called before every request. */
  token?: string | TokenProvider;
  /** Defaults to the global fetch. */
  fetch?: FetchLike;
  /** Deadline of one attempt of a unary request. */
  requestTimeoutMs?: number;
  retry?: Partial<RetryPolicy>;
}

/** Default deadline of one attempt of a unary request. */
export const REQUEST_TIMEOUT_MS_DEFAULT = 30_000;

export type Query = Record<string, string | number | boolean | undefined>;

export interface HttpRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Query;
  /** JSON-serialized as the body. */
  body?: unknown;
  /** A body already serialized as JSON. */
  bodyText?: string;
  headers?: Record<string, string>;
  /** Repeating the request converges (see the file comment). */
  idempotent: boolean;
  /** What a 409 means for this operation. */
  conflictKind?: ErrorKind;
  /** False for the one unauthenticated route, the token exchange. */
  auth?: boolean;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** One attempt only (a 401 still earns one retry with a refreshed token): the caller retries. */
  noRetry?: boolean;
  /** Statuses the caller treats as success besides 2xx (e.g. 404 on a retried bucket delete). */
  acceptStatus?: (status: number, attempt: number) => boolean;
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  /** Parsed JSON, or undefined for an empty body. */
  body: unknown;
}

export class HttpTransport {
  readonly baseUrl: string;
  private readonly fetchFn: FetchLike;
  private readonly tokenOpt: string | TokenProvider | undefined;
  readonly requestTimeoutMs: number;
  readonly retry: RetryPolicy;

  constructor(opts: TransportOptions) {
    this.baseUrl = opts.url.replace(/\/+$/, '');
    if (!/^https?:\/\//i.test(this.baseUrl)) throw new TypeError(`the server URL must be http:// or https://, got ${JSON.stringify(opts.url)}`);
    const f = opts.fetch ?? (globalThis.fetch as FetchLike | undefined);
    if (!f) throw new TypeError('no fetch in this runtime: pass options.fetch');
    this.fetchFn = f;
    this.tokenOpt = opts.token;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? REQUEST_TIMEOUT_MS_DEFAULT;
    this.retry = { ...DEFAULT_RETRY, ...(opts.retry ?? {}) };
  }

  /** The bearer for the next request (undefined: none). */
  async token(refresh: boolean): Promise<string | undefined> {
    if (this.tokenOpt === undefined) return undefined;
    if (typeof this.tokenOpt === 'string') return this.tokenOpt;
    return await this.tokenOpt({ refresh });
  }

  get canRefreshToken(): boolean {
    return typeof this.tokenOpt === 'function';
  }

  url(path: string, query?: Query): string {
    let u = this.baseUrl + path;
    if (query) {
      const parts: string[] = [];
      for (const [k, v] of Object.entries(query)) if (v !== undefined) parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
      if (parts.length > 0) u += `?${parts.join('&')}`;
    }
    return u;
  }

  /** Sends the request, retrying per the rule in the file comment; throws SvcError. */
  async request(req: HttpRequest): Promise<HttpAnswer> {
    let refreshed = false;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(req, attempt, refreshed);
      } catch (err) {
        if (!(err instanceof SvcError)) throw err;
        if (err.kind === 'unauthenticated' && !refreshed && this.canRefreshToken && req.auth !== false) {
          refreshed = true; // a 401 is answered before anything runs: safe to repeat once with a new token
          continue;
        }
        const definite = !err.ambiguous;
        if (req.noRetry || !err.retryable || attempt >= this.retry.attemptsMax || !(req.idempotent || definite)) throw err;
        await sleep(backoffMs(this.retry, attempt, err.retryAfterMs), req.signal);
      }
    }
  }

  /** Headers of an authenticated request (for the streaming subscription, which does its own fetch). */
  async authHeaders(refresh: boolean): Promise<Record<string, string>> {
    const t = await this.token(refresh);
    return t === undefined ? {} : { authorization: `Bearer ${t}` };
  }

  /** Calls fetch, mapping a failure to get an answer to an SvcError (no answer: ambiguous for writes). */
  async fetchRaw(url: string, init: RequestInit, isWrite: boolean, userSignal: AbortSignal | undefined): Promise<Response> {
    try {
      return await this.fetchFn(url, init);
    } catch (err) {
      throw noAnswerError(err, isWrite, userSignal);
    }
  }

  private async attempt(req: HttpRequest, attempt: number, refresh: boolean): Promise<HttpAnswer> {
    if (req.signal?.aborted) throw abortError(req.signal);
    const isWrite = req.method !== 'GET';
    const headers: Record<string, string> = { ...(req.headers ?? {}) };
    if (req.auth !== false) Object.assign(headers, await this.authHeaders(refresh));
    let body: string | undefined = req.bodyText;
    if (body === undefined && req.body !== undefined) body = JSON.stringify(req.body);
    if (body !== undefined) headers['content-type'] = 'application/json';
    const timeout = AbortSignal.timeout(req.timeoutMs ?? this.requestTimeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
    const res = await this.fetchRaw(this.url(req.path, req.query), { method: req.method, headers, body, signal }, isWrite, req.signal);
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      // The answer was cut: even a 2xx status lost the ack it carried, so a write is ambiguous.
      throw noAnswerError(err, isWrite, req.signal);
    }
    let parsed: unknown;
    if (text.length > 0) {
      try {
        parsed = JSON.parse(text);
      } catch {
        if (res.ok) throw new SvcError('protocol', `${req.method} ${req.path}: answer ${res.status} is not JSON: ${text.slice(0, 200)}`, { status: res.status });
        parsed = undefined;
      }
    }
    if (res.ok || req.acceptStatus?.(res.status, attempt)) return { status: res.status, headers: res.headers, body: parsed };
    throw errorFromAnswer(req, res.status, res.headers, parsed, text, isWrite);
  }
}

/** The error envelope's fields as an answer may hold them: checked one by one before use. */
type ErrorEnvelope = { [K in keyof ErrorBody]?: unknown };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function errorFromAnswer(req: Pick<HttpRequest, 'method' | 'path' | 'conflictKind'>, status: number, headers: Headers, parsed: unknown, text: string, isWrite: boolean): SvcError {
  const env: ErrorEnvelope = isObject(parsed) ? parsed : {};
  const kind = kindOfStatus(status, env, req.conflictKind);
  const reason = typeof env.error === 'string' ? env.error : text.slice(0, 200) || `HTTP ${status}`;
  const retryAfter = headers.get('retry-after');
  const retryAfterS = retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined;
  return new SvcError(kind, `${req.method} ${req.path}: ${status} ${reason}`, {
    status,
    ambiguous: isWrite && status >= 500 && status !== 501,
    ...(isObject(env.tail) ? { tail: { seq_num: Number(env.tail.seq_num), timestamp_ms: Number(env.tail.timestamp_ms) } } : {}),
    ...(typeof env.fencing_token === 'string' ? { fencingToken: env.fencing_token } : {}),
    ...(retryAfterS !== undefined ? { retryAfterMs: retryAfterS * 1000 } : {}),
  });
}

/** fetch failed or its body was cut: which of aborted / timeout / connection, and whether a write may
 *  have happened. A refused connection never reached a server, so nothing happened. */
export function noAnswerError(err: unknown, isWrite: boolean, userSignal: AbortSignal | undefined): SvcError {
  if (userSignal?.aborted) return abortError(userSignal);
  const name = (err as { name?: unknown })?.name;
  if (name === 'TimeoutError') return new SvcError('timeout', 'no answer before the request deadline', { ambiguous: isWrite, cause: err });
  const code = causeCode(err);
  const why = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
  // fetch refuses some ports before it connects (the WHATWG list of blocked ports: 1, 9, 6000, …),
  // so nothing was sent: a write's outcome is known, and no retry can reach that port.
  if (why === 'bad port') return new SvcError('invalid_argument', 'fetch will not connect to this port (a port browsers block, e.g. 1, 9, 6000): nothing was sent; serve svcd on another port', { cause: err });
  const refused = code === 'ECONNREFUSED';
  return new SvcError('connection', `${refused ? 'connection refused' : 'connection failed'}: ${why}`, { ambiguous: isWrite && !refused, cause: err });
}

function causeCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
