// The node:http twin of api/uws.ts: the same route table and dispatcher, served by Node's own HTTP
// server. Used when the native uWebSockets.js binary does not load, or with --http-engine node.

import { createServer as createHttp, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import { createServer as createHttps } from 'node:https';
import { readFileSync } from 'node:fs';
import { Server as NetServer, type AddressInfo, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import {
  PIPELINED_REQUESTS_QUEUED_MAX, REQUEST_BODY_IDLE_MS_MAX, REQUEST_BODY_WINDOW_BYTES_MIN,
  UNREAD_BODY_DRAIN_BYTES_MAX, UNREAD_BODY_DRAIN_MS_MAX,
} from '../src/config/limits.ts';
import { ServiceError } from '../src/core/errors.ts';
import type { BodyMeter, Dispatcher, MeteredExchange } from '../src/api/dispatch.ts';
import { SSE_OPENING, type SseSink } from '../src/api/exchange.ts';
import { endBounded } from '../src/api/end-bounded.ts';
import { HEAD_BOUNDS, answerAndClose, fromError, refuseBadHeads, refusedHead, targetPath } from './head-refusal.ts';
import { BootError } from '../src/config/boot-error.ts';

class NodeExchange implements MeteredExchange {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  aborted = false;
  readonly clientCertVerified: boolean;

  /** `drain.draining`: the listener is closed, so every answer closes its connection (a client that
   *  kept it would send its next request into a star about to hang up, and not know its fate). */
  constructor(private readonly req: IncomingMessage, private readonly res: ServerResponse, private readonly drain: { draining: boolean }) {
    this.clientCertVerified = (req.socket as TLSSocket).authorized === true;
    this.method = (req.method ?? 'GET').toUpperCase();
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    // An absolute-form target (`GET http://host/v1/... HTTP/1.1`) must be accepted (RFC 9112 3.2.2):
    // its path is the one routed. Anything else that is not origin-form routes nowhere (404).
    const target = q < 0 ? url : url.slice(0, q);
    this.path = target.startsWith('/') ? target : targetPath(target) ?? target;
    this.query = q < 0 ? '' : url.slice(q + 1);
    res.once('close', () => { if (!res.writableFinished) this.aborted = true; });
  }

  header(name: string): string | undefined {
    // Node keeps only the first of some repeated headers (Authorization among them); every copy
    // counts here, so a repeated Authorization is refused rather than read as its first copy.
    const v = this.req.headersDistinct[name];
    return v === undefined ? undefined : v.join(', ');
  }

  /** readBody was called: the body is the route's (a cut one is not drained). */
  private bodyTaken = false;
  /** The body budgets (dispatch.ts) each chunk is charged to as it arrives. */
  private meter: BodyMeter | undefined;

  meterBody(meter: BodyMeter): void { this.meter = meter; }

  readBody(maxBytes: number): Promise<Buffer> {
    this.bodyTaken = true;
    return new Promise((resolve, reject) => {
      const declared = Number(this.req.headers['content-length'] ?? 0);
      if (declared > maxBytes) {
        reject(new ServiceError('payload_too_large', `request body is over the ${maxBytes}-byte limit`));
        return;
      }
      // A body that stalls or trickles in is cut as uWS cuts it (REQUEST_BODY_IDLE_MS_MAX): no answer,
      // the connection closed, and the request's share of the body budget handed back. The window is
      // renewed each time REQUEST_BODY_WINDOW_BYTES_MIN more have come.
      const sock = this.req.socket;
      const window = setTimeout(() => sock.destroy(), REQUEST_BODY_IDLE_MS_MAX);
      let windowBytes = 0;
      const settle = (): void => { clearTimeout(window); };
      this.req.once('close', () => {
        settle();
        if (!this.req.complete) reject(new ServiceError('invalid_argument', 'the request body was cut short'));
      });
      const chunks: Buffer[] = [];
      let n = 0;
      this.req.on('data', (c: Buffer) => {
        n += c.length;
        windowBytes += c.length;
        if (windowBytes >= REQUEST_BODY_WINDOW_BYTES_MIN) { windowBytes = 0; window.refresh(); }
        const refusal = n > maxBytes
          ? new ServiceError('payload_too_large', `request body is over the ${maxBytes}-byte limit`)
          : this.meter && !this.meter.charge(c.length)
            ? this.meter.refusal ?? new ServiceError('resource_exhausted', 'too many request bytes in flight; retry shortly')
            : undefined;
        if (refusal) {
          // Left unread: the answer closes the connection.
          this.req.removeAllListeners('data');
          this.req.pause();
          chunks.length = 0;
          reject(refusal);
          return;
        }
        chunks.push(c);
      });
      this.req.once('end', () => { settle(); resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)); });
      this.req.once('error', reject);
    });
  }

  respond(status: number, headers: [string, string][], body: string | Buffer, headLength?: number): void {
    if (this.aborted || this.res.headersSent) return;
    const declared = this.req.headers['content-length'];
    const hasBody = (declared !== undefined && declared !== '0') || this.req.headers['transfer-encoding'] !== undefined;
    // A body declared past what would be drained is not waited for at all.
    const drainable = !(Number(declared) > UNREAD_BODY_DRAIN_BYTES_MAX);
    if (hasBody && !this.req.complete && !this.bodyTaken && drainable) {
      // An answer before the body was read (a 404, 405, 401 …): read and drop a small body first so
      // the connection stays usable; past UNREAD_BODY_DRAIN_BYTES_MAX, answer and hang up.
      this.bodyTaken = true;
      let n = 0;
      const giveUp = (): void => {
        clearTimeout(timer);
        this.req.off('data', onData);
        this.req.pause();
        this.send(status, headers, body, true, headLength);
      };
      const onData = (c: Buffer): void => {
        n += c.length;
        if (n > UNREAD_BODY_DRAIN_BYTES_MAX) giveUp();
      };
      // A body that stalls is not waited for long: then answer and hang up.
      const timer = setTimeout(giveUp, UNREAD_BODY_DRAIN_MS_MAX);
      this.req.on('data', onData);
      this.req.once('end', () => { clearTimeout(timer); this.send(status, headers, body, false, headLength); });
      return;
    }
    // A body cut short by its cap is left unread: answer and hang up.
    this.send(status, headers, body, hasBody && !this.req.complete, headLength);
  }

  private send(status: number, headers: [string, string][], body: string | Buffer, close: boolean, headLength: number | undefined): void {
    if (this.aborted || this.res.headersSent) return;
    const h: Record<string, string> = {};
    for (const [k, v] of headers) h[k] = v;
    if (close || this.drain.draining) h.Connection = 'close';
    // Headers set whole by writeHead leave node:http no room to add the length itself: without it,
    // every answer would go out chunked.
    // node:http sends no body for a HEAD, and keeps this length: the GET's (RFC 9110 8.6).
    if (status !== 204) h['Content-Length'] = String(headLength ?? (typeof body === 'string' ? Buffer.byteLength(body) : body.length));
    this.res.writeHead(status, h);
    this.res.end(status === 204 ? undefined : body);
  }

  startStream(headers: [string, string][]): SseSink {
    const res = this.res;
    const h: Record<string, string> = {};
    for (const [k, v] of headers) h[k] = v;
    res.writeHead(200, h);
    res.write(SSE_OPENING);
    let closed = false;
    const closeCbs: (() => void)[] = [];
    res.once('close', () => { closed = true; for (const f of closeCbs) f(); });
    return {
      get closed() { return closed || res.destroyed; },
      write: (chunk) => !closed && res.write(chunk),
      // node:http sends a corked response's chunks in one writev at uncork.
      cork: (fn) => {
        if (closed) { fn(); return; }
        res.cork();
        try { fn(); } finally { res.uncork(); }
      },
      onWritable: (cb) => {
        const once = (): void => { res.off('drain', once); res.off('close', once); cb(); };
        res.on('drain', once);
        res.on('close', once);
      },
      onClose: (cb) => { closeCbs.push(cb); },
      end: () => {
        if (closed) return;
        // Bounded as uWS bounds it (the pump's own stall bound ended with the stream).
        endBounded(res);
      },
      destroy: () => { if (!closed) res.destroy(); },
    };
  }
}

