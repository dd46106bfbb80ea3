// Admission on the gRPC port: who may make the server buffer how much, decided before a request
// message is read (issue 18: twelve 120 MiB Append messages without a token took a star from 188 MB
// to 3.1 GB before each was told UNAUTHENTICATED).
//
// grpc-js reads a call's messages only once its handler asks: until then the HTTP/2 stream stays
// paused and flow control holds the sender to one window. This interceptor holds that first read
// back until the caller is known, then meters every message by the length its 5-byte head declares:
//   1. every verb but ExchangeToken, health and reflection authenticates its caller from the call's
//      head (the same hook the handlers use): an anonymous or badly credentialed caller is answered
//      UNAUTHENTICATED having been buffered no more than its head and one flow-control window;
//   2. the standard health and reflection services (health.ts) are open: held, like the exchange,
//      to control-sized messages and the per-address budget;
//   3. ExchangeToken (authenticated by the secret in its message) is refused while its client
//      address has spent its failed asks (the exchange's per-address throttle), and its messages are
//      held to GRPC_CONTROL_MESSAGE_BYTES_MAX and a small per-address budget;
//   4. a message is charged its declared length to the star's budget and its tenant's (the token's
//      sub) when its head arrives, before its body is buffered; over either budget it is refused
//      with RESOURCE_EXHAUSTED (the spec's 429 code: retry later), and over its verb's size limit
//      with INVALID_ARGUMENT (the spec's 400 for a batch over a cap: no retry can pass), never read;
//   5. a compressed message (gzip or deflate, as grpc-go, grpc-java and connect send with
//      compression on) is charged its compressed length at its head, then every inflated chunk as
//      it comes out, and is refused the moment it passes its verb's limit or a budget: a small
//      message that inflates a thousandfold never holds more than the budgets allow;
//   6. the charge comes back when the call ends, or, in an AppendSession, when the batch is acked.

import { constants as http2Constants, type ServerHttp2Stream } from 'node:http2';
import { createGunzip, createInflate } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import {
  GRPC_APPEND_MESSAGE_BYTES_MAX, GRPC_CONTROL_MESSAGE_BYTES_MAX, GRPC_REQUEST_BYTES_IN_FLIGHT_MAX,
  GRPC_REQUEST_BYTES_IN_FLIGHT_PER_TENANT_MAX, GRPC_UNAUTHENTICATED_BYTES_IN_FLIGHT_PER_ADDRESS_MAX,
} from '../../config/limits.ts';
import { ServiceError } from '../../core/errors.ts';
import { bearerSubject, type FailureThrottle } from '../../auth/index.ts';
import type { GrpcContext } from './context.ts';
import { OPEN_GRPC_PATHS } from './health.ts';
import { toGrpcFailure } from './status-mapping.ts';

/** The one verb whose caller is not authenticated from the call's head. */
export const EXCHANGE_TOKEN_PATH = '/svc.v1.DataService/ExchangeToken';
/** The peer verb: only stars call it (drain), so each call is logged with its outcome (a refused peer
 *  is a misconfigured cluster, and the operator needs to see it on the refusing star). */
export const SETTLE_STAR_PATH = '/svc.v1.DataService/SettleStar';
/** Verbs whose messages carry a whole append batch; every other verb's are control-sized. */
const APPEND_PATHS: ReadonlySet<string> = new Set(['/svc.v1.DataService/Append', '/svc.v1.DataService/AppendSession']);
/** Streaming verbs whose n-th response acks the n-th message after the first `leading` ones (which
 *  are released once handed to the handler): their bytes are in flight only until acked. */
const ACKED_STREAMS: ReadonlyMap<string, { leading: number }> = new Map([['/svc.v1.DataService/AppendSession', { leading: 1 }]]);
/** gRPC's message head: a compressed flag and a 4-byte big-endian length. */
const MESSAGE_HEAD_BYTES = 5;
/** How many interceptors deep grpc-js's base call may sit (credentials may add their own). */
const CALL_CHAIN_DEPTH_MAX = 16;

/** Whose bytes a message is charged to, besides the star's. */
export interface Tenant {
  key: string;
  bytesMax: number;
  /** Named in refusals. */
  what: string;
}

const exhausted = (why: string): ServiceError => new ServiceError('resource_exhausted', why);

/** Request bytes in flight for the whole star and per tenant. Tenants holding nothing are not kept,
 *  so the map is bounded by the calls in flight. */
export class RequestBytesBudget {
  private total = 0;
  private readonly held = new Map<string, number>();

