// The object store port: settled segments live here. `fs` is the embedded default; an `s3` backend
// (@aws-sdk/client-s3) implements the same interface for clusters.

export interface ByteRange { offset: number; length: number }

/** A call's bound in all, its attempts included, where its caller has a better answer than waiting
 *  out the store's own (a remote store's; a local disk's calls end by themselves and ignore it). */
export interface CallBound { deadlineMs: number }

export interface ObjectStore {
  /** Writes the whole object durably before resolving. */
  put(key: string, body: Uint8Array, bound?: CallBound): Promise<void>;
  /** Reads the object, or a byte range of it. Rejects with code 'ENOENT' when absent. */
  get(key: string, range?: ByteRange, bound?: CallBound): Promise<Buffer>;
  /** Keys under `prefix`, at most `limit` of them when given. */
  list(prefix: string, limit?: number): Promise<string[]>;
  delete(key: string): Promise<void>;
  /** Deletes many objects, in as few requests as the backend allows (S3: one per 1000 keys);
   *  answers the keys it deleted (an absent one counts) and leaves out those it could not. */
  deleteMany(keys: readonly string[]): Promise<string[]>;
}

/** DeleteObjects takes at most this many keys a request (S3's own limit). */
export const DELETE_MANY_KEYS_MAX = 1000;

export interface FsObjectStoreConfig {
  backend: 'fs';
  dir: string;
}

export interface S3ObjectStoreConfig {
  backend: 's3';
  bucket: string;
  /** Prepended to every object key (`''` for none; end it with `/` for a folder). */
  prefix: string;
  region: string;
  /** An S3-protocol endpoint other than AWS's (MinIO, s3rver); '' for AWS. */
  endpoint: string;
  /** Bucket in the path rather than the host name (what most S3-protocol servers need). */
  forcePathStyle: boolean;
  /** One request's bound (S3_REQUEST_MS_MAX when absent); a test of a server that never answers
   *  sets less. */
  requestMsMax?: number;
}

/** Plain data, so the settle workers can open the same store. */
export type ObjectStoreConfig = FsObjectStoreConfig | S3ObjectStoreConfig;

/** An object store call failed for a reason other than a missing object (the store is down, slow
 *  past its timeout, refusing): the star answers 503 and retries what it must (settling). */
export class ObjectStoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ObjectStoreUnavailableError';
  }
}
