// The object store as the main thread uses it (reads, trims, deletes): every call reports to the
// store's DependencyHealth, and a failure other than "no such object" becomes
// ObjectStoreUnavailableError, which the star answers as 503 (retry) rather than a 500 bug. A read
// without a bound of its own gets OBJECT_GET_MS_MAX.

import { OBJECT_GET_MS_MAX } from '../../config/limits.ts';
import type { DependencyHealth } from '../dependency-health.ts';
import { ObjectStoreUnavailableError, type ByteRange, type CallBound, type ObjectStore } from './object-store.ts';

export class TrackedObjectStore implements ObjectStore {
  private readonly getBound: CallBound;

  /** `getMsMax`: a read's bound when its caller gives none (OBJECT_GET_MS_MAX). */
  constructor(private readonly inner: ObjectStore, readonly health: DependencyHealth, getMsMax = OBJECT_GET_MS_MAX) {
    this.getBound = { deadlineMs: getMsMax };
  }

  put(key: string, body: Uint8Array, bound?: CallBound): Promise<void> { return this.track(this.inner.put(key, body, bound)); }
  get(key: string, range?: ByteRange, bound = this.getBound): Promise<Buffer> { return this.track(this.inner.get(key, range, bound)); }
  list(prefix: string, limit?: number): Promise<string[]> { return this.track(this.inner.list(prefix, limit)); }
  delete(key: string): Promise<void> { return this.track(this.inner.delete(key)); }
  deleteMany(keys: readonly string[]): Promise<string[]> { return this.track(this.inner.deleteMany(keys)); }

  private track<T>(op: Promise<T>): Promise<T> {
    return op.then((v) => {
      this.health.succeeded();
      return v;
    }, (err: unknown) => {
      // An absent object is an answer, not an outage (a segment trimmed under a read).
      if ((err as { code?: unknown } | null)?.code === 'ENOENT') {
        this.health.succeeded();
        throw err;
      }
      const why = err instanceof Error ? err.message : String(err);
      this.health.failed(why);
      throw new ObjectStoreUnavailableError(`the object store is unavailable: ${why}`, { cause: err });
    });
  }
}
