// A gRPC producer session (DataService.AppendSession) on one stream: the first message opens it, each
// later one is a batch, acknowledged in order by one response. Batches are pipelined: `append` writes
// at once and resolves with that batch's ack.
//
// When the session ends with a status, every batch not yet acknowledged is rejected. The first of them
// carries the status itself; it is definite when the status is a refusal of that batch (a bad batch,
// a fence or match_seq_num miss, a missing stream, no grant) or the token's exp. The batches after a
// definite one are not appended either: the server appends no batch of a session after one it refused
// (data.proto), and at exp it acknowledges everything it appended and drops the rest. After any other
// status the batches after the first are ambiguous: a cut connection looks the same. NOT_OWNER (a cluster:
// another star leads the stream) refuses the first batch before anything is sequenced, and names the
// leader, where the client's next session goes (client.ts). UNAVAILABLE (the star
// went away or shut down; a clean shutdown and a cut connection look alike here) makes every
// unacknowledged batch ambiguous.

import type * as grpc from '@grpc/grpc-js';
import { keyBytes, type StreamAddress } from '../address.ts';
import { toBytes } from '../bytes.ts';
import { SvcError, type ErrorKind } from '../errors.ts';
import type { AppendAck, AppendRecord, Position } from '../types.ts';
import type { AppendSessionRequest } from '../../gen/svc/v1/AppendSessionRequest.ts';
import type { AppendSessionResponse__Output } from '../../gen/svc/v1/AppendSessionResponse.ts';
import type { AppendRecord as WireRecord } from '../../gen/svc/v1/AppendRecord.ts';
import { fromGrpcError } from './errors.ts';

type SessionCall = grpc.ClientDuplexStream<AppendSessionRequest, AppendSessionResponse__Output>;

/** Statuses after which the unacknowledged batches were certainly not appended. */
const DEFINITE_KINDS: ReadonlySet<ErrorKind> = new Set<ErrorKind>([
  'invalid_argument', 'permission_denied', 'unauthenticated', 'not_found', 'fence_mismatch', 'seq_mismatch', 'auth_expired',
  'resource_exhausted', 'trimmed', 'unimplemented',
]);

/** Batches one session keeps unacknowledged before `append` waits: the server's own bound
 *  (APPEND_SESSION_INFLIGHT_BATCHES_MAX), past which it stops reading anyway. */
export const SESSION_INFLIGHT_BATCHES_MAX = 1024;

interface Pending {
  records: number;
  resolve(a: AppendAck): void;
  reject(e: SvcError): void;
}

export function toWireRecord(r: AppendRecord): WireRecord {
  const out: WireRecord = { body: toBytes(r.body), headers: (r.headers ?? []).map(([n, v]) => ({ name: toBytes(n), value: toBytes(v) })) };
  if (r.timestamp_ms !== undefined) out.timestamp_ms = r.timestamp_ms;
  return out;
}

function position(p: { seq_num?: number | string | { toString(): string }; timestamp_ms?: number | string | { toString(): string } } | null | undefined): Position {
  return { seq_num: Number(p?.seq_num ?? 0), timestamp_ms: Number(p?.timestamp_ms ?? 0) };
}

export class AppendSession {
  private readonly pending: Pending[] = [];
  private readonly roomWaiters: (() => void)[] = [];
  private endedWith: SvcError | undefined;
  private finished = false;
  /** The server acknowledged a batch, so it opened the session. Until then one batch is sent: a
   *  refused open (NOT_OWNER, a fence, no grant) then refuses that batch only, definitely, rather
   *  than leaving the batches pipelined behind it ambiguous. */
  private opened = false;
  private readonly closedPromise: Promise<void>;

  constructor(private readonly call: SessionCall, readonly address: StreamAddress, fencingToken: string | undefined) {
    let onClosed!: () => void;
    this.closedPromise = new Promise<void>((resolve) => { onClosed = resolve; });
    call.on('data', (msg: AppendSessionResponse__Output) => {
      const p = this.pending.shift();
      if (!p) {
        this.end(new SvcError('protocol', 'append session: an ack with no batch waiting'));
        call.cancel();
        return;
      }
      p.resolve({ start: position(msg.start), end: position(msg.end), tail: position(msg.tail) });
      if (!this.opened) {
        this.opened = true;
        for (const w of this.roomWaiters.splice(0)) w();
      } else {
        this.roomWaiters.shift()?.();
      }
    });
    // grpc-js reports the final status once every message was delivered: 'status' always, 'error'
    // as well when it is not OK (both are handled; the first one counts).
    call.on('error', (err) => { this.end(fromGrpcError(err, 'append session', true)); onClosed(); });
    call.on('status', (st: grpc.StatusObject) => {
      this.end(st.code === 0 ? undefined : fromGrpcError(st, 'append session', true));
      onClosed();
    });
    call.write({ open: { bucket: address.bucket, key: keyBytes(address.key), ...(fencingToken !== undefined ? { fencing_token: fencingToken } : {}) } });
  }

