// The service's resources as the client hands them out. Field names are the spec's JSON names
// (snake_case), so a reader of ../shared/spec/interface.md knows every field; options the client
// adds itself are camelCase. Bytes are Uint8Array; text fields are strings.

import type { StreamKey } from './address.ts';
import type { StreamDetail as WireStreamDetail, StreamInfo as WireStreamInfo } from '../protocol/resources.ts';

// The wire's shapes come from the protocol leaf, which imports nothing (browser-safe); the client
// keeps its public names for them.
export type { Position } from '../protocol/position.ts';
export type { AppendAck, Header as RecordHeader, SequencedRecord as ReadRecord } from '../protocol/records.ts';
export type {
  BucketConfig, BucketInfo, ExchangedToken, ListPage as Page, ProducerPolicy, StorageClass, StreamConfig, TimestampingMode,
} from '../protocol/resources.ts';
export { BUCKET_CONFIG_KEYS as BUCKET_CONFIG_FIELDS, STREAM_CONFIG_KEYS as STREAM_CONFIG_FIELDS } from '../protocol/resources.ts';

/** A stream; its key is text when the key's bytes are UTF-8, else the bytes (the server's `key_b64`). */
export type StreamInfo = WireStreamInfo<StreamKey>;

/** GetStream adds the installed fencing token ('' when unfenced). */
export type StreamDetail = WireStreamDetail<StreamKey>;

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
