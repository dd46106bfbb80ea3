// The piscina pool: long-lived workers for batch parsing/encoding and segment building. Records never
// cross one task each (piscina costs ~100 µs a task here); a task is a whole batch or a whole segment.

import { Piscina } from 'piscina';
import { walFilePath } from '../storage/wal/wal-files.ts';
import type { SegmentChecker, SegmentSettler, SettleRequest } from '../core/ports.ts';
import type { ObjectStoreConfig } from '../storage/objects/object-store.ts';
import type { SettleBytesTask, SettleTask, SettledSegment } from './settle-task.ts';
import type { VerifyTask } from './verify-task.ts';
import type { SegmentMeta } from '../storage/metadata/metadata-store.ts';

/** Parse tasks queued beyond the running ones; past it a large append is answered 429. */
const PARSE_QUEUE_TASKS_MAX = 256;
const PARSE_THREADS_MAX = 2;
/** Settling runs one file at a time, on its own thread, so a burst of large appends cannot starve it. */
const SETTLE_QUEUE_TASKS_MAX = 16;
/** A parse thread past the first ends after this long without a task. */
const PARSE_THREAD_IDLE_MS = 60_000;
/** The settle thread ends after this long without a task (see createPool). */
const SETTLE_THREAD_IDLE_MS = 10_000;

export type PoolKind = 'parse' | 'settle';

/** `entry` is src/workers/boot.mjs, resolved by the composition root (so a bundled main finds it). */
export function createPool(kind: PoolKind, entry: URL, execArgv: string[]): Piscina {
  return new Piscina({
    filename: entry.href,
    execArgv, // empty: boot.mjs registers the TypeScript loader itself
    // The settle thread starts when there is something to settle and ends when there has been
    // nothing for a while: the heap it grew settling many streams goes back to the system with it
    // (about 60 MB after 50,000 one-segment streams). A settle does not hold up any ack.
    minThreads: kind === 'parse' ? 1 : 0,
    maxThreads: kind === 'parse' ? PARSE_THREADS_MAX : 1,
    maxQueue: kind === 'parse' ? PARSE_QUEUE_TASKS_MAX : SETTLE_QUEUE_TASKS_MAX,
    idleTimeout: kind === 'parse' ? PARSE_THREAD_IDLE_MS : SETTLE_THREAD_IDLE_MS,
  });
}

export class PoolSettler implements SegmentSettler {
  constructor(private readonly pool: Piscina, private readonly store: ObjectStoreConfig, private readonly walDir: string) {}

  async settle(fileNo: number, streams: SettleRequest[]): Promise<SettledSegment[]> {
    const task: SettleTask = { store: this.store, walPath: walFilePath(this.walDir, fileNo), streams };
    return (await this.pool.run(task, { name: 'settle' })) as SettledSegment[];
  }
}

/** A cluster star's settles (cluster/mem-settler.ts), on the settle thread: the frames' buffer moves
 *  to the worker rather than being copied again. */
export function poolSettleBytes(pool: Piscina, store: ObjectStoreConfig): (bytes: Uint8Array, streams: SettleRequest[]) => Promise<SettledSegment[]> {
  return async (bytes, streams) => {
    const task: SettleBytesTask = { store, bytes, streams };
    const own = bytes.buffer as ArrayBuffer; // MemorySettler allocates it for this task alone
    return (await pool.run(task, { name: 'settleBytes', transferList: [own] })) as SettledSegment[];
  };
}

/** The auditor's checks, on the settle thread: one group at a time (the auditor awaits each), queued
 *  behind any settle, so verifying never holds an ack nor races a settle for the disk. */
export class PoolSegmentChecker implements SegmentChecker {
  constructor(private readonly pool: Piscina, private readonly store: ObjectStoreConfig) {}

  async check(segs: SegmentMeta[]): Promise<(string | undefined)[]> {
    const task: VerifyTask = {
      store: this.store,
      segs: segs.map((seg) => ({ object_key: seg.object_key, size_bytes: seg.size_bytes, footer_offset: seg.footer_offset, footer_bytes: seg.footer_bytes })),
    };
    return (await this.pool.run(task, { name: 'verifySegments' })) as (string | undefined)[];
  }
}
