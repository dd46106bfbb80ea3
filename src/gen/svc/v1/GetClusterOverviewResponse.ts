// Original file: proto/svc/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface GetClusterOverviewResponse {
  /**
   * Members of the cluster.
   */
  'star_count'?: (number);
  /**
   * Buckets counted (bounded scan).
   */
  'bucket_count'?: (number | string | Long);
  /**
   * True when bucket_count stopped at its cap.
   */
  'bucket_count_capped'?: (boolean);
  /**
   * Streams counted across the scanned buckets (bounded scan).
   */
  'stream_count'?: (number | string | Long);
  /**
   * True when stream_count stopped at its cap.
   */
  'stream_count_capped'?: (boolean);
}

export interface GetClusterOverviewResponse__Output {
  /**
   * Members of the cluster.
   */
  'star_count': (number);
  /**
   * Buckets counted (bounded scan).
   */
  'bucket_count': (number);
  /**
   * True when bucket_count stopped at its cap.
   */
  'bucket_count_capped': (boolean);
  /**
   * Streams counted across the scanned buckets (bounded scan).
   */
  'stream_count': (number);
  /**
   * True when stream_count stopped at its cap.
   */
  'stream_count_capped': (boolean);
}
