// The object store port: settled segments live here. `fs` is the embedded default; an `s3` backend
// (@aws-sdk/client-s3) implements the same interface for clusters.

export interface ByteRange { offset: number; length: number }

export interface ObjectStore {
  /** Writes the whole object durably before resolving. */
  put(key: string, body: Uint8Array): Promise<void>;
  /** Reads the object, or a byte range of it. Rejects with code 'ENOENT' when absent. */
  get(key: string, range?: ByteRange): Promise<Buffer>;
  list(prefix: string): Promise<string[]>;
  delete(key: string): Promise<void>;
}

export interface ObjectStoreConfig {
  backend: 'fs';
  dir: string;
}
