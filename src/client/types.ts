// The service's resources as the client hands them out. Field names are the spec's JSON names
// (snake_case), so a reader of ../shared/spec/interface.md knows every field; options the client
// adds itself are camelCase. Bytes are Uint8Array; text fields are strings.

import type { StreamKey } from './address.ts';
import type { Position } from '../protocol/position.ts';
import type { StreamConfig } from '../protocol/resources.ts';

// The wire's resources come from the protocol leaf, which imports nothing (browser-safe).
export type { Position } from '../protocol/position.ts';
export type { BucketConfig, BucketInfo, ProducerPolicy, StorageClass, StreamConfig, TimestampingMode } from '../protocol/resources.ts';
export { BUCKET_CONFIG_KEYS as BUCKET_CONFIG_FIELDS, STREAM_CONFIG_KEYS as STREAM_CONFIG_FIELDS } from '../protocol/resources.ts';

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
