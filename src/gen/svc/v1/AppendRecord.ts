// Original file: proto/svc/v1/types.proto

import type { Header as _svc_v1_Header, Header__Output as _svc_v1_Header__Output } from '../../svc/v1/Header.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * A record as a producer appends it.
 */
export interface AppendRecord {
  /**
   * Client timestamp in milliseconds, honored according to the stream's timestamping mode.
   * Unset lets the stream stamp the arrival time (required under `client-require`).
   */
  'timestamp_ms'?: (number | string | Long);
  /**
   * Headers, in order. May be empty.
   */
  'headers'?: (_svc_v1_Header)[];
  /**
   * Record body, arbitrary bytes (at most 1 MiB of content per record, headers included).
   */
  'body'?: (Buffer | Uint8Array | string);
  '_timestamp_ms'?: "timestamp_ms";
}

/**
 * A record as a producer appends it.
 */
export interface AppendRecord__Output {
  /**
   * Client timestamp in milliseconds, honored according to the stream's timestamping mode.
   * Unset lets the stream stamp the arrival time (required under `client-require`).
   */
  'timestamp_ms'?: (number);
  /**
   * Headers, in order. May be empty.
   */
  'headers': (_svc_v1_Header__Output)[];
  /**
   * Record body, arbitrary bytes (at most 1 MiB of content per record, headers included).
   */
  'body': (Buffer);
  '_timestamp_ms'?: "timestamp_ms";
}
