// Segments no durable row points at any more (trimmed, aged out, settled for a deleted stream) are
// deleted from the object store only after the read grace (at least twice a read plan's validity): a
// presigned URL vended before the trim must keep answering until it expires (it answered 404 right
// after a trim). This is the auditor's `deletions` queue (core/auditor.ts). A restart forgets it;
// what it held stays in the store as unreferenced objects, never as missing ones.

import type { ObjectStore } from '../storage/objects/object-store.ts';
import type { Clock } from './ports.ts';

/** Deletions waiting out their grace; past this many, the oldest is deleted at once (logged). */
const DEFERRED_DELETES_MAX = 1_000_000;

/** One deletion waiting: the object, its stream, and when it was released and may go. */
export interface DeferredDelete { key: string; dueMs: number; enqueuedMs: number; bucket: string; streamKey: string }

export class ObjectReclaimer {
  private queue: DeferredDelete[] = [];
  private head = 0;
  private warnedFull = false;

  constructor(
    private readonly objects: ObjectStore,
    private readonly clock: Clock,
    private readonly graceMs: number,
    private readonly logError?: (msg: string) => void,
  ) {}

  get pending(): number { return this.queue.length - this.head; }

  /** Deletes `key` (an object of stream bucket/streamKey) once the grace has passed (at the next run()
   *  after it). */
  drop(key: string, bucket = '', streamKey = ''): void {
    if (this.graceMs <= 0) { this.remove(key); return; }
    if (this.pending >= DEFERRED_DELETES_MAX) {
      if (!this.warnedFull) this.logError?.(`${DEFERRED_DELETES_MAX} segment deletions are waiting out the read-plan validity; deleting the oldest early`);
      this.warnedFull = true;
      this.remove(this.queue[this.head++].key);
    }
    const now = this.clock.nowMs();
    this.queue.push({ key, dueMs: now + this.graceMs, enqueuedMs: now, bucket, streamKey });
  }

  /** The oldest `limit` deletions waiting. */
  peek(limit: number): readonly DeferredDelete[] {
    return this.queue.slice(this.head, this.head + limit);
  }

  /** Deletes every object whose grace has passed. */
  run(): void {
    const now = this.clock.nowMs();
    while (this.head < this.queue.length && this.queue[this.head].dueMs <= now) this.remove(this.queue[this.head++].key);
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    if (this.pending < DEFERRED_DELETES_MAX / 2) this.warnedFull = false;
  }

  private remove(key: string): void {
    void this.objects.delete(key).catch(() => undefined); // already gone is fine; a failure leaves garbage, not loss
  }
}
