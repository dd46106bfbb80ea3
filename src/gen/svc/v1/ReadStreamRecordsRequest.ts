// Original file: proto/svc/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface ReadStreamRecordsRequest {
  /**
   * Bucket name.
   */
  'bucket'?: (string);
  /**
   * Stream key.
   */
  'key'?: (Buffer | Uint8Array | string);
  /**
   * First sequence number to show; pulled up to the earliest retained record.
   */
  'seq_num'?: (number | string | Long);
  /**
   * Most records; 0 or above 500 means 500. The page also stops at 1 MiB.
   */
  'limit'?: (number);
}

export interface ReadStreamRecordsRequest__Output {
  /**
   * Bucket name.
   */
  'bucket': (string);
  /**
   * Stream key.
   */
  'key': (Buffer);
  /**
   * First sequence number to show; pulled up to the earliest retained record.
   */
  'seq_num': (number);
  /**
   * Most records; 0 or above 500 means 500. The page also stops at 1 MiB.
   */
  'limit': (number);
}