  constructor(readonly starBytesMax: number = GRPC_REQUEST_BYTES_IN_FLIGHT_MAX) {}

  /** Charges `bytes`, or throws ResourceExhausted naming the budget it would pass (nothing charged). */
  charge(tenant: Tenant | undefined, bytes: number): void {
    const mine = tenant === undefined ? 0 : this.held.get(tenant.key) ?? 0;
    if (tenant !== undefined && mine + bytes > tenant.bytesMax) {
      throw exhausted(`${tenant.what} has ${mine} request bytes in flight; a ${bytes}-byte message would pass its ${tenant.bytesMax}; retry shortly`);
    }
    if (this.total + bytes > this.starBytesMax) throw exhausted('too many request bytes in flight on this star; retry shortly');
    this.total += bytes;
    if (tenant !== undefined) this.held.set(tenant.key, mine + bytes);
  }

  release(tenant: Tenant | undefined, bytes: number): void {
    this.total -= bytes;
    if (tenant === undefined) return;
    const left = (this.held.get(tenant.key) ?? 0) - bytes;
    if (left > 0) this.held.set(tenant.key, left);
    else this.held.delete(tenant.key);
  }

  get bytesInFlight(): number { return this.total; }
  get tenantsInFlight(): number { return this.held.size; }
}

/** grpc-js's raw message decoder (the base call's private `decoder`): framed bytes in, whole framed
 *  messages out. It throws to refuse, which grpc-js answers with RESOURCE_EXHAUSTED; a refusal with
 *  another code is sent through the base call's sendStatus, and the decoder then takes nothing more. */
interface RawDecoder {
  write(data: Buffer): Buffer[];
}

/** grpc-js's message inflater (the base call's private `decompressMessage`): a framed message in, its
 *  payload out; a rejection is a status grpc-js sends. */
type Decompress = (message: Buffer, encoding: string) => Buffer | Promise<Buffer>;

/** What grpc-js sends when a decompression is refused. */
interface DecompressRefusal { code: grpc.status; details: string }

/** One message's charge against the budgets: grows while a compressed message inflates. */
interface Charge { bytes: number }

/** Inflates a gzip or deflate payload, metering each chunk (`meter` throws to refuse) and refusing
 *  past `limitBytes`: never more than that is held. `abort` stops it (the call ended). */
function inflateMetered(
  payload: Buffer, encoding: 'gzip' | 'deflate', limitBytes: number, what: string, meter: (bytes: number) => void,
): { result: Promise<Buffer>; abort(): void } {
  let abort: () => void = () => undefined;
  const result = new Promise<Buffer>((resolve, reject) => {
    const z = encoding === 'gzip' ? createGunzip() : createInflate();
    const parts: Buffer[] = [];
    let total = 0;
    let done = false;
    const refuse = (r: DecompressRefusal): void => {
      if (done) return;
      done = true;
      z.destroy();
      reject(r);
    };
    z.on('error', () => refuse({ code: grpc.status.INVALID_ARGUMENT, details: `a ${encoding} message that does not decompress` }));
    z.on('data', (chunk: Buffer) => {
      if (done) return;
      total += chunk.length;
      if (total > limitBytes) {
        refuse({ code: grpc.status.INVALID_ARGUMENT, details: `a message that decompresses past the ${limitBytes}-byte limit of ${what}` });
        return;
      }
      try {
        meter(chunk.length);
      } catch (err) {
        refuse({ code: grpc.status.RESOURCE_EXHAUSTED, details: err instanceof Error ? err.message : String(err) });
        return;
      }
      parts.push(chunk);
    });
    z.on('end', () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(parts, total));
    });
    abort = () => refuse({ code: grpc.status.CANCELLED, details: 'the call ended' });
    z.end(payload);
  });
  return { result, abort: () => abort() };
}

/**
 * A request message that is not valid protobuf is INVALID_ARGUMENT (the spec's malformed request),
 * where grpc-js answers INTERNAL (a server bug, to a client). The call's base gets its own copy of
 * the method's handler whose decoder, on failure, ends the call with INVALID_ARGUMENT first; grpc-js
 * then catches the rethrown error and sends its INTERNAL, which the base drops, the call having
 * ended. Private grpc-js shape, as the decoder above; without it grpc-js's answer stands.
 */
