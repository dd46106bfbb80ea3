// Segments no durable row points at any more (trimmed, aged out, settled for a deleted stream) are
// deleted from the object store only after a grace period as long as a read plan's validity: a
// presigned URL vended before the trim must keep answering until it expires (it answered 404 right
// after a trim). A restart forgets the queue; what it held stays in the store as unreferenced
// objects, never as missing ones.

import type { ObjectStore } from '../storage/objects/object-store.ts';
import type { Clock } from './ports.ts';

/** Deletions waiting out their grace; past this many, the oldest is deleted at once (logged). */
const DEFERRED_DELETES_MAX = 1_000_000;

export class ObjectReclaimer {
  private queue: { key: string; dueMs: number }[] = [];
  private head = 0;
  private warnedFull = false;

  constructor(
    private readonly objects: ObjectStore,
    private readonly clock: Clock,
    private readonly graceMs: number,
    private readonly logError?: (msg: string) => void,
  ) {}

  get pending(): number { return this.queue.length - this.head; }

  /** Deletes `key` once the grace has passed (at the next run() after it). */
  drop(key: string): void {
    if (this.graceMs <= 0) { this.remove(key); return; }
    if (this.pending >= DEFERRED_DELETES_MAX) {
      if (!this.warnedFull) this.logError?.(`${DEFERRED_DELETES_MAX} segment deletions are waiting out the read-plan validity; deleting the oldest early`);
      this.warnedFull = true;
      this.remove(this.queue[this.head++].key);
    }
    this.queue.push({ key, dueMs: this.clock.nowMs() + this.graceMs });
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
