// Appending one batch so that a retry never duplicates it. Shared by `SvcClient.append` and by the
// producer (over HTTP or a gRPC session).
//
// A failure is either definite (the server refused the batch: nothing was appended) or ambiguous (no
// answer, a cut answer, a timeout, a 5xx: the batch may be in the stream). The rules:
//   - definite and retryable (429, a refused connection): retried with backoff;
//   - definite and not retryable (400, 403, 404, a fence or match_seq_num miss): surfaced;
//   - ambiguous without match_seq_num: surfaced as AmbiguousAppendError, never retried, because the
//     bridge keeps no idempotency state and a retry could append the batch twice;
//   - ambiguous with match_seq_num: retried with the same match_seq_num. If the earlier attempt did
//     land, the retry is refused with 412 and a tail at or past match + records; the records at
//     [match, match + records) are then read back and compared with the batch: equal means the
//     earlier attempt landed and the batch is acknowledged from what was read (nothing appended
//     twice); different means another writer took those positions, surfaced as seq_mismatch.

import { bytesEqual, toBytes } from './bytes.ts';
import { AmbiguousAppendError, SvcError } from './errors.ts';
import { backoffMs, sleep, type RetryPolicy } from './retry.ts';
import type { AppendAck, AppendOptions, AppendRecord, ReadRecord } from './types.ts';

/** The two things the rule needs from a transport. */
export interface AppendIo {
  /** One attempt, no retries of its own; throws SvcError. */
  attempt(records: readonly AppendRecord[], opts: AppendOptions): Promise<AppendAck>;
  /** Reads [start, start + count) (for the read-back after an ambiguous attempt). */
  readRange(start: number, count: number): Promise<ReadRecord[]>;
}

export interface RetryEvent {
  error: SvcError;
  /** The attempt that failed, from 1. */
  attempt: number;
  delayMs: number;
}

export interface SafeAppendOptions extends AppendOptions {
  retry: RetryPolicy;
  /** Carried across calls for one batch: set once an attempt's outcome was unknown, so a later
   *  412 at or past the batch's end is checked by read-back rather than taken as a conflict. */
  state?: { uncertain: boolean };
  signal?: AbortSignal;
  onRetry?: (e: RetryEvent) => void;
}

export interface SafeAppendResult {
  ack: AppendAck;
  /** True when an ambiguous attempt was found to have landed (by the read-back). */
  recovered: boolean;
  attempts: number;
}

export async function appendSafely(io: AppendIo, records: readonly AppendRecord[], opts: SafeAppendOptions): Promise<SafeAppendResult> {
  const match = opts.matchSeqNum;
  const once: AppendOptions = {
    ...(match !== undefined ? { matchSeqNum: match } : {}),
    ...(opts.fencingToken !== undefined ? { fencingToken: opts.fencingToken } : {}),
  };
  /** An earlier attempt of this batch may have landed. */
  const state = opts.state ?? { uncertain: false };
  for (let attempt = 1; ; attempt++) {
    let err: SvcError;
    try {
      return { ack: await io.attempt(records, once), recovered: false, attempts: attempt };
    } catch (e) {
      if (!(e instanceof SvcError)) throw e;
      err = e;
    }
    if (err.kind === 'seq_mismatch' && match !== undefined && err.tail) {
      // The stream is not yet at `match`: nothing of this batch landed (a pipelined batch that
      // arrived before its predecessors). Definite; the producer resends it in turn.
      if (err.tail.seq_num < match) throw err;
      if (state.uncertain) return { ack: await landedEarlier(io, records, match, err), recovered: true, attempts: attempt };
      throw err;
    }
    if (err.kind === 'aborted') throw err;
    if (err.ambiguous && match === undefined) throw new AmbiguousAppendError(err, records.length);
    if (err.ambiguous) state.uncertain = true;
    if (!err.retryable || attempt >= opts.retry.attemptsMax) {
      if (err.ambiguous || state.uncertain) {
        throw new SvcError(err.kind, `${err.message} (after ${attempt} attempts with match_seq_num ${match}: the batch may or may not have been appended at ${match})`,
          { status: err.status, grpcStatus: err.grpcStatus, ambiguous: true, cause: err });
      }
      throw err;
    }
    const delayMs = backoffMs(opts.retry, attempt, err.retryAfterMs);
    opts.onRetry?.({ error: err, attempt, delayMs });
    await sleep(delayMs, opts.signal);
  }
}

/** After a 412 that followed an ambiguous attempt: did that attempt land? */
async function landedEarlier(io: AppendIo, records: readonly AppendRecord[], match: number, err: SvcError): Promise<AppendAck> {
  const tail = err.tail!;
  const end = match + records.length;
  if (tail.seq_num >= end) {
    const got = await io.readRange(match, records.length);
    if (got.length === records.length && got.every((r, i) => sameRecord(r, records[i]))) {
      return {
        start: { seq_num: match, timestamp_ms: got[0].timestamp_ms },
        end: { seq_num: end, timestamp_ms: got[got.length - 1].timestamp_ms },
        tail,
      };
    }
  }
  throw new SvcError('seq_mismatch', `match_seq_num ${match} missed and the records at ${match}..${end - 1} are not this batch: ` +
    `another writer appended there (tail ${tail.seq_num})`, { status: err.status, grpcStatus: err.grpcStatus, tail, cause: err });
}

function sameRecord(got: ReadRecord, sent: AppendRecord): boolean {
  if (!bytesEqual(got.body, toBytes(sent.body))) return false;
  const hs = sent.headers ?? [];
  if (got.headers.length !== hs.length) return false;
  return hs.every(([n, v], i) => bytesEqual(got.headers[i].name, toBytes(n)) && bytesEqual(got.headers[i].value, toBytes(v)));
}
