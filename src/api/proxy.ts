// The data bridge's one hop: a request for a stream another star leads is sent, as it came, to that
// star's bridge with the caller's own credential, and its answer (JSON, bytes or an event stream) is
// relayed back. The hop is marked (`svcd-hop`), so a leader that finds the lease moved again answers
// 503 instead of hopping further: an HTTP caller never sees a redirect or NOT_OWNER (spec: Errors).

import { AsyncLocalStorage } from 'node:async_hooks';
import http from 'node:http';
import https from 'node:https';
import { PROXY_HEAD_MS_MAX, PROXY_LEADER_CHECK_MS, PROXY_SOCKETS_PER_PEER_MAX, SSE_CONNECTIONS_PER_HOST_MAX, SSE_STALL_MS } from '../config/limits.ts';
import { ServiceError } from '../core/errors.ts';
import { awaitDrain, SSE_OPENING, type HttpExchange } from './exchange.ts';

/** The header that marks a hop (its value is the forwarding star's id). */
export const HOP_HEADER = 'svcd-hop';
/** A caller that follows the leader itself (the Gateway) sends this header; a star that does not lead
 *  the stream then answers 421 Misdirected Request with the leader's bridge address in LEADER_HEADER
 *  instead of hopping. Only the Gateway sends it; other callers never see a 421. */
export const FOLLOW_HEADER = 'svcd-follow-leader';
export const LEADER_HEADER = 'svcd-leader';

/** Set while a request is handled as the stream's home: it arrived as a hop (another star sent it here,
 *  so this star takes a vacant lease rather than sending it on: star views of the membership can
 *  differ for a moment after a star comes or goes), or this star's own hop found the target refusing
 *  connections (`unreachable`: that star is down, so its lease is waited out here, not hopped to). */
export interface HopScope { unreachable?: string }
const hopScope = new AsyncLocalStorage<HopScope>();
export const inHop = (): boolean => hopScope.getStore() !== undefined;
/** The star a hop from this request found down, if any. */
export const unreachableStar = (): string | undefined => hopScope.getStore()?.unreachable;
export function asHop<T>(fn: () => T, scope: HopScope = {}): T { return hopScope.run(scope, fn); }

/** Methods a star may be asked twice without effect (RFC 9110 safe methods). */
export const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The refusal text for a request passed on to `who` that got no answer (`reason`). A request that
 *  changes something may have been carried out all the same (an append stored): the text says so,
 *  since a plain append retried blind would be stored twice (spec: Append envelope). */
export function noAnswerText(who: string, reason: string, method: string, delivered = true): string {
  if (!delivered || SAFE_METHODS.has(method)) return `${who} did not answer (${reason}); retry`;
  return `${who} did not answer (${reason}): the request may have been carried out; for an append, read the tail or append with match_seq_num before retrying`;
}

/** The hop never reached the leader: its address refused the connection, so the request was not
 *  delivered and may be handled here instead (a refused connection is the one failure that proves
 *  nothing was sent; a reset or a timeout may have delivered an append, and stays a 503). */
export class LeaderUnreachable extends ServiceError {
  constructor(readonly starId: string, address: string, reason: string) {
    super('unavailable', noAnswerText(`the stream's leader at ${address}`, reason, 'GET', false));
  }
}

/**
 * One hop to a stream's leader (`hop` resolves with the status it relayed). When the leader's address
 * refused the connection nothing was delivered: that star is down (or came back elsewhere), so `here`
 * handles the request on this star as the stream's home, its lease waited out; `here` answers
 * undefined when it should not (the caller went away). Anything else that failed is thrown. Shared by
 * the data plane (dispatch.ts) and Durable Streams (ds/surface.ts).
 */
export async function hopOrHere<T>(hop: () => Promise<number>, here: () => Promise<T> | undefined): Promise<{ relayed: number } | { here: T }> {
  try {
    return { relayed: await hop() };
  } catch (err) {
    if (!(err instanceof LeaderUnreachable)) throw err;
    const running = asHop(here, { unreachable: err.starId });
    if (running === undefined) throw err;
    return { here: await running };
  }
}

/** Which headers a hop carries: the request headers its routes read (hop-by-hop ones never travel),
 *  and the answer headers relayed back (lower case). */
export interface HopHeaders { request: readonly string[]; response: ReadonlySet<string> }

