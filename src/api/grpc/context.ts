// What every handler shares: the service, the hooks, the star's identity, the registry of long-lived
// calls (so shutdown can end them), and the wrapper that turns a handler's result or throw into a
// grpc-js callback.

import type { AuditView, ClusterView } from './admin-reads.ts';
import * as grpc from '@grpc/grpc-js';
import { APPEND_SESSIONS_PER_STAR_MAX } from '../../config/limits.ts';
import type { Clock, Timers } from '../../core/ports.ts';
import { ServiceError } from '../../core/errors.ts';
import type { StreamService } from '../../core/service-api.ts';
import type { EncodedBatch } from '../../core/types.ts';
import type { AppendRecord__Output } from '../../gen/svc/v1/AppendRecord.ts';
import type { RecordInput } from '../../protocol/records.ts';
import { atWallClock } from '../../core/wall-timer.ts';
import { offThreadBytes, wholeRecords, type GrpcAppendMessage } from './append-decode.ts';
import { recordsFromWire } from './convert.ts';
import type { GrpcAuthHooks, GrpcAuthRequest, GrpcCaller, ReadPlanVending } from './hooks.ts';
import { grpcFailure, toGrpcFailure } from './status-mapping.ts';

export interface StarIdentity {
  id: string;
  /** Resolved once the server is bound. */
  address: string;
  startedAtMs: number;
  nowMs(): number;
  settle?(): Promise<void>;
}

/** Long-lived calls (subscriptions, producer sessions) register here so close() can end them. */
export class LiveCalls {
  private readonly enders = new Set<() => void>();
  private closing = false;
  /** Producer sessions open now. */
  private sessions = 0;

  constructor(private readonly sessionsMax: number = APPEND_SESSIONS_PER_STAR_MAX) {}

  /** Counts one more open producer session: undefined at sessionsMax, else the function that gives the
   *  slot back (once, however often it is called). */
  takeSessionSlot(): (() => void) | undefined {
    if (this.sessions >= this.sessionsMax) return undefined;
    this.sessions += 1;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.sessions -= 1;
    };
  }

  get isClosing(): boolean { return this.closing; }

  /** Registers `end`, called once at shutdown; the returned function unregisters it. */
  add(end: () => void): () => void {
    if (this.closing) {
      queueMicrotask(end); // never re-enter the caller before it holds its unregister function
      return () => {};
    }
    this.enders.add(end);
    return () => { this.enders.delete(end); };
  }

  endAll(): void {
    this.closing = true;
    for (const end of [...this.enders]) end();
    this.enders.clear();
  }
}

export interface GrpcContext {
  service: StreamService;
  /** The ports producer sessions run on (core/producer-session.ts): linger, pacing. */
  clock: Clock;
  timers: Timers;
  /** A cluster's membership and leases for the admin views (absent: a star alone). */
  cluster?: ClusterView;
  /** The star's auditor queues for ListAuditQueues / PeekAuditQueue. */
  audit?: AuditView;
  auth?: GrpcAuthHooks;
  star: StarIdentity;
  live: LiveCalls;
  vending: ReadPlanVending;
  /** See GrpcServerOptions.decodeOffThread. */
  decodeOffThread?: OffThreadDecoder;
}

/** Decodes a whole append message's records on a parse worker, checks them as recordsFromWire does
 *  and encodes them (refusals are thrown as ServiceErrors); `signal` takes a cancelled call's message
 *  off the queue. Undefined: the worker queue is full. */
export type OffThreadDecoder = (bytes: Buffer, message: GrpcAppendMessage, signal: AbortSignal) => Promise<EncodedBatch> | undefined;

/** A batch's records for the core: decoded already, or (a message append-decode.ts left whole) from
 *  a parse worker, encoded. `bytes`: the content bytes the stream's caps count. A call that ended
 *  meanwhile (`cancelled()`, asked only of a message sent to a worker, so a small Append makes no
 *  AbortController) appends nothing: its caller was told it failed. With the worker queue full, an
 *  Append is refused (retryable, as HTTP's 429) and a session's batch decoded here, so a healthy
 *  session is not ended for the star's load. */
