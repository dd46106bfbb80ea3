// The piscina pool: long-lived workers for batch parsing/encoding and segment building. Records never
// cross one task each (piscina costs ~100 µs a task here); a task is a whole batch or a whole segment.

import { Piscina } from 'piscina';
import type { SegmentSettler, StreamFrames } from '../core/ports.ts';
import type { SegmentMeta } from '../storage/metadata/metadata-store.ts';
import type { ObjectStoreConfig } from '../storage/objects/object-store.ts';
import type { SettleTask } from './settle-task.ts';
import { frameInfo } from '../storage/format/record-codec.ts';

/** One object per stream range, named by its first seq_num: re-settling after a crash overwrites it. */
function segmentKey(streamId: string, firstFrame: Uint8Array): string {
  return `streams/${streamId}/${String(frameInfo(firstFrame).firstSeq).padStart(20, '0')}.seg`;
}

/** Tasks queued beyond the running ones; settling is background work and never needs more. */
const POOL_QUEUE_TASKS_MAX = 1024;
const POOL_THREADS_MAX = 2;

export function createPool(execArgv: string[]): Piscina {
  return new Piscina({
    execArgv, // empty: boot.mjs registers the TypeScript loader itself
    filename: new URL('./boot.mjs', import.meta.url).href,
    minThreads: 1,
    maxThreads: POOL_THREADS_MAX,
    maxQueue: POOL_QUEUE_TASKS_MAX,
    idleTimeout: 60_000,
  });
}

export class PoolSettler implements SegmentSettler {
  constructor(private readonly pool: Piscina, private readonly store: ObjectStoreConfig) {}

  async settle(_fileNo: number, batches: StreamFrames[]): Promise<SegmentMeta[]> {
    return Promise.all(batches.map((b) => {
      const task: SettleTask = {
        store: this.store,
        objectKey: segmentKey(b.streamId, b.frames[0]),
        frames: b.frames,
      };
      return this.pool.run(task, { name: 'settle' }) as Promise<SegmentMeta>;
    }));
  }
}