/** The data plane's routes. */
const DATA_PLANE_HEADERS: HopHeaders = {
  request: ['authorization', 'content-type', 'accept', 'last-event-id', 'range', 'origin'],
  response: new Set(['content-type', 'retry-after', 'allow', 'cache-control', 'content-range', 'accept-ranges', 'etag', 'x-accel-buffering']),
};
/** The largest non-streaming answer relayed (a full read page of base64 bodies, with room). */
const PROXY_ANSWER_BYTES_MAX = 64 * 1024 * 1024;

/** How one hop goes: headers the asking star adds to the answer (its CORS), which headers travel,
 *  how long the leader may take to begin answering, and whether the answer is a live read (an event
 *  stream or a long-poll), which holds its socket for as long as the caller stays. */
export interface HopOptions {
  answerHeaders?: [string, string][];
  carried?: HopHeaders;
  headMsMax?: number;
  live?: boolean;
}

/** How a hop reaches a bridge that serves TLS (every star's does when one does: one mode for every
 *  caller). `ca`: what the leader's certificate must chain to (absent: the system's roots and
 *  NODE_EXTRA_CA_CERTS); `cert` and `key`: the star's own, presented under mtls. */
export interface HopTls { ca?: Buffer; cert?: Buffer; key?: Buffer }

export class LeaderProxy {
  /** Per leader: pooled sockets for requests that answer at once, and apart from them the sockets of
   *  live reads, so thousands of relayed event streams never queue an append behind them (bounded by
   *  the star's own SSE connection cap). */
  private readonly agents = new Map<string, http.Agent>();
  private readonly liveAgents = new Map<string, http.Agent>();
  /** Hops sent, and hops whose leader did not answer (metrics). */
  hops = 0;
  failures = 0;

  /** `leaderGone(starId)`: the membership saw that star's heartbeat go stale (it is frozen, cut off
   *  or dead); a hop open to it is then given up on. `tls`: the bridges serve TLS. */
  constructor(
    private readonly starId: string,
    private readonly leaderGone: (starId: string) => boolean = () => false,
    private readonly tls?: HopTls,
    /** A relayed event stream's stalled-consumer bound (--sse-stall-ms). */
    private readonly sseStallMs: number = SSE_STALL_MS,
  ) {}

  private agentFor(address: string, live: boolean): http.Agent {
    const agents = live ? this.liveAgents : this.agents;
    let a = agents.get(address);
    if (!a) {
      const options = { keepAlive: true, maxSockets: live ? SSE_CONNECTIONS_PER_HOST_MAX : PROXY_SOCKETS_PER_PEER_MAX };
      a = this.tls ? new https.Agent({ ...options, ...this.tls }) : new http.Agent(options);
      agents.set(address, a);
    }
    return a;
  }