function refuseUndecodable(holder: DecoderHolder, path: string): void {
  const registered = holder.handler;
  const deserialize = registered?.deserialize;
  if (registered === undefined || deserialize === undefined) return;
  const sendStatus = holder.sendStatus.bind(holder);
  let refused = false;
  holder.handler = {
    ...registered,
    deserialize(bytes: Buffer): unknown {
      try {
        return deserialize(bytes);
      } catch (err) {
        if (!refused) {
          refused = true;
          sendStatus({ code: grpc.status.INVALID_ARGUMENT, details: `a request message of ${path} is not valid protobuf: ${(err as Error).message}` });
        }
        throw err;
      }
    },
  };
  holder.sendStatus = (status) => { if (!refused) sendStatus(status); };
}

function isRawDecoder(v: unknown): v is RawDecoder {
  return typeof v === 'object' && v !== null && typeof (v as { write?: unknown }).write === 'function';
}

/**
 * The object holding grpc-js's decoder, found by walking the interceptor chain down to the base
 * call. This is grpc-js's private shape (1.14: BaseServerInterceptingCall.decoder, reached through
 * ServerInterceptingCall.nextCall); no public hook sees a message's head before its body is
 * buffered. test/grpc/admission.test.ts fails if a grpc-js upgrade moves it.
 */
interface DecoderHolder {
  decoder: RawDecoder;
  decompressMessage?: Decompress;
  sendStatus(status: { code: grpc.status; details: string }): void;
  /** The method's registration (shared by its calls): its request decoder. */
  handler?: { deserialize?: (bytes: Buffer) => unknown };
  /** The call's HTTP/2 stream, and whether its response headers went out before the status. */
  stream?: ServerHttp2Stream;
  metadataSent?: boolean;
}

/**
 * When the call's whole answer is its status (a trailers-only response: a message refused at its
 * head over a budget or the size limit, a caller refused) while the client is still sending, resets
 * the HTTP/2 stream with NO_ERROR after it, as RFC 9113 8.1 lets a server that has answered in full
 * (grpc-go's server does the same): the client stops sending. Without it grpc-js read each refused
 * 100 MiB Append to its end and dropped it (a tenant's eleven refused full batches were 1.2 GB off
 * the socket and 900 MiB of peak RSS; with the reset, about nothing and 600 MiB). The trailers-only
 * answer is queued ahead of the reset when sendStatus returns. After response headers (a session
 * that had acks, ended by a fence, a match_seq_num miss or a batch over a limit) grpc-js queues the
 * trailers later, from the stream's 'wantTrailers' event, and a reset sent before them lost the
 * status (clients saw INTERNAL); so the reset waits for that event, then for the turn after it:
 * Node 20's sendTrailers, which grpc-js's listener (registered first, in sendStatus) calls, submits
 * the trailers from a setImmediate of its own, and a reset from inside the event went out before
 * them (tried: the status never arrived). Ours, queued after Node's, goes out behind the trailers,
 * and Node's RST_STREAM sends what is pending first. Without the reset such a stream stayed open
 * on the star until the connection closed whenever the client only dropped its side (grpc-go takes
 * the status and sends neither END_STREAM nor RST_STREAM). A client on node:http2 that waits for the
 * stream's 'close' while its own writes are still queued may not get it after such a reset (Node
 * destroys a reset stream only once its writes finished); gRPC clients take the status from the
 * trailers.
 */
function stopSendingAfterStatus(holder: DecoderHolder): void {
  const sendStatus = holder.sendStatus.bind(holder);
  holder.sendStatus = (status) => {
    const stream = holder.stream;
    const trailersOnly = holder.metadataSent === false;
    sendStatus(status);
    if (stream === undefined || !stillSending(stream)) return;
    if (trailersOnly) stream.close(http2Constants.NGHTTP2_NO_ERROR);
    else stream.once('wantTrailers', () => setImmediate(() => { if (stillSending(stream)) stream.close(http2Constants.NGHTTP2_NO_ERROR); }));
  };
}

/** The stream is open and its client has not ended its side (remoteClose: the client's END_STREAM
 *  arrived; readableEnded stays false on a stream grpc-js paused). */
function stillSending(stream: ServerHttp2Stream): boolean {
  return !stream.destroyed && !stream.closed && stream.state.remoteClose !== 1;
}

function decoderHolder(call: grpc.ServerInterceptingCallInterface): DecoderHolder | undefined {
  let c: unknown = call;
  for (let depth = 0; depth < CALL_CHAIN_DEPTH_MAX && typeof c === 'object' && c !== null; depth++) {
    if (isRawDecoder((c as { decoder?: unknown }).decoder) && typeof (c as { sendStatus?: unknown }).sendStatus === 'function') return c as DecoderHolder;
    c = (c as { nextCall?: unknown }).nextCall;
  }
  return undefined;
}

