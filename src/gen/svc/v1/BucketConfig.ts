// Original file: proto/svc/v1/types.proto

import type { StreamConfig as _svc_v1_StreamConfig, StreamConfig__Output as _svc_v1_StreamConfig__Output } from '../../svc/v1/StreamConfig.ts';

/**
 * A bucket's caller-writable configuration. In CreateBucket unset fields take the service
 * defaults; UpdateBucket replaces the configuration whole (unset fields return to the defaults).
 * Changes reach only streams created afterwards.
 */
export interface BucketConfig {
  /**
   * Storage location label.
   */
  'location'?: (string);
  /**
   * An append to a missing stream creates it from the defaults (needs only the append grant).
   */
  'create_stream_on_append'?: (boolean);
  /**
   * A read of a missing stream creates it from the defaults.
   */
  'create_stream_on_read'?: (boolean);
  /**
   * Configuration handed to new streams (the spec's `default_*` fields).
   */
  'default_stream_config'?: (_svc_v1_StreamConfig | null);
  '_location'?: "location";
  '_create_stream_on_append'?: "create_stream_on_append";
  '_create_stream_on_read'?: "create_stream_on_read";
}

/**
 * A bucket's caller-writable configuration. In CreateBucket unset fields take the service
 * defaults; UpdateBucket replaces the configuration whole (unset fields return to the defaults).
 * Changes reach only streams created afterwards.
 */
export interface BucketConfig__Output {
  /**
   * Storage location label.
   */
  'location'?: (string);
  /**
   * An append to a missing stream creates it from the defaults (needs only the append grant).
   */
  'create_stream_on_append'?: (boolean);
  /**
   * A read of a missing stream creates it from the defaults.
   */
  'create_stream_on_read'?: (boolean);
  /**
   * Configuration handed to new streams (the spec's `default_*` fields).
   */
  'default_stream_config': (_svc_v1_StreamConfig__Output | null);
  '_location'?: "location";
  '_create_stream_on_append'?: "create_stream_on_append";
  '_create_stream_on_read'?: "create_stream_on_read";
}