  /** Sends the request to the leader's bridge (host:port) and relays the answer; resolves with the
   *  status relayed. A leader that refuses the connection rejects with LeaderUnreachable; one that
   *  does not answer otherwise is a 503 (retry: the lease will move to a live star). */
  forward(ex: HttpExchange, body: Buffer, leader: { star_id: string; bridge_address: string }, opts: HopOptions = {}): Promise<number> {
    const { answerHeaders: extraHeaders = [], carried = DATA_PLANE_HEADERS, headMsMax = PROXY_HEAD_MS_MAX, live = false } = opts;
    const address = leader.bridge_address;
    const hostPort = splitAddress(address);
    // A leader with no data bridge (`--listen ''`), or one whose address is not host:port, cannot be
    // hopped to: nothing is sent anywhere (a connect to port 0 or 80 of some host would carry the
    // caller's credential to whatever listens there). Its lease is held, so this is a 503 to retry.
    if (hostPort === undefined) {
      return Promise.reject(new ServiceError('unavailable', `the stream's leader ${leader.star_id} serves no data bridge to hop to (${JSON.stringify(address)}); retry`));
    }
    const [host, port] = hostPort;
    const headers: Record<string, string> = { [HOP_HEADER]: this.starId };
    for (const h of carried.request) {
      const v = ex.header(h);
      if (v !== undefined) headers[h] = v;
    }
    if (body.length > 0) headers['content-length'] = String(body.length);
    this.hops += 1;
    return new Promise<number>((resolve, reject) => {
      const req = (this.tls ? https : http).request({
        host, port, method: ex.method, path: ex.query ? `${ex.path}?${ex.query}` : ex.path, headers, agent: this.agentFor(address, live),
        timeout: headMsMax,
      });
      let answered = false;
      // A leader that stops heartbeating will not answer: the hop ends (503 before the answer began,
      // a relayed event stream simply ends) and the caller retries on the stream's next leader.
      const watch = setInterval(() => {
        if (this.leaderGone(leader.star_id)) req.destroy(new Error(`star ${leader.star_id} stopped heartbeating`));
      }, PROXY_LEADER_CHECK_MS);
      req.on('close', () => clearInterval(watch));
      req.on('timeout', () => req.destroy(new Error(`waited ${headMsMax / 1000} s`)));
      req.on('error', (err) => {
        if (!answered) this.failures += 1;
        if (answered) return;
        const refused = (err as NodeJS.ErrnoException).code === 'ECONNREFUSED';
        reject(refused ? new LeaderUnreachable(leader.star_id, address, err.message)
          : new ServiceError('unavailable', noAnswerText(`the stream's leader at ${address}`, err.message, ex.method)));
      });
      req.on('response', (res) => {
        answered = true;
        req.setTimeout(0); // an event stream stays open as long as the caller does
        const out: [string, string][] = [...extraHeaders];
        for (const [k, v] of Object.entries(res.headers)) {
          if (carried.response.has(k) && typeof v === 'string') out.push([k, v]);
        }
        const status = res.statusCode ?? 502;
        if ((res.headers['content-type'] ?? '').startsWith('text/event-stream') && status === 200) {
          relayStream(ex, res, out, req, this.sseStallMs);
          resolve(status);
          return;
        }
        const chunks: Buffer[] = [];
        let bytes = 0;
        res.on('data', (c: Buffer) => {
          bytes += c.length;
          if (bytes > PROXY_ANSWER_BYTES_MAX) { req.destroy(); return; }
          chunks.push(c);
        });
        res.on('error', () => undefined);
        res.on('close', () => {
          if (ex.aborted) { resolve(status); return; }
          if (!res.complete) {
            ex.respond(503, [['Content-Type', 'application/json'], ['Retry-After', '1']], JSON.stringify({ error: 'the stream\'s leader went away mid-answer; retry' }));
            resolve(503);
            return;
          }
          // A relayed HEAD has no body in hand: its Content-Length is the leader's (the GET's).
          const length = ex.method === 'HEAD' ? Number(res.headers['content-length']) : NaN;
          ex.respond(status, out, Buffer.concat(chunks, bytes), Number.isSafeInteger(length) && length >= 0 ? length : undefined);
          resolve(status);
        });
      });
      if (ex.aborted) req.destroy();
      req.end(body);
    });
  }

  close(): void {
    for (const a of [...this.agents.values(), ...this.liveAgents.values()]) a.destroy();
    this.agents.clear();
    this.liveAgents.clear();
  }
}

/** An event stream relayed with backpressure: the leader's socket pauses while the caller's is full,
 *  and a caller that has not drained for `stallMs` is cut off here, as the leader's own pump would
 *  (the leader may not see the stall: the relay's buffers take a quiet stream's frames for long). */
function relayStream(ex: HttpExchange, res: http.IncomingMessage, headers: [string, string][], req: http.ClientRequest, stallMs: number): void {
  const sink = ex.startStream(headers);
  let drainWait: (() => void) | undefined;
  // A stall cut (awaitDrain drops the caller's connection) closes the sink too: the leader's request goes with it.
  sink.onClose(() => { drainWait?.(); req.destroy(); });
  // The local sink opened with its own comment; the leader's, first on its stream, is not repeated.
  let opening = true;
  res.on('data', (data: Buffer) => {
    let chunk = data;
    if (opening) {
      opening = false;
      if (chunk.subarray(0, STREAM_OPENING.length).equals(STREAM_OPENING)) chunk = chunk.subarray(STREAM_OPENING.length);
      if (chunk.length === 0) return;
    }
    if (sink.closed) return;
    if (!sink.write(chunk) && drainWait === undefined) {
      res.pause();
      drainWait = awaitDrain(sink, stallMs, () => {
        drainWait = undefined;
        res.resume();
      });
    }
  });
  res.on('error', () => undefined);
  // On the leader's shutdown the stream simply ends (spec: the caller reconnects with its cursor).
  res.on('close', () => { if (!sink.closed) sink.end(); });
}

const STREAM_OPENING = Buffer.from(SSE_OPENING);

/** host:port (an IPv6 host in brackets) as its parts; undefined unless both are there and the port
 *  is 1-65535. */
function splitAddress(address: string): [string, number] | undefined {
  const i = address.lastIndexOf(':');
  if (i <= 0) return undefined;
  const host = address.slice(0, i).replace(/^\[|\]$/g, '');
  const port = Number(address.slice(i + 1));
  return host !== '' && Number.isInteger(port) && port > 0 && port <= 65535 ? [host, port] : undefined;
}
