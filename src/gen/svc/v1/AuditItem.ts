// Original file: proto/svc/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

/**
 * One item waiting in an audit queue.
 */
export interface AuditItem {
  /**
   * Bucket of the audited stream.
   */
  'bucket'?: (string);
  /**
   * Key of the audited stream.
   */
  'key'?: (Buffer | Uint8Array | string);
  /**
   * What is to be checked, human-readable.
   */
  'reason'?: (string);
  /**
   * When it was enqueued, milliseconds since the epoch.
   */
  'enqueued_at_unix_ms'?: (number | string | Long);
}

/**
 * One item waiting in an audit queue.
 */
export interface AuditItem__Output {
  /**
   * Bucket of the audited stream.
   */
  'bucket': (string);
  /**
   * Key of the audited stream.
   */
  'key': (Buffer);
  /**
   * What is to be checked, human-readable.
   */
  'reason': (string);
  /**
   * When it was enqueued, milliseconds since the epoch.
   */
  'enqueued_at_unix_ms': (number);
}
