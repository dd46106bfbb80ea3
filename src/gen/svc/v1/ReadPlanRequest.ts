// Original file: proto/svc/v1/data.proto

import type { VendingMode as _svc_v1_VendingMode, VendingMode__Output as _svc_v1_VendingMode__Output } from '../../svc/v1/VendingMode.ts';
import type { Long } from '@grpc/proto-loader';

export interface ReadPlanRequest {
  /**
   * Bucket name.
   */
  'bucket'?: (string);
  /**
   * Stream key.
   */
  'key'?: (Buffer | Uint8Array | string);
  /**
   * At this sequence number.
   */
  'seq_num'?: (number | string | Long);
  /**
   * At the first record stamped at or after this time (milliseconds).
   */
  'timestamp_ms'?: (number | string | Long);
  /**
   * Exclusive end of the range; unset plans up to the settled frontier.
   */
  'end_seq_num'?: (number | string | Long);
  /**
   * Most entries to return; 0 or above 256 means 256.
   */
  'max_entries'?: (number);
  /**
   * Requested vending mode. RAW on a star vending presigned URLs is PERMISSION_DENIED; PRESIGNED on
   * a star without a data bridge to serve the URLs is UNIMPLEMENTED (this deployment does not vend them).
   */
  'mode'?: (_svc_v1_VendingMode);
  /**
   * Where the range starts (exactly one).
   */
  'start'?: "seq_num"|"timestamp_ms";
  '_end_seq_num'?: "end_seq_num";
}

export interface ReadPlanRequest__Output {
  /**
   * Bucket name.
   */
  'bucket': (string);
  /**
   * Stream key.
   */
  'key': (Buffer);
  /**
   * At this sequence number.
   */
  'seq_num'?: (number);
  /**
   * At the first record stamped at or after this time (milliseconds).
   */
  'timestamp_ms'?: (number);
  /**
   * Exclusive end of the range; unset plans up to the settled frontier.
   */
  'end_seq_num'?: (number);
  /**
   * Most entries to return; 0 or above 256 means 256.
   */
  'max_entries': (number);
  /**
   * Requested vending mode. RAW on a star vending presigned URLs is PERMISSION_DENIED; PRESIGNED on
   * a star without a data bridge to serve the URLs is UNIMPLEMENTED (this deployment does not vend them).
   */
  'mode': (_svc_v1_VendingMode__Output);
  /**
   * Where the range starts (exactly one).
   */
  'start'?: "seq_num"|"timestamp_ms";
  '_end_seq_num'?: "end_seq_num";
}
