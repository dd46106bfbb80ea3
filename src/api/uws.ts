// The uWebSockets.js adapter: the HTTP bridge and SSE on uWS. The package silently swaps in a slow
// pure-JS imitation when its native binary fails to load, so this adapter loads the native binary
// itself and reports failure; main.ts then serves the same routes with native-free/ (node:http).

import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import type * as UWS from '@trufflesuite/uws-js-unofficial';
import { ServiceError, invalid } from '../core/errors.ts';
import {
  APPEND_BODY_BYTES_MAX, BODYLESS_METHOD_BODY_BYTES_MAX, UNREAD_BODY_DRAIN_BYTES_MAX, UNREAD_BODY_DRAIN_MS_MAX, UWS_BODY_FIRST_BYTES_MAX, UWS_BODY_WAIT_SWEEP_MS, UWS_BODY_WAITING_MAX,
  UWS_STALL_REARM_MS,
} from '../config/limits.ts';
import type { BodyMeter, Dispatcher, MeteredExchange } from './dispatch.ts';
import { HOST_REPEATED, SSE_OPENING, STATUS_TEXT, type RoundWrite, type SseRound, type SseSink } from './exchange.ts';
import { FOLLOW_HEADER, HOP_HEADER } from './proxy.ts';
import { httpStatusOf } from './http-status.ts';
import { BootError } from '../config/boot-error.ts';

type UwsModule = typeof UWS;

