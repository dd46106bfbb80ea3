// Original file: proto/svc/v1/types.proto

import type { Header as _svc_v1_Header, Header__Output as _svc_v1_Header__Output } from '../../svc/v1/Header.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * A committed record as reads and subscriptions deliver it.
 */
export interface SequencedRecord {
  /**
   * Sequence number assigned by the stream at admission.
   */
  'seq_num'?: (number | string | Long);
  /**
   * Timestamp in milliseconds, as stamped by the stream's timestamping mode.
   */
  'timestamp_ms'?: (number | string | Long);
  /**
   * Headers, in order; empty when the record has none.
   */
  'headers'?: (_svc_v1_Header)[];
  /**
   * Record body.
   */
  'body'?: (Buffer | Uint8Array | string);
}

/**
 * A committed record as reads and subscriptions deliver it.
 */
export interface SequencedRecord__Output {
  /**
   * Sequence number assigned by the stream at admission.
   */
  'seq_num': (number);
  /**
   * Timestamp in milliseconds, as stamped by the stream's timestamping mode.
   */
  'timestamp_ms': (number);
  /**
   * Headers, in order; empty when the record has none.
   */
  'headers': (_svc_v1_Header__Output)[];
  /**
   * Record body.
   */
  'body': (Buffer);
}
