// Settling in a cluster: there is no WAL file to read, so a sealed generation's segments are built
// from the committed frames the leader holds in memory (the same frames its group commits uploaded).
// The frames are copied into one buffer per task and the segments are built and uploaded by
// `settleBytes`: on a star, a piscina task on the settle thread (workers/settle-task.ts
// settleBytes). Built on the event loop, a generation of 64 MiB of 100 B appends held every ack for
// about 300 ms (checking each frame and indexing it), as the auditor's check of it did.

import type { SegmentSettler, SettleRequest } from '../core/ports.ts';
import type { SegmentMeta } from '../storage/metadata/metadata-store.ts';
import type { ObjectStore } from '../storage/objects/object-store.ts';
import { settleWalBytes } from '../workers/settle-task.ts';
import { SETTLE_TASK_BYTES_MAX } from '../config/limits.ts';


type Settled = { streamId: string; segment: SegmentMeta };

/** Builds and uploads one segment per requested stream from frames laid back to back, as a WAL file
 *  lays them. `bytes` is the caller's to give away (a worker may take it). */
export type SettleBytes = (bytes: Uint8Array, streams: SettleRequest[]) => Promise<Settled[]>;

/** On this thread, through `objects` (the seeded simulation's in-memory store). */
export function settleHere(objects: ObjectStore): SettleBytes {
  return (bytes, streams) => settleWalBytes(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length), streams, objects);
}

export class MemorySettler implements SegmentSettler {
  constructor(
    private readonly settleBytes: SettleBytes,
    /** The stream's frames of `generation` and earlier, from `fromSeq` on. */
    private readonly framesOf: (streamId: string, generation: number, fromSeq: number) => Uint8Array[],
  ) {}

  async settle(generation: number, streams: SettleRequest[]): Promise<Settled[]> {
    const out: Settled[] = [];
    let batch: { req: SettleRequest; frames: Uint8Array[] }[] = [];
    let batchBytes = 0;
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      // A buffer of its own (not a slice of Node's shared pool), so a worker can be given it.
      const bytes = new Uint8Array(batchBytes);
      let at = 0;
      for (const { frames } of batch) for (const f of frames) { bytes.set(f, at); at += f.length; }
      const reqs = batch.map((b) => b.req);
      batch = [];
      batchBytes = 0;
      out.push(...await this.settleBytes(bytes, reqs));
    };
    for (const req of streams) {
      const frames = this.framesOf(req.streamId, generation, req.fromSeq);
      if (frames.length === 0) continue;
      let n = 0;
      for (const f of frames) n += f.length;
      if (batchBytes > 0 && batchBytes + n > SETTLE_TASK_BYTES_MAX) await flush();
      batch.push({ req, frames });
      batchBytes += n;
    }
    await flush();
    return out;
  }
}
