// What ClusterService (cluster-service.ts) needs of the cluster's shared stores, named by what it
// does with them rather than by the classes that provide them in production: PostgresCluster (the
// membership, lease and chunk tables), PostgresMetadataStore (the stream and bucket rows) and
// ClusterCommitLog (the group commits). Those classes satisfy these ports unchanged (server.ts hands
// them over as they are); the seeded simulation (test/sim/cluster-store.ts) supplies in-memory ones.
// Types only: nothing here runs.

import type { BucketMeta, MetadataStore, StreamMeta } from '../storage/metadata/metadata-store.ts';
import type { ChunkRow, LeaseHolder, StarRow, TakeResult, VacantUnsettled } from '../storage/metadata/postgres-cluster.ts';
import type { ChunkObjectIndex } from './chunk-gc.ts';

/** A lease as a star holds it: renewed and released only at this epoch. */
export interface LeaseRef { bucket: string; key: string; epoch: number }

/** One star's view of the cluster's tables (PostgresCluster): its membership row and the others',
 *  the per-stream lease rows (epochs, expiry by the store's clock), and the committed, unsettled
 *  chunks of each stream. Each method is one statement of the store, answered for this star. */
export interface ClusterStore extends ChunkObjectIndex {
  /** Reports this star alive now, and whether it reaches the object store. */
  heartbeat(objectsOk?: boolean): Promise<void>;
  /** Every star's membership row, in star id order. */
  stars(): Promise<StarRow[]>;
  /** Sets a star's membership state (a decommissioned star stays so); false when there is no such star. */
  setState(starId: string, state: 'draining' | 'decommissioned'): Promise<boolean>;
  /** This star leaves the live membership at once (its heartbeat set long past). */
  leave(): Promise<void>;
  /** Unexpired leases per holder. */
  leaseCounts(): Promise<Map<string, number>>;
  /** Takes (bucket, key) when it is free, has run out, or is this star's own: the epoch rises by one.
   *  Otherwise answers who holds it. */
  take(bucket: string, key: string, ttlMs: number): Promise<TakeResult>;
  /** Who holds (bucket, key), at which epoch, for how long more, with the holder's membership row. */
  holderOf(bucket: string, key: string): Promise<LeaseHolder | undefined>;
  /** Pushes out the leases this star holds at these epochs; answers the indexes of those it still holds. */
  renew(leases: LeaseRef[], ttlMs: number): Promise<Set<number>>;
  /** Gives leases up at once (held by this star at these epochs): the row keeps its epoch, names no holder. */
  release(leases: LeaseRef[]): Promise<void>;
  /** A stream's committed chunks ending past `fromSeq`, in order. */
  chunksOf(streamId: string, fromSeq: number): Promise<ChunkRow[]>;
  /** A stream's newest chunk (undefined: none). */
  lastChunkOf(streamId: string): Promise<ChunkRow | undefined>;
  /** Up to `limit` streams after `after` (address order) with unsettled chunks and no unexpired lease. */
  vacantUnsettled(after: VacantUnsettled | undefined, limit: number): Promise<VacantUnsettled[]>;
  /** Forgets a deleted stream's chunks. */
  dropChunks(streamId: string): Promise<void>;
}

/** The stream and bucket rows as the cluster reads them straight from the shared store. */
export interface ClusterMetadata extends Pick<MetadataStore, 'readStream' | 'readBucket'> {
  listBucketRows(startAfter: string, limit: number): Promise<BucketMeta[]>;
  listStreamRows(bucket: string, startAfter: string, limit: number): Promise<StreamMeta[]>;
  bucketHasStreams(bucket: string): Promise<boolean>;
}

/** The commit log, as the leadership tells it a stream was (re)loaded: what it queued of the stream
 *  before never commits. */
export interface ClusterLog {
  clear(streamId: string): void;
}
