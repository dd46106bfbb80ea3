// Original file: proto/svc/v1/types.proto

import type { StorageClass as _svc_v1_StorageClass, StorageClass__Output as _svc_v1_StorageClass__Output } from '../../svc/v1/StorageClass.ts';
import type { ProducerPolicy as _svc_v1_ProducerPolicy, ProducerPolicy__Output as _svc_v1_ProducerPolicy__Output } from '../../svc/v1/ProducerPolicy.ts';
import type { TimestampingMode as _svc_v1_TimestampingMode, TimestampingMode__Output as _svc_v1_TimestampingMode__Output } from '../../svc/v1/TimestampingMode.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * A stream's configuration. In requests every field is optional (presence is the field mask);
 * in responses every field is set. Bounds of 0 mean unbounded.
 */
export interface StreamConfig {
  /**
   * Storage class (the spec's `class`; renamed because `class` is reserved in most target languages).
   */
  'storage_class'?: (_svc_v1_StorageClass);
  /**
   * Producer policy.
   */
  'producer_policy'?: (_svc_v1_ProducerPolicy);
  /**
   * Records older than this are trimmed by retention; 0 = unbounded.
   */
  'retention_max_age_ms'?: (number | string | Long);
  /**
   * Oldest records are trimmed once the stream holds more than this; 0 = unbounded.
   */
  'retention_max_bytes'?: (number | string | Long);
  /**
   * Producer-side batching: bytes per batch; 0 = unbounded.
   */
  'batch_max_bytes'?: (number | string | Long);
  /**
   * Producer-side batching: records per batch; 0 = unbounded.
   */
  'batch_max_records'?: (number | string | Long);
  /**
   * Producer-side batching: longest a batch may wait, in milliseconds.
   */
  'batch_max_delay_ms'?: (number | string | Long);
  /**
   * Append throughput ceiling in bytes per second; 0 = unbounded.
   */
  'throughput_max_bytes_per_second'?: (number | string | Long);
  /**
   * Timestamping mode.
   */
  'timestamping_mode'?: (_svc_v1_TimestampingMode);
  /**
   * When true, client timestamps ahead of the arrival time are not capped to it.
   */
  'timestamping_uncapped'?: (boolean);
  '_retention_max_age_ms'?: "retention_max_age_ms";
  '_retention_max_bytes'?: "retention_max_bytes";
  '_batch_max_bytes'?: "batch_max_bytes";
  '_batch_max_records'?: "batch_max_records";
  '_batch_max_delay_ms'?: "batch_max_delay_ms";
  '_throughput_max_bytes_per_second'?: "throughput_max_bytes_per_second";
  '_timestamping_uncapped'?: "timestamping_uncapped";
}

/**
 * A stream's configuration. In requests every field is optional (presence is the field mask);
 * in responses every field is set. Bounds of 0 mean unbounded.
 */
export interface StreamConfig__Output {
  /**
   * Storage class (the spec's `class`; renamed because `class` is reserved in most target languages).
   */
  'storage_class': (_svc_v1_StorageClass__Output);
  /**
   * Producer policy.
   */
  'producer_policy': (_svc_v1_ProducerPolicy__Output);
  /**
   * Records older than this are trimmed by retention; 0 = unbounded.
   */
  'retention_max_age_ms'?: (number);
  /**
   * Oldest records are trimmed once the stream holds more than this; 0 = unbounded.
   */
  'retention_max_bytes'?: (number);
  /**
   * Producer-side batching: bytes per batch; 0 = unbounded.
   */
  'batch_max_bytes'?: (number);
  /**
   * Producer-side batching: records per batch; 0 = unbounded.
   */
  'batch_max_records'?: (number);
  /**
   * Producer-side batching: longest a batch may wait, in milliseconds.
   */
  'batch_max_delay_ms'?: (number);
  /**
   * Append throughput ceiling in bytes per second; 0 = unbounded.
   */
  'throughput_max_bytes_per_second'?: (number);
  /**
   * Timestamping mode.
   */
  'timestamping_mode': (_svc_v1_TimestampingMode__Output);
  /**
   * When true, client timestamps ahead of the arrival time are not capped to it.
   */
  'timestamping_uncapped'?: (boolean);
  '_retention_max_age_ms'?: "retention_max_age_ms";
  '_retention_max_bytes'?: "retention_max_bytes";
  '_batch_max_bytes'?: "batch_max_bytes";
  '_batch_max_records'?: "batch_max_records";
  '_batch_max_delay_ms'?: "batch_max_delay_ms";
  '_throughput_max_bytes_per_second'?: "throughput_max_bytes_per_second";
  '_timestamping_uncapped'?: "timestamping_uncapped";
}
