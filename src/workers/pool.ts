// The piscina pool: long-lived workers for batch parsing/encoding and segment building. Records never
// cross one task each (piscina costs ~100 µs a task here); a task is a whole batch or a whole segment.

import { Piscina } from 'piscina';
import { walFilePath } from '../storage/wal/wal-files.ts';
import type { SegmentSettler, SettleRequest } from '../core/ports.ts';
import type { ObjectStoreConfig } from '../storage/objects/object-store.ts';
import type { SettleTask, SettledSegment } from './settle-task.ts';

/** Tasks queued beyond the running ones; settling is background work and never needs more. */
const POOL_QUEUE_TASKS_MAX = 1024;
const POOL_THREADS_MAX = 2;

export function createPool(execArgv: string[]): Piscina {
  return new Piscina({
    filename: new URL('./boot.mjs', import.meta.url).href,
    execArgv, // empty: boot.mjs registers the TypeScript loader itself
    minThreads: 1,
    maxThreads: POOL_THREADS_MAX,
    maxQueue: POOL_QUEUE_TASKS_MAX,
    idleTimeout: 60_000,
  });
}

export class PoolSettler implements SegmentSettler {
  constructor(private readonly pool: Piscina, private readonly store: ObjectStoreConfig, private readonly walDir: string) {}

  async settle(fileNo: number, streams: SettleRequest[]): Promise<SettledSegment[]> {
    const task: SettleTask = { store: this.store, walPath: walFilePath(this.walDir, fileNo), streams };
    return (await this.pool.run(task, { name: 'settle' })) as SettledSegment[];
  }
}