export interface NodeHttpServer {
  port: number;
  /** Stops accepting connections; requests under way and on open connections go on (a draining star). */
  close(): void;
  /** Closes every connection left (once the requests under way were answered or given up on). */
  closeConnections(): void;
}

/** One connection's requests, taken one at a time. node:http emits a pipelined request as soon as it
 *  is parsed and only keeps the answers in order; run at once, a second append would commit before a
 *  first whose body is still arriving, and a read would miss a write answered before it on the same
 *  connection (RFC 9112 9.3.2 allows that only for safe methods). So a request starts once the one
 *  before it on its connection has been answered; past PIPELINED_REQUESTS_QUEUED_MAX waiting, the
 *  connection is not read until one starts. */
class ConnectionLane {
  private busy = false;
  private readonly waiting: Array<() => void> = [];
  private paused = false;

  constructor(private readonly socket: Socket) {}

  run(res: ServerResponse, start: () => void): void {
    const go = (): void => {
      this.busy = true;
      res.once('close', () => this.next());
      start();
    };
    if (!this.busy) { go(); return; }
    this.waiting.push(go);
    if (this.waiting.length >= PIPELINED_REQUESTS_QUEUED_MAX && !this.paused) {
      this.paused = true;
      this.socket.pause();
    }
  }

  private next(): void {
    this.busy = false;
    const go = this.waiting.shift();
    if (this.paused && this.waiting.length < PIPELINED_REQUESTS_QUEUED_MAX) {
      this.paused = false;
      this.socket.resume();
    }
    go?.();
  }
}

