// The sequencing rules as pure functions, so they can be tested exhaustively without a server:
// fencing, match_seq_num, and timestamps per the stream's timestamping mode.

import { TIME_PAST_SAFE_MS } from '../protocol/rules.ts';
import { ServiceError } from './errors.ts';
import { namedSeqText, type Position, type StreamConfig } from './types.ts';

/** Throws the spec's 412 (fence detail) when the presented token does not admit this append. */
export function checkFence(installed: string, policy: StreamConfig['producer_policy'], presented: string | undefined): void {
  if ((policy === 'fenced' && (presented === undefined || presented === ''))
    || (presented !== undefined && presented !== installed)
    || (presented === undefined && installed !== '')) {
    throw new ServiceError('fence_mismatch', 'fencing token mismatch', { fencing_token: installed });
  }
}

/** Throws the spec's 412 (sequence detail) when the batch would not start at `match`. */
export function checkMatch(match: number | undefined, next: number, tail: Position): void {
  if (match !== undefined && match !== next) {
    throw new ServiceError('seq_mismatch', `match_seq_num ${namedSeqText(match)} does not match the next seq_num ${next}`, { tail });
  }
}

/** Throws the spec's 400 when a batch is over the stream's batch_max_records or batch_max_bytes
 *  (0 = unbounded), whatever the transport brought it. */
export function checkBatchCaps(cfg: StreamConfig, records: number, contentBytes: number): void {
  if (cfg.batch_max_records > 0 && records > cfg.batch_max_records) {
    throw new ServiceError('invalid_argument', `the batch holds ${records} records; the stream's batch_max_records is ${cfg.batch_max_records}`);
  }
  if (cfg.batch_max_bytes > 0 && contentBytes > cfg.batch_max_bytes) {
    throw new ServiceError('invalid_argument', `the batch holds ${contentBytes} bytes; the stream's batch_max_bytes is ${cfg.batch_max_bytes}`);
  }
}

/** A stream's throughput token bucket: `tokens` bytes (negative: owed) as of `atMs`. One second of
 *  burst: a bucket never holds more than the rate. */
export interface PaceState { tokens: number; atMs: number }

/** How long a batch of `bytes` waits before it may be sequenced under `rateBps`, with the bucket it
 *  leaves behind (the batch's bytes taken, so later batches queue behind it). */
export function pace(state: PaceState | undefined, rateBps: number, nowMs: number, bytes: number): { waitMs: number; next: PaceState } {
  const tokens = state === undefined ? rateBps : Math.min(rateBps, state.tokens + ((nowMs - state.atMs) * rateBps) / 1000);
  const left = tokens - bytes;
  return { waitMs: left >= 0 ? 0 : Math.ceil((-left * 1000) / rateBps), next: { tokens: left, atMs: nowMs } };
}

/**
 * Timestamps for a batch. `client-prefer` takes the client's time when given, else arrival;
 * `client-require` refuses a record without one; `arrival` ignores the client's. Unless uncapped, a
 * client time later than arrival is capped at arrival. Times never go backwards within a stream: an
 * earlier one is raised to `floorMs` (the previous record's). The client's times are read from
 * `source` by a function that captures nothing, so no closure is made per append.
 */
export function stampTimestamps<S>(
  count: number, source: S, clientTsAt: (source: S, i: number) => number | undefined, cfg: StreamConfig, arrivalMs: number, floorMs: number,
): number[] {
  const out = new Array<number>(count);
  let floor = floorMs;
  for (let i = 0; i < count; i++) {
    const client = clientTsAt(source, i);
    let t: number;
    if (cfg.timestamping_mode === 'arrival' || client === undefined) {
      if (cfg.timestamping_mode === 'client-require' && client === undefined) {
        throw new ServiceError('invalid_argument', `record ${i}: timestamp_ms is required by client-require timestamping`);
      }
      t = arrivalMs;
    } else {
      t = client;
      if (!cfg.timestamping_uncapped && t > arrivalMs) t = arrivalMs;
      // A client time past 2^53 - 1 arrives as TIME_PAST_SAFE_MS: capped above, it is arrival; an
      // uncapped stream would store it as given, which a record's time cannot hold exactly.
      if (t === TIME_PAST_SAFE_MS) {
        throw new ServiceError('invalid_argument', `record ${i}: timestamp_ms past 2^53-1 cannot be stored; this stream's timestamping is uncapped`);
      }
    }
    if (t < floor) t = floor;
    out[i] = t;
    floor = t;
  }
  return out;
}
