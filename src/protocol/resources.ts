// The service's resources as the wire shows them (spec: Resources): storage classes, policies,
// stream and bucket configs and what a create or a patch sends, a stream's and a bucket's info, the
// config field lists, listing pages and the token exchange. Part of the protocol leaf: no imports,
// so the server, the Gateway and the browser-safe client share one definition.

export type StorageClass = 'standard' | 'express';
export type ProducerPolicy = 'any' | 'fenced';
export type TimestampingMode = 'client-prefer' | 'client-require' | 'arrival';

/** Every value of each enum, in the spec's order (a config field holding another is refused). */
export const STORAGE_CLASSES: readonly StorageClass[] = ['standard', 'express'];
export const PRODUCER_POLICIES: readonly ProducerPolicy[] = ['any', 'fenced'];
export const TIMESTAMPING_MODES: readonly TimestampingMode[] = ['client-prefer', 'client-require', 'arrival'];

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

/** Append only: packed metadata rows store a config's values in this order (storage/metadata/packed-row.ts). */
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

/** Stream config as a caller sends it (create, patch): an empty-string enum defers to the bucket's
 *  defaults, and a field left out copies them. */
export type StreamConfigInput = { [K in keyof StreamConfig]?: StreamConfig[K] | '' };

export interface StreamCreate extends StreamConfigInput {
  creation_token?: string;
}

export interface BucketCreate extends Partial<BucketConfig> {
  creation_token?: string;
}

/**
 * A stream (spec: Stream). `K` is how its key is held: the server keeps a string (raw bytes escaped,
 * key-bytes.ts); the client hands out text when the key's bytes are UTF-8, else the bytes. On JSON
 * the key rides `key`, or `key_b64` when its bytes are not UTF-8 (json.ts).
 */
export interface StreamInfo<K = string> extends StreamConfig {
  stream_id: string;
  bucket: string;
  key: K;
  created_at_unix_ms: number;
}

/** GetStream adds the installed fencing token ('' when unfenced); listings leave it out. */
export interface StreamDetail<K = string> extends StreamInfo<K> {
  fencing_token: string;
}

/** One page of a listing: the items and the cursor of the next page ('' when the listing is
 *  complete). On JSON the items ride `streams` or `buckets` (json.ts). */
export interface ListPage<T> {
  items: T[];
  next: string;
}

/** The api-key exchange's ask (spec: Api-key exchange): exactly one of bucket or scope. */
export interface ExchangeRequest {
  key_id: string;
  secret: string;
  bucket?: string;
  scope?: string;
  /** Absent (or 0): the default, 15 minutes; clamped to an hour. */
  ttl_seconds?: number;
}

/** The exchange's answer (spec: Token). */
export interface ExchangedToken {
  token: string;
  expires_at_unix_ms: number;
}
