// The core's types. The wire's shapes (Position, the resources, records and the append ack) are
// defined in the protocol leaf and re-exported here, so the core names one file for its types; what
// follows is the core's own: bucket defaults, read options, pre-encoded batches, append input.
// Bytes are Buffers/Uint8Arrays here; JSON and its UTF-8-or-base64 rules live at the edge (api/).

export type { Position } from '../protocol/position.ts';
export { namedSeqText } from '../protocol/position.ts';
export * from '../protocol/resources.ts';
import type { BucketConfig, StreamConfig } from '../protocol/resources.ts';
export type { AppendAck, Header, RecordInput, SequencedRecord } from '../protocol/records.ts';
import type { RecordInput, RecordPage } from '../protocol/records.ts';

export const DEFAULT_BUCKET_CONFIG: Readonly<BucketConfig> = {
  location: 'local',
  create_stream_on_append: false,
  create_stream_on_read: false,
  default_class: 'standard',
  default_producer_policy: 'any',
  default_retention_max_age_ms: 0,
  default_retention_max_bytes: 0,
  default_batch_max_bytes: 0,
  default_batch_max_records: 0,
  default_batch_max_delay_ms: 0,
  default_throughput_max_bytes_per_second: 0,
  default_timestamping_mode: 'client-prefer',
  default_timestamping_uncapped: false,
};

/** The stream config a bucket hands to a new stream. */
export function streamDefaultsOf(b: BucketConfig): StreamConfig {
  return {
    class: b.default_class,
    producer_policy: b.default_producer_policy,
    retention_max_age_ms: b.default_retention_max_age_ms,
    retention_max_bytes: b.default_retention_max_bytes,
    batch_max_bytes: b.default_batch_max_bytes,
    batch_max_records: b.default_batch_max_records,
    batch_max_delay_ms: b.default_batch_max_delay_ms,
    throughput_max_bytes_per_second: b.default_throughput_max_bytes_per_second,
    timestamping_mode: b.default_timestamping_mode,
    timestamping_uncapped: b.default_timestamping_uncapped,
  };
}

/** Start of a read or subscription, exactly one of the three. */
export type ReadStart =
  | { kind: 'seq_num'; value: number }
  | { kind: 'timestamp_ms'; value: number }
  | { kind: 'tail_offset'; value: number };

export interface ReadOptions {
  start: ReadStart;
  limit: number;
  maxBytes: number;
  untilMs?: number;
  clamp: boolean;
}

export type ReadResult = RecordPage;

/** A batch a worker already validated and encoded (timestamps, stream and seq_num patched later). */
export interface EncodedBatch {
  frame: Buffer;
  recordOffsets: Uint32Array;
  /** The client's timestamp_ms per record; NaN where the record had none. */
  clientTs: Float64Array;
  contentBytes: number;
}

export interface AppendInput {
  /** Decoded records; empty when `encoded` carries the batch instead. */
  records: RecordInput[];
  encoded?: EncodedBatch;
  match_seq_num?: number;
  fencing_token?: string;
  /** The caller's credential expires then (its exp, the request's deadline): an append not
   *  sequenced by then is refused and never written, so an expired caller is never told "failed"
   *  for a batch that lands later. Absent: no deadline (auth off, a trusted peer). */
  deadlineMs?: number;
  /** The batches of one producer session (core/producer-session.ts): once one is refused, no later
   *  one is appended, so a session never leaves a hole in its producer's order. */
  chain?: AppendChain;
}

/** Marked broken when a batch of the chain is refused: by the star, at once, as it refuses a batch it
 *  sequenced (a later one may be waiting for a lease or its turn under a cap, and would otherwise be
 *  appended after the stream reloads); by the session for any other refusal. */
export interface AppendChain {
  broken: boolean;
  /** Settles once the newest batch of the chain that had to wait before sequencing (for a match miss
   *  to drain, a stream's metadata) is sequenced or refused: later batches of the chain wait for it,
   *  so none is appended ahead of an earlier one, or after one refused. */
  waiting?: Promise<void>;
}
