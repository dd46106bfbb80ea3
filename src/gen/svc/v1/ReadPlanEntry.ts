// Original file: proto/svc/v1/data.proto

import type { RawObjectLocation as _svc_v1_RawObjectLocation, RawObjectLocation__Output as _svc_v1_RawObjectLocation__Output } from '../../svc/v1/RawObjectLocation.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * One settled object covering [first_seq_num, end_seq_num).
 */
export interface ReadPlanEntry {
  /**
   * Presigned GET URL; the consumer supplies its own byte Range.
   */
  'presigned_url'?: (string);
  /**
   * Raw storage coordinates.
   */
  'raw'?: (_svc_v1_RawObjectLocation | null);
  /**
   * Byte offset of the object's footer index (seq_num/timestamp to byte offset).
   */
  'footer_offset'?: (number | string | Long);
  /**
   * Length of the footer in bytes.
   */
  'footer_length'?: (number | string | Long);
  /**
   * Bytes of record payload before the footer.
   */
  'payload_bytes'?: (number | string | Long);
  /**
   * First sequence number in the object (inclusive).
   */
  'first_seq_num'?: (number | string | Long);
  /**
   * One past the last sequence number in the object (exclusive); the next entry's first_seq_num.
   */
  'end_seq_num'?: (number | string | Long);
  /**
   * Smallest record timestamp in the object (milliseconds).
   */
  'min_timestamp_ms'?: (number | string | Long);
  /**
   * Largest record timestamp in the object (milliseconds).
   */
  'max_timestamp_ms'?: (number | string | Long);
  /**
   * Where to fetch the object (one, per the vending mode).
   */
  'location'?: "presigned_url"|"raw";
}

/**
 * One settled object covering [first_seq_num, end_seq_num).
 */
export interface ReadPlanEntry__Output {
  /**
   * Presigned GET URL; the consumer supplies its own byte Range.
   */
  'presigned_url'?: (string);
  /**
   * Raw storage coordinates.
   */
  'raw'?: (_svc_v1_RawObjectLocation__Output | null);
  /**
   * Byte offset of the object's footer index (seq_num/timestamp to byte offset).
   */
  'footer_offset': (number);
  /**
   * Length of the footer in bytes.
   */
  'footer_length': (number);
  /**
   * Bytes of record payload before the footer.
   */
  'payload_bytes': (number);
  /**
   * First sequence number in the object (inclusive).
   */
  'first_seq_num': (number);
  /**
   * One past the last sequence number in the object (exclusive); the next entry's first_seq_num.
   */
  'end_seq_num': (number);
  /**
   * Smallest record timestamp in the object (milliseconds).
   */
  'min_timestamp_ms': (number);
  /**
   * Largest record timestamp in the object (milliseconds).
   */
  'max_timestamp_ms': (number);
  /**
   * Where to fetch the object (one, per the vending mode).
   */
  'location'?: "presigned_url"|"raw";
}