/** Follows message boundaries in the raw bytes and reports each head: (compressed, body length). */
class MessageHeads {
  private readonly head = Buffer.alloc(MESSAGE_HEAD_BYTES);
  private headHave = 0;
  private bodyLeft = 0;

  constructor(private readonly onHead: (compressed: boolean, length: number) => void) {}

  scan(data: Buffer): void {
    let i = 0;
    while (i < data.length) {
      if (this.bodyLeft > 0) {
        const n = Math.min(this.bodyLeft, data.length - i);
        this.bodyLeft -= n;
        i += n;
        continue;
      }
      const n = Math.min(MESSAGE_HEAD_BYTES - this.headHave, data.length - i);
      data.copy(this.head, this.headHave, i, i + n);
      this.headHave += n;
      i += n;
      if (this.headHave === MESSAGE_HEAD_BYTES) {
        this.headHave = 0;
        const length = this.head.readUInt32BE(1);
        this.onHead(this.head[0] === 1, length);
        this.bodyLeft = length;
      }
    }
  }
}

export interface AdmissionOptions {
  budget: RequestBytesBudget;
  /** Failed exchanges per client address (the exchange's own throttle counts per key id). */
  exchangeThrottle: FailureThrottle;
  /** Called once if grpc-js's decoder cannot be found (messages are then limited only by size). */
  logBug(msg: string): void;
  /** One line per SettleStar call: who asked and what it was answered. */
  logPeerCall(line: string): void;
}

