// Answers for request heads node:http refuses before a request exists: llhttp's parse errors and
// its header timeout reach the server as 'clientError', where node would otherwise answer a bare
// `400 Bad Request` (or nothing) instead of the spec's error envelope. Each refusal gets the status
// that fits it, the envelope, `Connection: close`, and then the connection is closed.

import type { IncomingMessage, Server, ServerOptions } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  REFUSED_HEAD_DRAIN_BYTES_MAX, REFUSED_HEAD_DRAIN_MS_MAX, REQUEST_HEAD_BYTES_MAX, REQUEST_HEAD_CHECK_MS, REQUEST_HEAD_MS_MAX, REQUEST_HEADERS_MAX,
} from '../src/config/limits.ts';
import { ServiceError } from '../src/core/errors.ts';
import { methodsFor } from '../src/api/routes.ts';
import { httpStatusOf } from '../src/api/http-status.ts';
import { HOST_REPEATED } from '../src/api/exchange.ts';

export interface HeadRefusal {
  status: number;
  message: string;
  /** 405: the methods the path serves. */
  allow?: readonly string[];
}

const REASON: Readonly<Record<number, string>> = {
  400: 'Bad Request', 404: 'Not Found', 405: 'Method Not Allowed', 408: 'Request Timeout', 431: 'Request Header Fields Too Large',
};

export const fromError = (e: ServiceError): HeadRefusal => ({ status: httpStatusOf(e.code), message: e.message, ...(e.detail.allow ? { allow: e.detail.allow } : {}) });

/** A byte a request target never holds raw (RFC 3986: targets are ASCII). */
const NON_ASCII = /[\u0080-\uffff]/;

/** The request line's target, from the bytes llhttp saw (absent when it did not get that far). */
function targetOf(raw: Buffer | undefined): string | undefined {
  if (!raw) return undefined;
  const line = raw.subarray(0, Math.min(raw.length, REQUEST_HEAD_BYTES_MAX)).toString('latin1');
  const m = /^[^ \r\n]+ ([^ \r\n]+)/.exec(line);
  return m?.[1];
}

/** The path of an origin-form or absolute-form target (RFC 9112 3.2), without the query. */
export function targetPath(target: string): string | undefined {
  let t = target;
  const abs = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(t);
  if (abs) t = t.slice(abs[0].length) || '/';
  if (!t.startsWith('/')) return undefined; // authority-form (CONNECT) or asterisk-form: no path here
  const q = t.indexOf('?');
  return q < 0 ? t : t.slice(0, q);
}

/** A method llhttp does not know (or a CONNECT, which node hands over as a tunnel): 405 with the
 *  path's methods, 404 for a path nothing serves, 400 for a target that names no path. */
export function methodRefusal(method: string, target: string | undefined): HeadRefusal {
  const path = target === undefined ? undefined : targetPath(target);
  if (path === undefined) return fromError(new ServiceError('invalid_argument', `method ${method} with a target that names no path`));
  const allow = methodsFor(path);
  if (allow.length === 0) return fromError(new ServiceError('not_found', 'no such path'));
  return fromError(new ServiceError('method_not_allowed', `method ${method} is not supported here`, { allow }));
}

/** What to answer for a clientError; undefined when there is nobody to answer (the client went away). */
export function headRefusal(err: NodeJS.ErrnoException & { rawPacket?: Buffer; reason?: string }): HeadRefusal | undefined {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return fromError(new ServiceError('request_head_too_large', `the request head is over ${REQUEST_HEAD_BYTES_MAX} bytes`));
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return fromError(new ServiceError('request_head_timeout', `the request head did not arrive whole within ${REQUEST_HEAD_MS_MAX} ms`));
    case 'HPE_INVALID_METHOD': {
      const raw = err.rawPacket?.subarray(0, 64).toString('latin1') ?? '';
      return methodRefusal(/^[^ \r\n]*/.exec(raw)?.[0] || '?', targetOf(err.rawPacket));
    }
    case 'HPE_INVALID_URL': {
      // llhttp refuses a raw byte past ASCII in the target before any route sees it; the uWS engine
      // answers such a key as the spec's bad path segment (404), and so does this one.
      const path = targetPath(targetOf(err.rawPacket) ?? '');
      if (path !== undefined && NON_ASCII.test(path)) return fromError(new ServiceError('not_found', 'bad path segment: a key outside ASCII must be percent-encoded'));
      return fromError(new ServiceError('invalid_argument', `malformed request head (${err.reason ?? err.code})`));
    }
    case 'HPE_INVALID_CONTENT_LENGTH':
      return fromError(new ServiceError('invalid_argument', 'Content-Length must be one non-negative integer below 2^64'));
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return fromError(new ServiceError('invalid_argument', `Content-Length is given twice, or with Transfer-Encoding (${err.reason ?? 'RFC 9112 6.3'})`));
    case undefined:
      return undefined;
    default:
      // Any other parse error of llhttp (HPE_*) is a malformed head; socket errors have nobody to answer.
      if (!err.code.startsWith('HPE_') || err.code === 'HPE_INVALID_EOF_STATE') return undefined;
      return fromError(new ServiceError('invalid_argument', `malformed request head (${err.reason ?? err.code})`));
  }
}