/** Loads the native uWS binary for this platform and ABI, or returns the reason it cannot. */
export function loadNativeUws(): { uws: UwsModule } | { error: string } {
  const require = createRequire(import.meta.url);
  const file = `@trufflesuite/uws-js-unofficial/binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  try {
    return { uws: require(file) as UwsModule };
  } catch (err) {
    return { error: `native uWebSockets.js did not load (${file}): ${(err as Error).message.split('\n')[0]}` };
  }
}

export interface UwsServer {
  port: number;
  /** Stops accepting connections; requests under way go on (a draining star). */
  close(): void;
  /** Closes every connection left (once the requests under way were answered or given up on). */
  closeConnections(): void;
}

/** The request headers routes read, by method. uWS requests are only readable inside the handler's
 *  tick, so these are copied up front; each getHeader is a native call, so only what a method needs. */
/** The cluster's routing headers (proxy.ts): without them a star on this engine would not see that a
 *  request is a hop already (and hop again) or that the Gateway follows the leader (and not answer 421). */
const CLUSTER_HEADERS = [HOP_HEADER, FOLLOW_HEADER];
const HEADERS_FOR_GET = ['authorization', 'last-event-id', 'range', 'content-length', 'transfer-encoding', ...CLUSTER_HEADERS];
const HEADERS_FOR_BODY = ['authorization', 'content-length', 'transfer-encoding', ...CLUSTER_HEADERS];
/** With CORS origins configured, plain requests also need their Origin. */
const HEADERS_FOR_GET_CORS = [...HEADERS_FOR_GET, 'origin'];
const HEADERS_FOR_BODY_CORS = [...HEADERS_FOR_BODY, 'origin'];
/** A CORS preflight (read whether or not origins are configured: a denied one is 403). */
const HEADERS_FOR_OPTIONS = [
  'authorization', 'origin', 'access-control-request-method', 'access-control-request-headers', 'content-length', 'transfer-encoding',
];

/** A header name to read, with its bytes made once: uWS turns a string argument into UTF-8 on every
 *  call (v8::String::Utf8Value showed as 4 % of the main thread at 64 producers), bytes it reads as
 *  they are. */
interface HeaderName { name: string; bytes: Uint8Array }
const named = (names: readonly string[]): readonly HeaderName[] => names.map((name) => ({ name, bytes: Buffer.from(name, 'latin1') }));
const READ_FOR_GET = named(HEADERS_FOR_GET);
const READ_FOR_BODY = named(HEADERS_FOR_BODY);
const READ_FOR_GET_CORS = named(HEADERS_FOR_GET_CORS);
const READ_FOR_BODY_CORS = named(HEADERS_FOR_BODY_CORS);
const READ_FOR_OPTIONS = named(HEADERS_FOR_OPTIONS);

function headersFor(method: string, cors: boolean): readonly HeaderName[] {
  if (method === 'GET' || method === 'HEAD') return cors ? READ_FOR_GET_CORS : READ_FOR_GET;
  if (method === 'OPTIONS') return READ_FOR_OPTIONS;
  return cors ? READ_FOR_BODY_CORS : READ_FOR_BODY;
}

/** Response header names and values as bytes, made once each (see HeaderName). Only strings up to
 *  ENCODED_STRING_BYTES_MAX are kept, and at most ENCODED_STRINGS_MAX of them: the names and the
 *  constant values (a content type) are a few dozen; a value that varies (a Location) is passed as
 *  the string it is once the cache is full. */
const ENCODED_STRINGS_MAX = 256;
const ENCODED_STRING_BYTES_MAX = 64;
const encodedStrings = new Map<string, Uint8Array>();
function encoded(s: string): string | Uint8Array {
  const hit = encodedStrings.get(s);
  if (hit !== undefined) return hit;
  if (encodedStrings.size >= ENCODED_STRINGS_MAX || s.length > ENCODED_STRING_BYTES_MAX) return s;
  const bytes = Buffer.from(s, 'utf8');
  encodedStrings.set(s, bytes);
  return bytes;
}

const REFUSAL_HEADERS: [string, string][] = [['Content-Type', 'application/json']];

/** Methods whose routes may read a request body. */
const bodyMethod = (m: string): boolean => m === 'POST' || m === 'PUT' || m === 'PATCH';

/** Status lines built once, as bytes (see HeaderName). */
const STATUS_LINE: Record<number, Uint8Array> = Object.fromEntries(
  Object.entries(STATUS_TEXT).flatMap(([k, v]) => (v === undefined ? [] : [[k, Buffer.from(`${k} ${v}`, 'latin1')]])),
);

/** The Authorization, Content-Length, Content-Encoding, Last-Event-ID and Host fields of the request
 *  head being read, collected by one module-level callback (req.forEach runs it synchronously): a
 *  closure over locals made a closure and a context on every request. */
const repeated = { auth: [] as string[], lengths: 0, hosts: 0, close: false, firstConnectionBytes: -1, codings: [] as string[], lastIds: [] as string[] };
/** A Connection field's options (comma-separated, case-insensitive) hold `close` (RFC 9112 9.6). */
const CLOSE_OPTION = /(?:^|,)[ \t]*close[ \t]*(?:,|$)/i;
const countRepeated = (k: string, v: string): void => {
  if (k === 'authorization') repeated.auth.push(v);
  else if (k === 'content-length') repeated.lengths++;
  else if (k === 'host') repeated.hosts++;
  else if (k === 'connection') {
    if (repeated.firstConnectionBytes < 0) repeated.firstConnectionBytes = v.length;
    if (CLOSE_OPTION.test(v)) repeated.close = true;
  }
  else if (k === 'content-encoding') repeated.codings.push(v);
  else if (k === 'last-event-id') repeated.lastIds.push(v);
};

/** The answer UwsExchange.respond is writing: res.cork runs its callback at once, so the answer is
 *  passed through here to one module-level callback rather than a closure (and the context its
 *  captured variables need) made for every request. */
const NO_HEADERS: [string, string][] = [];
const answer = { res: undefined as unknown as UWS.HttpResponse, status: 0, headers: NO_HEADERS, body: '' as string | Buffer, close: false, sayClose: false, headLength: -1 };
const CONNECTION = Buffer.from('Connection', 'latin1');
const CLOSE = Buffer.from('close', 'latin1');
const writeAnswer = (): void => {
  // Read once: a callback uWS ran from inside these writes could answer another request through here.
  const { res, status, headers, body, close, sayClose, headLength } = answer;
  res.writeStatus(STATUS_LINE[status] ?? `${status}`);
  for (const [k, v] of headers) res.writeHeader(encoded(k), encoded(v));
  if (sayClose) res.writeHeader(CONNECTION, CLOSE);
  // A HEAD answer never carries a body, an error's envelope included (respond drops it): bytes after
  // it would be read as the start of the next answer. Its Content-Length is the GET's (RFC 9110 8.6),
  // written by hand: this uWS build's endWithoutBody(length) writes it but then waits for that many
  // body bytes, so the keep-alive connection's next request is never answered; endWithoutBody() with
  // no length writes none of its own and ends. It takes no close flag without a length, so a HEAD
  // answered while the connection must close says Content-Length: 0 instead.
  // A 204 carries no Content-Length (RFC 9110 8.6); only one answered while the connection must
  // close says 0, for the same reason as HEAD below.
  if (status === 204) { if (close) res.endWithoutBody(0, true); else res.endWithoutBody(); }
  else if (headLength >= 0 && !close) {
    res.writeHeader('Content-Length', String(headLength));
    res.endWithoutBody();
  } else res.end(body, close);
};

class UwsExchange implements MeteredExchange {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  aborted = false;
  /** uWS does not expose client-certificate verification; mtls is served by native-free/. */
  readonly clientCertVerified = false;
  private readonly headers: Record<string, string> = {};
  /** The request's Connection field asks to close, and whether uWS saw that ask itself (see the head walk). */
  private clientClose = false;
  private uwsClosesUnsaid = false;
  /** What to tell when the client goes away: an event stream's sink (set by startStream; one per
   *  exchange, so no array is made for every request). */
  private onAbort: (() => void) | undefined;
  private bodyChunks: Buffer[] = [];
  private bodyBytes = 0;
  private bodyDone = false;
  private bodyWaiter: ((err?: Error) => void) | undefined;
  /** Until a route sets its own cap, no body may grow past the largest any route of this method
   *  accepts: an append's for POST, PUT and PATCH; for the others (no route reads their body) only
   *  what an early answer would drain. */
  private bodyLimit: number;
  private bodyTooLarge = false;
  /** The body budgets this body is charged to (dispatch.ts), and why they refused it, if they did. */
  private meter: BodyMeter | undefined;
  private bodyRefusal: ServiceError | undefined;
  /** Nobody will read this body (an event stream, an answer already given): count it, keep nothing. */
  private discardBody = false;
  /** An answer given before the body was read (an early error), sent once the body is drained. */
  private deferred: (() => void) | undefined;
  /** Set while this request waits for its small body before dispatch (see BodyFirst), with its
   *  neighbours in BodyFirst's list and the sweep count when it began to wait. */
  bodyFirst: BodyFirst | undefined;
  bodyFirstPrev: UwsExchange | undefined;
  bodyFirstNext: UwsExchange | undefined;
  bodyFirstSweep = 0;

  readonly startedAt = performance.now();
  /** A head that parsed but cannot be served (a repeated Content-Length): refused before dispatch. */
  headError: ServiceError | undefined;

  /** `drain.draining`: the listener is closed, so every answer closes its connection (a client that
   *  kept it would send its next request into a star about to hang up, and not know its fate). */
  constructor(private readonly res: UWS.HttpResponse, req: UWS.HttpRequest, cors: boolean, private readonly drain: { draining: boolean }) {
    this.method = req.getCaseSensitiveMethod().toUpperCase();
    this.bodyLimit = bodyMethod(this.method) ? APPEND_BODY_BYTES_MAX : BODYLESS_METHOD_BODY_BYTES_MAX;
    this.path = req.getUrl();
    this.query = req.getQuery() ?? '';
    for (const h of headersFor(this.method, cors)) {
      const v = req.getHeader(h.bytes);
      if (v !== '') this.headers[h.name] = v;
    }
    // The Durable Streams surface (src/api/ds/) reads many protocol headers: copy them all.
    if (this.path.startsWith('/ds/')) req.forEach((k, v) => { this.headers[k] ??= v; });
    // getHeader returns the first of repeated headers; a repeated Authorization must not pass as its
    // first copy (a proxy may have read the other), so all copies are joined and authentication
    // refuses the result. A repeated Content-Length makes the body's end ambiguous (uWS frames it by
    // the first copy; a proxy in front may have used another): RFC 9112 6.3 makes it an
    // unrecoverable error, answered 400 and closed. The same walk reads a body's Content-Encoding,
    // repeated fields joined into one list (RFC 9110 5.3) as node:http does, so a request with a body
    // pays no getHeader call for it. A repeated Last-Event-ID is joined too, so a subscribe given two
    // cursors is refused (400) as on the node engine, never resumed from whichever came first. A
    // repeated Host is refused (400) as RFC 9112 3.2 says: so every head is walked (a request with a
    // body or a token was walked already; a bare GET pays a walk of its few fields).
    repeated.auth.length = 0;
    repeated.lengths = 0;
    repeated.hosts = 0;
    repeated.close = false;
    repeated.codings.length = 0;
    repeated.lastIds.length = 0;
    repeated.firstConnectionBytes = -1;
    req.forEach(countRepeated);
    // The client asks to close (RFC 9112 9.6): the answer closes and says so. uWS (20.30) takes a first
    // Connection value of exactly five bytes (`close` in any case) as that ask: it then closes after the
    // answer but never writes the field, so it is written here; any other ask (`keep-alive, close`) is
    // answered as one the star closes on its own account, for which uWS writes the field itself.
    this.clientClose = repeated.close;
    this.uwsClosesUnsaid = repeated.firstConnectionBytes === 5;
    if (repeated.auth.length > 1) this.headers.authorization = repeated.auth.join(', ');
    if (repeated.lengths > 1) this.headError = invalid('Content-Length is given more than once (RFC 9112 6.3)');
    else if (repeated.hosts > 1) this.headError = invalid(HOST_REPEATED);
    if (repeated.codings.length > 0) this.headers['content-encoding'] = repeated.codings.join(', ');
    // getHeader skipped an empty first copy; the walk sees every copy.
    if (repeated.lastIds.length > 1) this.headers['last-event-id'] = repeated.lastIds.join(', ');
    repeated.auth.length = 0;
    repeated.codings.length = 0;
    repeated.lastIds.length = 0;
    res.onAborted(() => {
      this.aborted = true;
      const told = this.onAbort;
      this.onAbort = undefined;
      told?.();
      this.bodyWaiter?.(new Error('aborted'));
      this.bodyFirst?.gone(this);
    });
    // Start reading at once: uWS delivers the body only to a handler attached in this tick.
    if (this.headers['content-length'] !== undefined || this.headers['transfer-encoding'] !== undefined) {
      res.onData((ab, isLast) => this.onChunk(ab, isLast));
    } else {
      this.bodyDone = true;
    }
  }

  private onChunk(ab: ArrayBuffer, isLast: boolean): void {
    if (!this.bodyTooLarge) {
      this.bodyBytes += ab.byteLength;
      if (this.discardBody) {
        if (this.bodyBytes > this.bodyLimit) this.bodyTooLarge = true;
      } else if (this.bodyBytes > this.bodyLimit) {
        this.bodyTooLarge = true;
        this.bodyChunks = [];
      } else if (this.meter && !this.meter.charge(ab.byteLength)) {
        this.refuseBody(this.meter.refusal);
      } else {
        // ab is only valid during this callback. Copying through a view puts a small body in Node's
        // buffer pool; ab.slice(0) would allocate a fresh ArrayBuffer for every request.
        this.bodyChunks.push(Buffer.from(new Uint8Array(ab)));
      }
    }
    if (isLast) this.bodyDone = true;
    if (this.bodyWaiter && (isLast || this.bodyTooLarge)) this.bodyWaiter();
    if (this.bodyFirst && (isLast || this.bodyTooLarge)) this.bodyFirst.dispatch(this);
    if (this.deferred && (isLast || this.bodyTooLarge)) this.deferred();
  }

  header(name: string): string | undefined { return this.headers[name]; }

  meterBody(meter: BodyMeter): void {
    this.meter = meter;
    // What came before the route was known (a small body read whole first) is charged now.
    if (this.bodyBytes > 0 && !this.bodyTooLarge && !meter.charge(this.bodyBytes)) this.refuseBody(meter.refusal);
  }

  /** A budget refused the body: stop keeping it; the read fails with the refusal (429) and the
   *  answer closes the connection rather than drain it. */
  private refuseBody(refusal: ServiceError | undefined): void {
    this.bodyTooLarge = true;
    this.bodyRefusal = refusal ?? new ServiceError('resource_exhausted', 'too many request bytes in flight; retry shortly');
    this.bodyChunks = [];
  }

  /** Answers headError's envelope and closes: the connection's framing cannot be trusted. */
  refuseHead(e: ServiceError): void {
    this.bodyTooLarge = true; // nothing more is read or drained
    this.respond(httpStatusOf(e.code), REFUSAL_HEADERS, JSON.stringify(e.toBody()));
  }

  /** A body of at most UWS_BODY_FIRST_BYTES_MAX declared bytes is still to arrive. */
  smallBodyPending(): boolean {
    if (this.bodyDone || this.headers['transfer-encoding'] !== undefined) return false;
    const declared = Number(this.headers['content-length']);
    return declared >= 0 && declared <= UWS_BODY_FIRST_BYTES_MAX;
  }

  readBody(maxBytes: number): Buffer | Promise<Buffer> {
    this.bodyLimit = maxBytes;
    // A body declared past the cap is refused before it is read (uWS would deliver it all first).
    if (this.bodyBytes > maxBytes || Number(this.headers['content-length']) > maxBytes) { this.bodyTooLarge = true; this.bodyChunks = []; }
    const finish = (): Buffer => {
      if (this.bodyRefusal) throw this.bodyRefusal;
      if (this.bodyTooLarge) throw new ServiceError('payload_too_large', `request body is over the ${maxBytes}-byte limit`);
      return this.bodyChunks.length === 1 ? this.bodyChunks[0] : Buffer.concat(this.bodyChunks);
    };
    if (this.bodyDone || this.bodyTooLarge) return finish(); // the common case: the body came with the headers
    return new Promise((resolve, reject) => {
      this.bodyWaiter = (err) => {
        this.bodyWaiter = undefined;
        if (err) reject(err);
        else try { resolve(finish()); } catch (e) { reject(e); }
      };
    });
  }

  respond(status: number, headers: [string, string][], body: string | Buffer, headLength?: number): void {
    if (this.aborted) return;
    if (!this.bodyDone && !this.bodyTooLarge && this.answerAfterBody(status, headers, body, headLength)) return;
    // An oversized body left unread: answer and close rather than drain it.
    answer.res = this.res;
    answer.status = status;
    answer.headers = headers;
    const head = this.method === 'HEAD';
    answer.body = head ? '' : body;
    answer.headLength = head ? (headLength ?? (typeof body === 'string' ? Buffer.byteLength(body) : body.length)) : -1;
    // An ask uWS saw closes by itself (close stays false: a HEAD then still says its GET's length, and
    // fetch asks to close after every HEAD); any other ask is closed as the star's own.
    answer.close = this.bodyTooLarge || !this.bodyDone || this.drain.draining || (this.clientClose && !this.uwsClosesUnsaid);
    answer.sayClose = this.uwsClosesUnsaid;
    this.res.cork(writeAnswer);
    answer.body = '';
    answer.headLength = -1;
    answer.headers = NO_HEADERS;
    this.aborted = true; // the response object is no longer ours
  }

  /** An answer before the body was read (a 404, 405, 401 …): read and drop the rest of a small body
   *  first, so the connection stays usable, and answer then (true). Closing on unread bytes makes the
   *  kernel reset it, and the client may lose the answer. A body past UNREAD_BODY_DRAIN_BYTES_MAX is
   *  not drained: false, and the answer closes the connection. */
  private answerAfterBody(status: number, headers: [string, string][], body: string | Buffer, headLength: number | undefined): boolean {
    this.bodyLimit = Math.min(this.bodyLimit, UNREAD_BODY_DRAIN_BYTES_MAX);
    // A body declared past what would be drained is not waited for at all.
    const drainable = !(Number(this.headers['content-length']) > UNREAD_BODY_DRAIN_BYTES_MAX);
    if (drainable && this.bodyBytes <= this.bodyLimit) {
      this.bodyChunks = [];
      this.discardBody = true;
      // A body that stalls is not waited for long: then answer and hang up.
      const timer = setTimeout(() => { if (this.deferred) { this.bodyTooLarge = true; this.deferred(); } }, UNREAD_BODY_DRAIN_MS_MAX);
      this.deferred = () => { clearTimeout(timer); this.deferred = undefined; this.respond(status, headers, body, headLength); };
      return true;
    }
    this.bodyTooLarge = true;
    return false;
  }

  startStream(headers: [string, string][]): SseSink {
    // A body sent with a subscribe is never read: drop it rather than hold it for the stream's life.
    this.bodyChunks = [];
    this.discardBody = true;
    const sink = new UwsSseSink(this.res);
    this.onAbort = () => sink.aborted();
    sink.open(headers);
    return sink;
  }
}

/** An empty cork: its uncork flushes what uWS holds for the socket. */
const NOTHING = (): void => undefined;

/** uWS (HttpResponse::write) ends each chunk of a chunked answer with the CRLF it writes before the
 *  next chunk's size, so a chunk's last two bytes go out only with the next write. A client that
 *  parses the chunked framing strictly (urllib3 under Python's requests, http.client) releases a chunk
 *  only with its CRLF: it saw every event one write late, and the newest only with the next heartbeat
 *  (15 s). So a write that ends at a frame's end is followed by this empty comment frame, which
 *  carries that CRLF out at once; the one it leaves pending is a frame nothing acts on, like `: hb`.
 *  Inside cork() it goes in the same send; after a lone write, a microtask later, and not at all when
 *  the stream ends meanwhile (the end's own bytes close the chunk, so a stream's last frame stays its
 *  last); none follows the opening comment (the first frame closes it). */
const CHUNK_CLOSER = Buffer.from(':\n\n', 'latin1'); // bytes: a string is made UTF-8 on every write
const LF = 0x0a;

/** writeRound's socket and frames, and its result, for `writeRoundCorked` (res.cork takes no
 *  arguments; a closure per delivery is what the round avoids). */
let roundRes: UWS.HttpResponse | undefined;
let roundFrames: readonly Buffer[] = [];
let roundResult = 0;
/** Frames written so far in this round (a throw part-way reports them as written). */
let roundWritten = 0;
const writeRoundCorked = (): void => {
  const res = roundRes!;
  const frames = roundFrames;
  roundResult = frames.length;
  for (let i = 0; i < frames.length; i++) {
    const room = res.write(frames[i]);
    roundWritten = i + 1;
    if (!room) { roundResult = -(i + 1); break; }
  }
  // Every round ends at a frame's end: its chunk is closed in the same send (uWS keeps it with the
  // frame when the socket is full, and sends both once it drains), as the sink's own cork does.
  res.write(CHUNK_CLOSER);
};

/** The uWS RoundWrite (exchange.ts): the frames and the chunk closer in one corked send, touching only
 *  the response. The cohort takes a member out as soon as its sink closes (uWS's onAborted runs the
 *  sink's close callbacks at once), so `out` is open; a throw (uWS.js throws on a response it already
 *  let go of) ends the round for this socket with what was written reported as written and the socket
 *  as full, so the member leaves the cohort and its pump, which sees the sink closed, ends. */
const writeRound: RoundWrite = (out, frames) => {
  roundRes = out as UWS.HttpResponse;
  roundFrames = frames;
  roundWritten = 0;
  try {
    roundRes.cork(writeRoundCorked);
  } catch {
    roundResult = -roundWritten;
  } finally {
    roundRes = undefined;
    roundFrames = [];
  }
  return roundResult;
};

/** The chunk ends with a blank line: the end of an event stream frame (relayed bytes may end mid-frame). */
function endsFrame(chunk: string | Buffer): boolean {
  const n = chunk.length;
  if (n < 2) return false;
  return typeof chunk === 'string'
    ? chunk.charCodeAt(n - 1) === LF && chunk.charCodeAt(n - 2) === LF
    : chunk[n - 1] === LF && chunk[n - 2] === LF;
}

/**
 * An event stream on a uWS response. A class (not an object literal of closures) because the fan-out
 * calls it for every subscriber on every batch: `closed` is a plain field, the methods are shared,
 * and a write outside cork() goes through one bound function instead of a closure per write.
 */
export class UwsSseSink implements SseSink {
  closed = false;
  readonly round: SseRound;
  /** Inside cork() the writes go straight to uWS's cork buffer (one send when it returns); outside,
   *  each write corks itself (uWS sends uncorked writes from JS one syscall at a time). */
  private corked = false;
  private writable: (() => void) | undefined;
  private readonly closeCbs: (() => void)[] = [];
  /** writeOne's argument and result (it runs inside res.cork, which takes no arguments). */
  private chunk: string | Buffer = '';
  private wrote = false;
  private readonly writeOne = (): void => { this.wrote = this.res.write(this.chunk); };
  /** The last bytes written end a frame and no CHUNK_CLOSER has followed them yet. */
  private frameEnded = false;
  private closerQueued = false;
  private readonly writeCloser = (): void => { this.res.write(CHUNK_CLOSER); };
  private readonly closeChunk = (): void => {
    this.closerQueued = false;
    if (this.closed || !this.frameEnded) return;
    this.frameEnded = false;
    this.res.cork(this.writeCloser);
  };
  /** cork()'s callback, followed in the same send by CHUNK_CLOSER when its last write ended a frame. */
  private corkedFn: () => void = NOTHING;
  private readonly runCorked = (): void => {
    this.corkedFn();
    if (this.frameEnded && !this.closed) { this.frameEnded = false; this.res.write(CHUNK_CLOSER); }
  };
  /** While the socket is full: re-arms uWS's own 10 s close every UWS_STALL_REARM_MS, so only
   *  the pump's stall bound (the spec's 60 s) ends a stream whose consumer paused. */
  private rearm: ReturnType<typeof setInterval> | undefined;
  private readonly keepWaiting = (): void => {
    if (this.closed) { this.stopRearm(); return; }
    // pause() hangs the timer and resume() arms it again at 10 s (uWS HttpResponse), restoring the
    // socket's polling as it was; no byte is written, so the buffered frames stay as they are and
    // the writable event that ends the wait still comes.
    this.res.pause();
    this.res.resume();
  };
  /** A write (its own, or a cohort's round: SseSink.filled) found the socket full. */
  filled(): void {
    if (!this.closed) this.rearm ??= setInterval(this.keepWaiting, UWS_STALL_REARM_MS);
  }
  private stopRearm(): void {
    if (this.rearm !== undefined) { clearInterval(this.rearm); this.rearm = undefined; }
  }

  constructor(private readonly res: UWS.HttpResponse) {
    this.round = { out: res, write: writeRound };
  }

  open(headers: [string, string][]): void {
    const res = this.res;
    res.cork(() => {
      res.writeStatus(STATUS_LINE[200]);
      for (const [k, v] of headers) res.writeHeader(encoded(k), encoded(v));
      res.write(SSE_OPENING);
    });
    res.onWritable(() => {
      this.stopRearm();
      // With an onWritable handler registered, uWS leaves draining its own buffer to the handler's
      // next write: the end of a frame it could not send (a write that found the socket full, or one
      // it took whole and reported written) would wait for whatever comes next, a heartbeat up to 15 s
      // away or, on a quiet /ds stream, the stream's end. An empty cork's uncork sends it now (and
      // polls for the next writable event if it still does not fit).
      if (!this.closed) res.cork(NOTHING);
      const w = this.writable;
      this.writable = undefined;
      w?.();
      return true;
    });
  }

  /** The client went away (uWS onAborted). */
  aborted(): void {
    this.closed = true;
    this.stopRearm();
    for (const f of this.closeCbs) f();
    this.writable?.();
  }

  write(chunk: string | Buffer): boolean {
    if (this.closed) return false;
    if (this.corked) {
      const ok = this.res.write(chunk);
      this.frameEnded = endsFrame(chunk);
      if (!ok) this.filled();
      return ok;
    }
    this.chunk = chunk;
    this.res.cork(this.writeOne);
    this.chunk = '';
    this.frameEnded = endsFrame(chunk);
    if (this.frameEnded && !this.closerQueued) { this.closerQueued = true; queueMicrotask(this.closeChunk); }
    if (!this.wrote) this.filled();
    return this.wrote;
  }

  cork(fn: () => void): void {
    if (this.closed || this.corked) { fn(); return; }
    this.corked = true;
    this.corkedFn = fn;
    try { this.res.cork(this.runCorked); } finally { this.corked = false; this.corkedFn = NOTHING; }
  }

  onWritable(cb: () => void): void { this.writable = cb; }
  onClose(cb: () => void): void { this.closeCbs.push(cb); }

  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.frameEnded = false;
    this.stopRearm();
    this.res.cork(() => this.res.end());
    for (const f of this.closeCbs) f();
  }

  destroy(): void {
    if (this.closed) return;
    this.closed = true;
    this.stopRearm();
    this.res.close();
    for (const f of this.closeCbs) f();
  }
}

/**
 * uWS hands over a body only after the request handler returns, so a request dispatched at once
 * waits for its body on a promise. A small one (an append, a config) is dispatched once whole
 * instead: one promise and microtask turn less on every append. Large and chunked bodies are
 * dispatched at once, so an unauthorized or misrouted upload is refused before it is read. A small
 * body that stalls is dispatched by the sweep after one to two periods, and answered as before.
 */
class BodyFirst {
  /** Waiting requests, newest first, linked through their own fields: no Set, whose add/delete
   *  churn (a rehash whenever it shrinks) showed as 1.4 % of the main thread. */
  private head: UwsExchange | undefined;
  private count = 0;
  /** Sweeps so far; a request still waiting from before the last sweep has stalled. */
  private sweeps = 0;
  private readonly sweep: NodeJS.Timeout;

  constructor(private readonly dispatcher: Dispatcher) {
    this.sweep = setInterval(() => {
      const stalledBefore = this.sweeps++;
      for (let ex = this.head; ex;) {
        const next = ex.bodyFirstNext;
        if (ex.bodyFirstSweep < stalledBefore) this.dispatch(ex);
        ex = next;
      }
    }, UWS_BODY_WAIT_SWEEP_MS);
    this.sweep.unref();
  }

  wait(ex: UwsExchange): void {
    // Waiting bodies are not yet charged to the dispatcher's body budget, so their number is bounded:
    // past it a request is dispatched at once, as a large one is, and its body is charged.
    if (this.count >= UWS_BODY_WAITING_MAX) { void this.dispatcher.handle(ex); return; }
    ex.bodyFirst = this;
    ex.bodyFirstSweep = this.sweeps;
    ex.bodyFirstNext = this.head;
    if (this.head) this.head.bodyFirstPrev = ex;
    this.head = ex;
    this.count++;
  }

  /** The body is whole (or stalled): hand the request to the dispatcher, once. */
  dispatch(ex: UwsExchange): void {
    if (this.unlink(ex)) void this.dispatcher.handle(ex);
  }

  /** The client went away before its body came. */
  gone(ex: UwsExchange): void {
    this.unlink(ex);
  }

  private unlink(ex: UwsExchange): boolean {
    if (ex.bodyFirst !== this) return false;
    ex.bodyFirst = undefined;
    const { bodyFirstPrev: prev, bodyFirstNext: next } = ex;
    if (prev) prev.bodyFirstNext = next;
    else this.head = next;
    if (next) next.bodyFirstPrev = prev;
    ex.bodyFirstPrev = undefined;
    ex.bodyFirstNext = undefined;
    this.count--;
    return true;
  }

  stop(): void { clearInterval(this.sweep); }
}

/** uWS binds with SO_REUSEPORT, so a second star on the same port would silently share it (and
 *  its traffic). A plain bind first makes a taken port fail the start instead. */
async function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => reject(new BootError(`cannot listen on ${host}:${port}: ${err.code ?? err.message}`)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

export async function startUwsServer(uws: UwsModule, host: string, port: number, dispatcher: Dispatcher, tls?: { cert: string; key: string; ca?: string }): Promise<UwsServer> {
  await assertPortFree(host, port);
  const app = tls ? uws.SSLApp({ cert_file_name: tls.cert, key_file_name: tls.key, ...(tls.ca ? { ca_file_name: tls.ca } : {}) }) : uws.App();
  const cors = dispatcher.readsOrigin;
  const bodyFirst = new BodyFirst(dispatcher);
  const drain = { draining: false };
  app.any('/*', (res, req) => {
    const ex = new UwsExchange(res, req, cors, drain);
    if (ex.headError) ex.refuseHead(ex.headError);
    else if (ex.smallBodyPending()) bodyFirst.wait(ex);
    else void dispatcher.handle(ex);
  });
  return new Promise((resolve, reject) => {
    app.listen(host, port, (token) => {
      if (!token) { reject(new BootError(`cannot listen on ${host}:${port}`)); return; }
      resolve({
        port: uws.us_socket_local_port(token as unknown as UWS.us_socket),
        close: () => { drain.draining = true; bodyFirst.stop(); uws.us_listen_socket_close(token); },
        // The binary's App.close() closes every connection (and listener) it holds; this build's
        // typings do not declare it.
        closeConnections: () => (app as unknown as { close(): void }).close(),
      });
    });
  });
}
