// The metadata port: buckets, streams (config, fencing token, trim watermark, settled chain), deleted
// addresses and credentials. `local` keeps it in the data dir; a `postgres` backend implements the
// same interface for a cluster. Values are plain JSON-able objects so any backend can store them.

import { packRow, unpackRow, type PackedRow } from './packed-row.ts';

export interface SegmentMeta {
  object_key: string;
  first_seq: number;
  end_seq: number;
  min_ts: number;
  max_ts: number;
  /** Content bytes (bodies plus headers) of the records inside, for retention by bytes. */
  content_bytes: number;
  size_bytes: number;
  footer_offset: number;
  footer_bytes: number;
}

export interface StreamMeta {
  stream_id: string;
  bucket: string;
  key: string;
  config: Record<string, unknown>;
  created_at_unix_ms: number;
  creation_token: string;
  fencing_token: string;
  trim_seq: number;
  /** End of the settled prefix: every record below it lives in `segments` (or was trimmed). */
  settled_end_seq: number;
  /** Timestamp of the record just below settled_end_seq (0 when none). */
  settled_end_ts: number;
  segments: SegmentMeta[];
}

export interface BucketMeta {
  name: string;
  config: Record<string, unknown>;
  created_at_unix_ms: number;
  creation_token: string;
}

export interface CredentialMeta {
  key_id: string;
  [field: string]: unknown;
}

/** What both planes (metadata and object storage) record at a cluster's first start, so a star can
 *  tell when one was wiped without the other, or they hold different clusters (spec: Versioning). */
export interface StoredFormat {
  format_version: number;
  cluster_id: string;
  created_unix_ms: number;
}

/** The stream rows a store loaded, packed (packed-row.ts): a star starts a million of them at rest
 *  without building a million objects. */
export interface StreamRows {
  readonly size: number;
  forEach(fn: (bucket: string, key: string, packed: PackedRow) => void): void;
}

/** Stream rows from objects (a store that reads them as objects, tests). */
export function streamRowsOf(rows: readonly StreamMeta[]): StreamRows {
  const packed = rows.map((r) => [r.bucket, r.key, packRow(r)] as const);
  return {
    size: packed.length,
    forEach: (fn) => { for (const [bucket, key, p] of packed) fn(bucket, key, p); },
  };
}

/** Stream rows unpacked into objects (tools and tests; a star never needs all of them at once). */
export function unpackStreamRows(rows: StreamRows): StreamMeta[] {
  const out: StreamMeta[] = [];
  rows.forEach((bucket, key, packed) => out.push(unpackRow(bucket, key, packed)));
  return out;
}

export interface MetaState {
  /** Absent until the first start writes it (and in metadata written before stores carried it). */
  format?: StoredFormat;
  buckets: BucketMeta[];
  streams: StreamRows;
  /** Addresses (bucket, key) whose stream was deleted and not re-created. */
  deleted: { bucket: string; key: string }[];
  credentials: CredentialMeta[];
}

export interface MetadataStore {
  load(): Promise<MetaState>;
  /** Records the stored format unless one is recorded already; resolves with the one that stands
   *  (several stars may make their first start at once: the first write wins). */
  putFormat(f: StoredFormat): Promise<StoredFormat>;
  putBucket(b: BucketMeta): Promise<void>;
  deleteBucket(name: string): Promise<void>;
  putStream(s: StreamMeta): Promise<void>;
  /** Several stream rows in one durable step (a WAL file settling touches many streams). */
  putStreams(s: StreamMeta[]): Promise<void>;
  deleteStream(bucket: string, key: string): Promise<void>;
  putCredential(c: CredentialMeta): Promise<void>;
  /** A stream's row as the store holds it now, and whether its address is recorded as deleted: what
   *  the star reads back after a failed write, whose outcome it cannot know (see Star.reconcile). */
  readStream(bucket: string, key: string): Promise<{ row?: StreamMeta; deleted: boolean }>;
  /** The stream's row as this store holds it in memory, packed, if it does (the local store): a star
   *  putting an idle stream at rest keeps this same string rather than a second copy of it. */
  packedStream?(bucket: string, key: string): PackedRow | undefined;
  /** A bucket's row as the store holds it now. */
  readBucket(name: string): Promise<BucketMeta | undefined>;
  /** One credential by its key id (a secret check reads one row, not the whole table). */
  readCredential(keyId: string): Promise<CredentialMeta | undefined>;
  listCredentials(): Promise<CredentialMeta[]>;
  /** False while the store is unreachable or its last write failed; it comes back by itself (the
   *  postgres store reconnects, the local journal cuts its torn tail and probes) and is true again
   *  once a write can be made. /readyz reports it. */
  healthy(): boolean;
  close(): Promise<void>;
}

/** A write the metadata store could not make, or refuses while it is down: the star answers 503 and
 *  reports not ready until the store is back. */
export class MetadataUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MetadataUnavailableError';
  }
}