/** More header fields than REQUEST_HEADERS_MAX. */
export const tooManyHeaders = (): HeadRefusal => fromError(new ServiceError('request_head_too_large', `a request carries at most ${REQUEST_HEADERS_MAX} header fields`));

/** The refusal as a whole HTTP/1.1 answer. */
export function refusalBytes(r: HeadRefusal): string {
  const body = JSON.stringify({ error: r.message });
  const allow = r.allow ? `Allow: ${r.allow.join(', ')}\r\n` : '';
  return `HTTP/1.1 ${r.status} ${REASON[r.status] ?? ''}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${allow}Connection: close\r\n\r\n${body}`;
}

/** Sockets already answered: llhttp reports every later chunk of a broken head again. */
const answered = new WeakSet<Duplex>();

/**
 * Answers on a raw socket and closes it. What the client still sends is read and dropped for a
 * bounded while first: closing on unread bytes makes the kernel reset the connection, and a client
 * that is still writing its oversized head would then lose the answer.
 */
export function answerAndClose(sock: Duplex, r: HeadRefusal | undefined): void {
  if (answered.has(sock)) return;
  answered.add(sock);
  if (!r || !sock.writable) { sock.destroy(); return; }
  sock.end(refusalBytes(r));
  let dropped = 0;
  const timer = setTimeout(() => sock.destroy(), REFUSED_HEAD_DRAIN_MS_MAX);
  timer.unref();
  sock.on('data', (c: Buffer) => { dropped += c.length; if (dropped > REFUSED_HEAD_DRAIN_BYTES_MAX) sock.destroy(); });
  sock.once('close', () => clearTimeout(timer));
  sock.resume();
}

/** node:http's options for bounded heads. requestTimeout 0 (event streams are long-lived) does not
 *  bound heads: headersTimeout does, checked every REQUEST_HEAD_CHECK_MS. */
export const HEAD_BOUNDS: ServerOptions = {
  maxHeaderSize: REQUEST_HEAD_BYTES_MAX, headersTimeout: REQUEST_HEAD_MS_MAX, requestTimeout: 0,
  connectionsCheckingInterval: REQUEST_HEAD_CHECK_MS, requireHostHeader: false, // refusedHead answers it
};

/**
 * Makes a node:http server (made with HEAD_BOUNDS) answer every head it refuses with the envelope:
 * llhttp's refusals and expired heads (node's default is a bare 400 or nothing), and CONNECT (node
 * hands it over as a tunnel and, with no listener, drops it unanswered). The data bridge's node engine
 * and the Gateway both serve through it.
 */
export function refuseBadHeads(server: Server): void {
  server.maxHeadersCount = REQUEST_HEADERS_MAX + 1;
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer; reason?: string }, sock: Duplex) => answerAndClose(sock, headRefusal(err)));
  server.on('connect', (req: IncomingMessage, sock: Duplex) => answerAndClose(sock, methodRefusal('CONNECT', req.url)));
}

/** A head node parsed but that is not served, answered with the envelope and closed (true):
 *  - more header fields than REQUEST_HEADERS_MAX, 431 (node keeps at most maxHeadersCount fields, one
 *    more than allowed, so one too many shows here);
 *  - an HTTP/1.1 request without Host (RFC 9112 3.2), 400; node's own answer to it (requireHostHeader)
 *    is a bare 400 without the envelope, so HEAD_BOUNDS turns that off and it is refused here. */
export function refusedHead(req: IncomingMessage): boolean {
  if (req.rawHeaders.length > 2 * REQUEST_HEADERS_MAX) {
    answerAndClose(req.socket, tooManyHeaders());
    return true;
  }
  if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
    answerAndClose(req.socket, fromError(new ServiceError('invalid_argument', 'an HTTP/1.1 request must carry a Host header (RFC 9112 3.2)')));
    return true;
  }
  if (hostLines(req.rawHeaders) > 1) {
    answerAndClose(req.socket, fromError(new ServiceError('invalid_argument', HOST_REPEATED)));
    return true;
  }
  return false;
}

/** How many Host field lines `raw` (name, value, name, value, …) holds. */
function hostLines(raw: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].length === 4 && raw[i].toLowerCase() === 'host') n++;
  return n;
}
