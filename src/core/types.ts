// The service's resources, transport-neutral. Bytes are Buffers/Uint8Arrays here; JSON and its
// UTF-8-or-base64 rules live at the edge (api/).

export type { Position } from '../protocol/position.ts';
import type { Position } from '../protocol/position.ts';
export * from '../protocol/resources.ts';
import type { BucketConfig, ProducerPolicy, StorageClass, StreamConfig, TimestampingMode } from '../protocol/resources.ts';

export const STORAGE_CLASSES: readonly StorageClass[] = ['standard', 'express'];
export const PRODUCER_POLICIES: readonly ProducerPolicy[] = ['any', 'fenced'];
export const TIMESTAMPING_MODES: readonly TimestampingMode[] = ['client-prefer', 'client-require', 'arrival'];

export interface Header {
  name: Uint8Array;
  value: Uint8Array;
}

/** A record as a producer hands it in, already decoded from its wire form. */
export interface RecordInput {
  timestamp_ms?: number;
  headers: Header[];
  body: Uint8Array;
}

/** A committed record. */
export interface SequencedRecord {
  seq_num: number;
  timestamp_ms: number;
  headers: Header[];
  body: Uint8Array;
}

export interface StreamInfo extends StreamConfig {
  stream_id: string;
  bucket: string;
  key: string;
  created_at_unix_ms: number;
}

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

export interface ReadResult {
  records: SequencedRecord[];
  tail: Position;
}

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
}

export interface AppendAck {
  start: Position;
  end: Position;
  tail: Position;
}