  /** True once the session ended (by error or by close); a new one must be opened. */
  get ended(): boolean {
    return this.finished;
  }

  /** Batches written and not yet acknowledged. */
  get inflight(): number {
    return this.pending.length;
  }

  /** Writes one batch (after waiting for room when SESSION_INFLIGHT_BATCHES_MAX are unacknowledged);
   *  resolves with its ack, in order with the others. */
  async append(records: readonly AppendRecord[], matchSeqNum?: number): Promise<AppendAck> {
    while (this.pending.length >= (this.opened ? SESSION_INFLIGHT_BATCHES_MAX : 1) && !this.finished) {
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
    }
    // Never written: definite, and worth sending on a new session.
    if (this.finished) throw new SvcError('unavailable', 'the append session has ended; the batch was not sent');
    return await new Promise<AppendAck>((resolve, reject) => {
      this.pending.push({ records: records.length, resolve, reject });
      this.call.write({ batch: { records: records.map(toWireRecord), ...(matchSeqNum !== undefined ? { match_seq_num: matchSeqNum } : {}) } });
    });
  }

  /** Half-closes and waits until every batch is acknowledged and the server ended the call. */
  async close(): Promise<void> {
    if (!this.finished) this.call.end();
    await this.closedPromise;
    if (this.endedWith) throw this.endedWith;
  }

  /** Cancels the call; unacknowledged batches are rejected as ambiguous. */
  cancel(): void {
    this.call.cancel();
  }

  private end(err: SvcError | undefined): void {
    if (this.finished) return;
    this.finished = true;
    this.endedWith = err;
    for (const w of this.roomWaiters.splice(0)) w();
    const left = this.pending.splice(0);
    // A call that never reached a server (fromGrpcError: its channel could not connect): nothing
    // was sent, so nothing is ambiguous.
    if (err?.kind === 'connection') {
      for (const p of left) p.reject(new SvcError('connection', err.message, { grpcStatus: err.grpcStatus, cause: err }));
      return;
    }
    left.forEach((p, i) => {
      if (!err) {
        p.reject(new SvcError('protocol', 'append session ended with batches unacknowledged', { ambiguous: true }));
      } else if (i === 0 && (DEFINITE_KINDS.has(err.kind) || err.leader)) {
        // NOT_OWNER (err.leader) refuses the batch before its star sequences anything: not appended,
        // and the next session belongs at the leader it names.
        p.reject(new SvcError(err.kind, err.message, {
          grpcStatus: err.grpcStatus, tail: err.tail, fencingToken: err.fencingToken, leader: err.leader, cause: err,
        }));
      } else if (i > 0 && err.kind === 'auth_expired') {
        // At exp the server acknowledges everything it appended and drops the rest: not appended.
        p.reject(new SvcError('auth_expired', `append session ended before this batch was handled (${err.message})`, { grpcStatus: err.grpcStatus, cause: err }));
      } else if (i > 0 && (DEFINITE_KINDS.has(err.kind) || err.leader)) {
        // An earlier batch was refused, and the server appends nothing of the session after it.
        p.reject(new SvcError(err.kind, `append session ended at an earlier batch's refusal (${err.message}); this batch was not appended`,
          { grpcStatus: err.grpcStatus, leader: err.leader, cause: err }));
      } else if (i === 0) {
        p.reject(new SvcError(err.kind, `${err.message}: the batch may or may not have been appended`, { grpcStatus: err.grpcStatus, ambiguous: true, cause: err }));
      } else {
        // The status belongs to an earlier batch (its tail or token says nothing about this one).
        p.reject(new SvcError('unavailable', `append session ended before this batch was acknowledged (${err.message}): it may or may not have been appended`,
          { grpcStatus: err.grpcStatus, ambiguous: true, leader: err.leader, cause: err }));
      }
    });
  }
}