/** The interceptor; one per server. */
export function admissionInterceptor(ctx: GrpcContext, o: AdmissionOptions): grpc.ServerInterceptor {
  let bugLogged = false;
  return (method: { path: string }, call: grpc.ServerInterceptingCallInterface): grpc.ServerInterceptingCall => {
    const path = method.path;
    const isExchange = path === EXCHANGE_TOKEN_PATH;
    const isOpen = OPEN_GRPC_PATHS.has(path);
    const isPeerVerb = path === SETTLE_STAR_PATH;
    const messageMax = APPEND_PATHS.has(path) ? GRPC_APPEND_MESSAGE_BYTES_MAX : GRPC_CONTROL_MESSAGE_BYTES_MAX;
    const acked = ACKED_STREAMS.get(path);
    const address = call.getConnectionInfo().remoteAddress ?? 'unknown';
    let tenant: Tenant | undefined;
    /** The authenticated caller's sub (jwt), for the peer verb's log line. */
    let callerSub: string | undefined;
    let ended = false;
    let delivered = 0;
    /** Charges not yet returned, oldest first. */
    const charges: Charge[] = [];
    /** Compressed messages whose head arrived and which grpc-js has not yet begun to inflate, in
     *  order (it inflates them in the order they arrive). */
    const toInflate: Charge[] = [];

    const releaseOldest = (): void => {
      const c = charges.shift();
      if (c !== undefined) o.budget.release(tenant, c.bytes);
    };
    /** Inflaters running for this call: stopped when it ends, since their output is no longer charged. */
    const inflating = new Set<() => void>();
    const end = (): void => {
      if (ended) return;
      ended = true;
      for (const c of charges.splice(0)) o.budget.release(tenant, c.bytes);
      toInflate.length = 0;
      for (const abort of inflating) abort();
      inflating.clear();
    };

    const holder = decoderHolder(call);
    if (holder === undefined) {
      if (!bugLogged) o.logBug('grpc: admission cannot meter request messages: grpc-js has no decoder where expected (bug)');
      bugLogged = true;
    } else {
      const inner = holder.decoder;
      const innerDecompress = holder.decompressMessage?.bind(holder);
      if (innerDecompress === undefined && !bugLogged) {
        o.logBug('grpc: admission cannot meter compressed request messages: grpc-js has no decompressMessage where expected (bug)');
        bugLogged = true;
      }
      /** A message over the verb's size limit: the call is answered INVALID_ARGUMENT, and no more
       *  of its bytes are taken in. */
      let oversize: string | undefined;
      const heads = new MessageHeads((compressed, length) => {
        if (ended || oversize !== undefined) return;
        if (length > messageMax) {
          oversize = `a ${length}-byte message is over the ${messageMax}-byte limit of ${path}`;
          return;
        }
        // Without the metered inflater, a compressed message is charged all it may inflate to.
        const c: Charge = { bytes: compressed && innerDecompress === undefined ? messageMax + MESSAGE_HEAD_BYTES : length + MESSAGE_HEAD_BYTES };
        o.budget.charge(tenant, c.bytes);
        charges.push(c);
        if (compressed && innerDecompress !== undefined) toInflate.push(c);
      });
      if (innerDecompress !== undefined) {
        holder.decompressMessage = (message: Buffer, encoding: string): Buffer | Promise<Buffer> => {
          if (encoding !== 'gzip' && encoding !== 'deflate') return innerDecompress(message, encoding); // identity; or UNIMPLEMENTED
          const c = toInflate.shift();
          if (ended || c === undefined) return Promise.reject({ code: grpc.status.CANCELLED, details: 'the call ended' });
          // Once the call ends, end() aborts the inflater, so nothing is metered after its charges are returned.
          const run = inflateMetered(message.subarray(MESSAGE_HEAD_BYTES), encoding, messageMax, path, (bytes: number) => {
            o.budget.charge(tenant, bytes);
            c.bytes += bytes;
          });
          inflating.add(run.abort);
          const forget = (): void => { inflating.delete(run.abort); };
          run.result.then(forget, forget);
          return run.result;
        };
      }
      const base = holder;
      // First: the undecodable refusal sends through it.
      stopSendingAfterStatus(holder);
      refuseUndecodable(holder, path);
      holder.decoder = {
        write(data: Buffer): Buffer[] {
          if (oversize !== undefined) return [];
          heads.scan(data);
          if (oversize !== undefined) {
            base.sendStatus({ code: grpc.status.INVALID_ARGUMENT, details: oversize });
            end();
            return [];
          }
          return inner.write(data);
        },
      };
    }

    /** Who the caller is, decided from the head alone; throws to refuse the call. */
    const admit = async (metadata: grpc.Metadata): Promise<void> => {
      if (isExchange || isOpen) {
        // The exchange (refused while its address has spent its failed asks), health and reflection
        // (they tell nothing about any stream): no credential asked, the per-address budget.
        if (isExchange) o.exchangeThrottle.check(address);
        tenant = { key: `address ${address}`, bytesMax: GRPC_UNAUTHENTICATED_BYTES_IN_FLIGHT_PER_ADDRESS_MAX, what: `client address ${address}` };
        return;
      }
      if (!ctx.auth?.authenticate) return; // --auth off: every caller is trusted, the star's budget only
      await ctx.auth.authenticate(metadata);
      const authorization = metadata.get('authorization').map(String);
      const sub = bearerSubject(authorization);
      callerSub = sub;
      // Trusted modes (mtls, basic) carry no bearer: the star's budget only. A token without a sub
      // shares one tenant with every other such token.
      if (sub !== undefined) tenant = { key: `sub ${sub}`, bytesMax: GRPC_REQUEST_BYTES_IN_FLIGHT_PER_TENANT_MAX, what: `tenant '${sub}'` };
    };

    const intercepting: grpc.ServerInterceptingCall = new grpc.ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(metadata, proceed) {
            admit(metadata).then(
              () => { if (!ended) proceed(metadata); },
              (err: unknown) => { if (!ended) intercepting.sendStatus(toGrpcFailure(err)); },
            );
          },
          onReceiveMessage(message, proceed) {
            if (acked !== undefined && delivered < acked.leading) releaseOldest();
            delivered += 1;
            proceed(message);
          },
          onCancel() {
            end();
          },
        });
      },
      sendMessage(message, next) {
        if (acked !== undefined) releaseOldest();
        next(message);
      },
      sendStatus(status, next) {
        if (isExchange && status.code === grpc.status.UNAUTHENTICATED) o.exchangeThrottle.failed(address);
        if (isPeerVerb) {
          const who = `${address}${callerSub !== undefined ? ` (sub ${callerSub})` : ''}`;
          const code = grpc.status[status.code] ?? String(status.code);
          // Quoted: a refusal's reason may echo what the caller sent, which must not forge log lines.
          const reason = JSON.stringify(status.details);
          const refused = status.code === grpc.status.UNAUTHENTICATED || status.code === grpc.status.PERMISSION_DENIED;
          o.logPeerCall(refused
            ? `svcd: grpc: refused SettleStar from ${who}: ${code}: ${reason}`
            : `svcd: grpc: SettleStar from ${who}: ${code}${status.code === grpc.status.OK ? '' : `: ${reason}`}`);
        }
        end();
        next(status);
      },
    });
    return intercepting;
  };
}
