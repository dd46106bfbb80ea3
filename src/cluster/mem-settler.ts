// Settling in a cluster: there is no WAL file to read, so a sealed generation's segments are built
// from the committed frames the leader holds in memory (the same frames its group commits uploaded).

import type { SegmentSettler, SettleRequest } from '../core/ports.ts';
import type { SegmentMeta } from '../storage/metadata/metadata-store.ts';
import type { ObjectStore } from '../storage/objects/object-store.ts';
import { settleWalBytes } from '../workers/settle-task.ts';

export class MemorySettler implements SegmentSettler {
  constructor(
    private readonly objects: ObjectStore,
    /** The stream's frames of `generation` and earlier, from `fromSeq` on. */
    private readonly framesOf: (streamId: string, generation: number, fromSeq: number) => Buffer[],
  ) {}

  async settle(generation: number, streams: SettleRequest[]): Promise<{ streamId: string; segment: SegmentMeta }[]> {
    const out: { streamId: string; segment: SegmentMeta }[] = [];
    for (const r of streams) {
      const frames = this.framesOf(r.streamId, generation, r.fromSeq);
      if (frames.length === 0) continue;
      out.push(...await settleWalBytes(Buffer.concat(frames), [r], this.objects));
    }
    return out;
  }
}