export async function batchFromWire(
  ctx: GrpcContext, decoded: object, wire: AppendRecord__Output[], message: GrpcAppendMessage, cancelled: () => AbortSignal,
): Promise<{ records: RecordInput[]; encoded?: EncodedBatch; bytes: number }> {
  const whole = offThreadBytes(decoded);
  if (whole === undefined) return recordsFromWire(wire);
  const signal = cancelled();
  // Only a server with a decoder leaves messages whole (server.ts).
  const decoding = ctx.decodeOffThread!(whole, message, signal);
  if (decoding === undefined) {
    if (message === 'append') throw new ServiceError('resource_exhausted', 'too many large appends being parsed; retry shortly');
    return recordsFromWire(wholeRecords(whole, message));
  }
  const encoded = await decoding;
  if (signal.aborted) throw new ServiceError('unavailable', 'the call ended while its batch was being parsed');
  return { records: [], encoded, bytes: encoded.contentBytes };
}

/** The credential's exp passed: the call's deadline. Clients refresh the token and retry (resume). */
export const CREDENTIAL_EXPIRED = 'credential expired (exp): refresh the token and retry; sessions and subscriptions resume from their cursor';

/** Runs the auth hook when present (auth off otherwise); answers what it learned about the caller. */
export async function authorize(ctx: GrpcContext, req: GrpcAuthRequest): Promise<GrpcCaller> {
  if (!ctx.auth?.authorize) return {};
  return (await ctx.auth.authorize(req)) ?? {};
}

/** Decodes a request's address. A malformed one is reported only once the caller authenticated, so
 *  an anonymous caller learns nothing from how its request is read (as the HTTP bridge does). */
export async function decodeAfterAuth<T>(ctx: GrpcContext, metadata: grpc.Metadata, decode: () => T): Promise<T> {
  try {
    return decode();
  } catch (err) {
    if (ctx.auth?.authenticate) await ctx.auth.authenticate(metadata);
    throw err;
  }
}

/** Per-call state a unary handler may set: the caller's exp becomes the call's deadline. */
export interface UnaryCallState {
  metadata: grpc.Metadata;
  /** Aborted once the call is cancelled (made on first use). */
  readonly signal: AbortSignal;
  /** Arms the deadline at `expMs` (the credential's exp). Idempotent; undefined does nothing. */
  deadlineAt(expMs: number | undefined): void;
}

/** A unary handler from an async function of the request and its call state. A call still running
 *  at its credential's exp answers DEADLINE_EXCEEDED. */
export function unary<Req, Res>(
  fn: (request: Req, metadata: grpc.Metadata, call: UnaryCallState) => Promise<Res> | Res,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    let answered = false;
    let cancelDeadline: (() => void) | undefined;
    const answer = (err: Parameters<grpc.sendUnaryData<Res>>[0], res?: Res): void => {
      if (answered) return;
      answered = true;
      cancelDeadline?.();
      if (err) callback(err);
      else callback(null, res);
    };
    let cancelled: AbortController | undefined;
    const state: UnaryCallState = {
      metadata: call.metadata,
      get signal() {
        if (!cancelled) {
          const c = (cancelled = new AbortController());
          if (call.cancelled) c.abort();
          else call.once('cancelled', () => c.abort());
        }
        return cancelled.signal;
      },
      deadlineAt(expMs) {
        if (expMs === undefined || cancelDeadline || answered) return;
        const expired = (): void => answer(grpcFailure(grpc.status.DEADLINE_EXCEEDED, CREDENTIAL_EXPIRED));
        if (expMs <= Date.now()) expired();
        else cancelDeadline = atWallClock(expMs, expired);
      },
    };
    let result: Promise<Res>;
    try {
      result = Promise.resolve(fn(call.request, call.metadata, state));
    } catch (err) {
      result = Promise.reject(err);
    }
    result.then(
      (res) => answer(null, res),
      (err: unknown) => answer(toGrpcFailure(err)),
    );
  };
}

/** Runs `onExpired` at `expMs` (the credential's exp); returns the cancel function. */
export function atExpiry(expMs: number | undefined, onExpired: () => void): () => void {
  if (expMs === undefined) return () => {};
  return atWallClock(expMs, onExpired);
}
