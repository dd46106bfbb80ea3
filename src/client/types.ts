// The service's resources as the client hands them out. Field names are the spec's JSON names
// (snake_case), so a reader of ../shared/spec/interface.md knows every field; options the client
// adds itself are camelCase. Bytes are Uint8Array; text fields are strings.

import type { StreamKey } from './address.ts';

export interface Position {
  /** At a boundary (end, tail): one past the last committed record. */
  seq_num: number;
  /** Time of that record in ms; 0 when no record's time is known. */
  timestamp_ms: number;
}

export type StorageClass = 'standard' | 'express';
export type ProducerPolicy = 'any' | 'fenced';
export type TimestampingMode = 'client-prefer' | 'client-require' | 'arrival';

export interface StreamConfig {
  class: StorageClass;
  producer_policy: ProducerPolicy;
  retention_max_age_ms: number;
  retention_max_bytes: number;
  batch_max_bytes: number;
  batch_max_records: number;
  batch_max_delay_ms: number;
  throughput_max_bytes_per_second: number;
  timestamping_mode: TimestampingMode;
  timestamping_uncapped: boolean;
}

export interface StreamInfo extends StreamConfig {
  stream_id: string;
  bucket: string;
  /** Text when the key's bytes are UTF-8, else the bytes (the server's `key_b64`). */
  key: StreamKey;
  created_at_unix_ms: number;
}

/** GetStream adds the installed fencing token ('' when unfenced). */
export interface StreamDetail extends StreamInfo {
  fencing_token: string;
}

export interface BucketConfig {
  location: string;
  create_stream_on_append: boolean;
  create_stream_on_read: boolean;
  default_class: StorageClass;
  default_producer_policy: ProducerPolicy;
  default_retention_max_age_ms: number;
  default_retention_max_bytes: number;
  default_batch_max_bytes: number;
  default_batch_max_records: number;
  default_batch_max_delay_ms: number;
  default_throughput_max_bytes_per_second: number;
  default_timestamping_mode: TimestampingMode;
  default_timestamping_uncapped: boolean;
}

export interface BucketInfo extends BucketConfig {
  name: string;
  created_at_unix_ms: number;
  creation_token: string;
}

export const STREAM_CONFIG_FIELDS: readonly (keyof StreamConfig)[] = [
  'class', 'producer_policy', 'retention_max_age_ms', 'retention_max_bytes', 'batch_max_bytes',
  'batch_max_records', 'batch_max_delay_ms', 'throughput_max_bytes_per_second', 'timestamping_mode',
  'timestamping_uncapped',
];

export const BUCKET_CONFIG_FIELDS: readonly (keyof BucketConfig)[] = [
  'location', 'create_stream_on_append', 'create_stream_on_read', 'default_class', 'default_producer_policy',
  'default_retention_max_age_ms', 'default_retention_max_bytes', 'default_batch_max_bytes',
  'default_batch_max_records', 'default_batch_max_delay_ms', 'default_throughput_max_bytes_per_second',
  'default_timestamping_mode', 'default_timestamping_uncapped',
];

/** A header as a producer gives it: text (UTF-8) or bytes for each part. */
export type HeaderInput = readonly [name: string | Uint8Array, value: string | Uint8Array];

/** A record as a producer gives it. */
export interface AppendRecord {
  /** Text (sent as UTF-8) or bytes. */
  body: string | Uint8Array;
  headers?: readonly HeaderInput[];
  /** Honoured per the stream's timestamping mode. */
  timestamp_ms?: number;
}

export interface RecordHeader {
  name: Uint8Array;
  value: Uint8Array;
}

/** A committed record. */
export interface ReadRecord {
  seq_num: number;
  timestamp_ms: number;
  headers: RecordHeader[];
  body: Uint8Array;
}

/** The outcome of one durable batch. */
export interface AppendAck {
  /** First appended record (inclusive). */
  start: Position;
  /** One past the last (exclusive). */
  end: Position;
  /** Committed tail, at least `end`. */
  tail: Position;
}

export interface AppendOptions {
  /** The batch lands only if its first record receives exactly this number (else seq_mismatch). */
  matchSeqNum?: number;
  /** Presented on a fenced stream. */
  fencingToken?: string;
}

/** Exactly one start. */
export type ReadStart =
  | { seqNum: number }
  | { timestampMs: number }
  | { tailOffset: number };

export interface Page<T> {
  items: T[];
  /** Cursor of the next page; '' when complete. */
  next: string;
}

export interface ExchangedToken {
  token: string;
  expires_at_unix_ms: number;
}
