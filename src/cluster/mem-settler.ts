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
import { runsOf } from '../core/runs.ts';


type Settled = { streamId: string; segment: SegmentMeta };

/** Builds and uploads one segment per requested stream from frames laid back to back, as a WAL file
 *  lays them. `bytes` is the caller's to give away (a worker may take it). */
export type SettleBytes = (bytes: Uint8Array, streams: SettleRequest[]) => Promise<Settled[]>;

/** On this thread, through `objects` (the seeded simulation's in-memory store). */
export function settleHere(objects: ObjectStore): SettleBytes {
  return (bytes, streams) => settleWalBytes(bytes, streams, objects);
}

export class MemorySettler implements SegmentSettler {
  constructor(
    private readonly settleBytes: SettleBytes,
    /** The stream's frames of `generation` and earlier, from `fromSeq` on. */
    private readonly framesOf: (streamId: string, generation: number, fromSeq: number) => Uint8Array[],
  ) {}

  async settle(generation: number, streams: SettleRequest[]): Promise<Settled[]> {
    const held: { req: SettleRequest; frames: Uint8Array[]; bytes: number }[] = [];
    for (const req of streams) {
      const frames = this.framesOf(req.streamId, generation, req.fromSeq);
      let bytes = 0;
      for (const f of frames) bytes += f.length;
      if (frames.length > 0) held.push({ req, frames, bytes });
    }
    const out: Settled[] = [];
    for (const [start, end] of runsOf(held, (h) => h.bytes, SETTLE_TASK_BYTES_MAX)) {
      const run = held.slice(start, end);
      // A buffer of its own (not a slice of Node's shared pool), so a worker can be given it.
      const bytes = new Uint8Array(run.reduce((n, h) => n + h.bytes, 0));
      let at = 0;
      for (const { frames } of run) for (const f of frames) { bytes.set(f, at); at += f.length; }
      out.push(...await this.settleBytes(bytes, run.map((h) => h.req)));
    }
    return out;
  }
}
