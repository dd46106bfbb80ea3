// Collecting a cluster's chunk objects: each group commit writes one object holding every stream's
// new frames (commit-log.ts); once every chunk in it has settled into segments (or its stream was
// deleted) and it is older than CHUNK_OBJECT_GRACE_MS, it is deleted from the object store, then
// forgotten in PostgreSQL. In that order, so a delete that fails (or a star killed between the two)
// leaves the row, and the object is tried again; deleting twice is harmless, as two stars collecting
// at once may.
//
// One run takes batches of CHUNK_GC_BATCH_MAX until one comes back short, for CHUNK_GC_RUN_MS_MAX at
// most, each batch deleted with one DeleteObjects request. A single batch every CHUNK_GC_MS, one
// DeleteObject each (the old rule), collected 25.6 objects a second against the 60-140 a star under
// sustained appends writes, so the bucket and the table grew without bound; and one DeleteObject per
// key, 16 at a time, cost the event loop enough (the SDK's work per request) to hold acks 1.5 s.

import { CHUNK_GC_BATCH_MAX, CHUNK_GC_RUN_MS_MAX, CHUNK_OBJECT_GRACE_MS } from '../config/limits.ts';
import type { Clock } from '../core/ports.ts';

/** Where the chunk objects are indexed (storage/metadata/postgres-cluster.ts). */
export interface ChunkObjectIndex {
  /** Up to `limit` chunk objects older than `graceMs` that no chunk row names any more. */
  unreferencedChunkObjects(graceMs: number, limit: number): Promise<string[]>;
  /** Forgets objects that were deleted from the object store. */
  forgetChunkObjects(keys: string[]): Promise<void>;
}

/** One collection run; answers how many objects it deleted. `deleteMany` answers the keys it
 *  deleted (ObjectStore.deleteMany: one DeleteObjects request per batch on S3). */
export async function collectChunkObjects(index: ChunkObjectIndex, deleteMany: (keys: string[]) => Promise<string[]>, clock: Clock): Promise<number> {
  const startMs = clock.nowMs();
  let collected = 0;
  for (;;) {
    const keys = await index.unreferencedChunkObjects(CHUNK_OBJECT_GRACE_MS, CHUNK_GC_BATCH_MAX);
    const deleted = keys.length > 0 ? await deleteMany(keys) : [];
    await index.forgetChunkObjects(deleted);
    collected += deleted.length;
    // A short batch: nothing more is due. A failed delete: the store is not answering; the next run
    // tries again.
    if (keys.length < CHUNK_GC_BATCH_MAX || deleted.length < keys.length || clock.nowMs() - startMs >= CHUNK_GC_RUN_MS_MAX) return collected;
  }
}
