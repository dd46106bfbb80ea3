// The service's resources as the wire shows them (spec: Resources): storage classes, policies,
// stream and bucket configs, a bucket's info, and the config field lists. Part of the protocol leaf:
// no imports, so the server, the Gateway and the browser-safe client share one definition.

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

export const STREAM_CONFIG_KEYS: readonly (keyof StreamConfig)[] = [
  'class', 'producer_policy', 'retention_max_age_ms', 'retention_max_bytes', 'batch_max_bytes',
  'batch_max_records', 'batch_max_delay_ms', 'throughput_max_bytes_per_second', 'timestamping_mode',
  'timestamping_uncapped',
];

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

export const BUCKET_CONFIG_KEYS: readonly (keyof BucketConfig)[] = [
  'location', 'create_stream_on_append', 'create_stream_on_read', 'default_class', 'default_producer_policy',
  'default_retention_max_age_ms', 'default_retention_max_bytes', 'default_batch_max_bytes',
  'default_batch_max_records', 'default_batch_max_delay_ms', 'default_throughput_max_bytes_per_second',
  'default_timestamping_mode', 'default_timestamping_uncapped',
];

export interface BucketInfo extends BucketConfig {
  name: string;
  created_at_unix_ms: number;
  creation_token: string;
}
