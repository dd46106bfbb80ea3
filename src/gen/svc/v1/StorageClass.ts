// Original file: proto/svc/v1/types.proto

/**
 * Storage class of a stream.
 */
export const StorageClass = {
  /**
   * Not set: defer to the bucket default (create) or keep the current value (reconfigure).
   */
  STORAGE_CLASS_UNSPECIFIED: 'STORAGE_CLASS_UNSPECIFIED',
  /**
   * Durable in the standard object store.
   */
  STORAGE_CLASS_STANDARD: 'STORAGE_CLASS_STANDARD',
  /**
   * Low-latency: the WAL lives in the express bucket.
   */
  STORAGE_CLASS_EXPRESS: 'STORAGE_CLASS_EXPRESS',
} as const;

/**
 * Storage class of a stream.
 */
export type StorageClass =
  /**
   * Not set: defer to the bucket default (create) or keep the current value (reconfigure).
   */
  | 'STORAGE_CLASS_UNSPECIFIED'
  | 0
  /**
   * Durable in the standard object store.
   */
  | 'STORAGE_CLASS_STANDARD'
  | 1
  /**
   * Low-latency: the WAL lives in the express bucket.
   */
  | 'STORAGE_CLASS_EXPRESS'
  | 2

/**
 * Storage class of a stream.
 */
export type StorageClass__Output = typeof StorageClass[keyof typeof StorageClass]