export function startNodeServer(host: string, port: number, dispatcher: Dispatcher, tls?: { cert: string; key: string; ca?: string; requestCert?: boolean }): Promise<NodeHttpServer> {
  const drain = { draining: false };
  const lanes = new WeakMap<Socket, ConnectionLane>();
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    let lane = lanes.get(req.socket);
    if (lane === undefined) lanes.set(req.socket, lane = new ConnectionLane(req.socket));
    lane.run(res, () => serve(req, res));
  };
  const serve = (req: IncomingMessage, res: ServerResponse): void => {
    if (refusedHead(req)) return;
    // Under mtls a caller without a verified certificate finishes its handshake (to be told why), and
    // is answered 401 here, before any route: the open ones (a presigned object URL, the exchange)
    // included, as a refused handshake kept them from it. The connection is closed.
    if (tls?.requestCert && (req.socket as TLSSocket).authorized !== true) {
      answerAndClose(req.socket, fromError(new ServiceError('unauthenticated', 'a client certificate the --tls-client-ca signed is required')));
      return;
    }
    void dispatcher.handle(new NodeExchange(req, res, drain));
  };
  const server: Server = tls
    ? createHttps({
      ...HEAD_BOUNDS, cert: readFileSync(tls.cert), key: readFileSync(tls.key), ...(tls.ca ? { ca: readFileSync(tls.ca) } : {}),
      // Under mtls a caller without a verified certificate still completes the handshake, so the
      // handler above can tell it 401 in the error envelope rather than reset the connection.
      requestCert: tls.requestCert ?? false, rejectUnauthorized: false,
    }, handler)
    : createHttp(HEAD_BOUNDS, handler);
  server.keepAliveTimeout = 65_000;
  // Heads llhttp refuses (too large, unknown method, bad Content-Length, …), heads that time out and
  // CONNECT: the envelope with the status that fits, then close.
  refuseBadHeads(server);
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(new BootError(`cannot listen on ${host}:${port}: ${err.code ?? err.message}`)));
    server.listen(port, host, () => {
      resolve({
        port: (server.address() as AddressInfo).port,
        // Stops listening without node:http's close, which also closes idle keep-alive connections at
        // once: a client about to reuse one would send into a closed socket and not know whether its
        // request landed. They stay until closeConnections, answering with Connection: close.
        close: () => { drain.draining = true; NetServer.prototype.close.call(server); },
        closeConnections: () => server.closeAllConnections(),
      });
    });
  });
}
