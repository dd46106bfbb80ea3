// What an HTTP transport adapter gives the dispatcher for one request. The uWS adapter (api/uws.ts)
// and the node:http adapter (native-free/) each implement it; everything above is shared.

import { STATUS_CODES } from 'node:http';

/** Writes one cohort round's frames to one socket in one send (sse-cohort.ts), given only the socket:
 *  at 16,384 subscribers each object a delivery touches is a likely cache miss, and reading the pump
 *  and its sink cost about a tenth of a delivery's CPU. Returns the number of frames written (a write
 *  that filled the socket counts: the engine keeps it whole), negated when the socket is full after
 *  them; 0 when the socket could not be written at all. Anything but `frames.length` is taken as a
 *  full socket: the member leaves the cohort with its cursor after the frames written. */
export type RoundWrite = (out: object, frames: readonly Buffer[]) => number;

/** A sink's socket and its engine's RoundWrite, for a cohort to write rounds to directly. */
export interface SseRound {
  readonly out: object;
  readonly write: RoundWrite;
}

export interface SseSink {
  /** Set where the engine can write a round without the sink (uWS); absent on node:http, whose
   *  members are written through cork() and write() as before. */
  readonly round?: SseRound;
  /** A write made outside the sink (a round through `round`) found the socket full: the sink does
   *  what its own write would have (uWS re-arms its idle timer while the consumer pauses). */
  filled?(): void;
  /** Writes a chunk; false when the socket is backpressured (wait for onWritable). */
  write(chunk: string | Buffer): boolean;
  /** Runs `fn` with the socket corked: the writes inside leave in one send. */
  cork(fn: () => void): void;
  onWritable(cb: () => void): void;
  onClose(cb: () => void): void;
  end(): void;
  /** Drops the connection at once (a stalled consumer: its buffered bytes are abandoned); `closed` is
   *  true from then on, and the onClose callbacks run (at once on uWS, a tick later on node:http). */
  destroy(): void;
  readonly closed: boolean;
}

export interface HttpExchange {
  readonly method: string;
  /** Raw path, still percent-encoded, without the query. */
  readonly path: string;
  /** Raw query string without '?'. */
  readonly query: string;
  header(name: string): string | undefined;
  /** Reads the body, refusing (400) as soon as it passes `maxBytes`. A body already in hand comes
   *  back synchronously (no promise hop on the hot path). */
  readBody(maxBytes: number): Buffer | Promise<Buffer>;
  /** `headLength`: for a HEAD whose GET body is not in hand (a relayed HEAD), the length that GET
   *  carries, sent as the Content-Length (RFC 9110 8.6); otherwise the body's own length is. */
  respond(status: number, headers: [string, string][], body: string | Buffer, headLength?: number): void;
  /** Sends 200 with the given headers and keeps the response open. */
  startStream(headers: [string, string][]): SseSink;
  /** mtls: the transport verified the client's certificate against --tls-client-ca. */
  readonly clientCertVerified: boolean;
  /** True once the client went away. */
  readonly aborted: boolean;
  /** performance.now() when the request's head arrived, when the adapter dispatches later than that
   *  (uWS waits for a small body first); request latency is measured from it. */
  readonly startedAt?: number;
}

/**
 * The stalled-consumer cut, one mechanism for every event stream a star serves (the SSE pump, a
 * stream relayed from its leader, the Durable Streams reader). Called when a write found `sink` full,
 * it settles once: `onDrained` runs when the sink drains (or closes: then `sink.closed` is true), or,
 * if `stallMs` pass first, the connection is dropped (destroy: its buffered bytes are abandoned) and
 * `onCut` runs. The sink's onClose callbacks also run for a cut, on uWS before `onCut`, on node:http a
 * tick after it. Returns a cancel, for a stream that ends while it waits; neither callback runs after it.
 */
export function awaitDrain(sink: SseSink, stallMs: number, onDrained: () => void, onCut?: () => void): () => void {
  let settled = false;
  const cut = setTimeout(() => {
    settled = true;
    sink.destroy();
    onCut?.();
  }, stallMs);
  sink.onWritable(() => {
    if (settled) return;
    settled = true;
    clearTimeout(cut);
    onDrained();
  });
  return () => {
    settled = true;
    clearTimeout(cut);
  };
}

/** RFC 9112 3.2: a request with more than one Host field line is refused 400 on both engines (node:http
 *  and uWS keep the first, and a proxy in front may have routed by another). */
export const HOST_REPEATED = 'Host is given more than once (RFC 9112 3.2)';

/** What every event stream a star serves begins with: a comment, so the caller sees it open. */
export const SSE_OPENING = ': open\n\n';

/** Reason phrases for status lines: node:http's table, which has one for every status we answer. */
export const STATUS_TEXT: Readonly<Record<number, string | undefined>> = STATUS_CODES;
