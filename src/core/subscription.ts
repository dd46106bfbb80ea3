// A live subscription: pull-paced (the transport asks for the next batch only when the previous one
// is written), pending at the tail, ending with an error when the stream is deleted or trimmed under
// the cursor. Subscribers caught up at the same position share one batch object, so a transport can
// encode each committed batch once for all of them. Besides the promise-based next(), a fan-out can
// drive it without a promise per batch: poll() hands over a batch already in memory synchronously,
// atTail() says nothing is left but to wait, and onReady() parks the subscription at the stream's tail
// with a plain callback (StreamState.park: an array slot, no Set entry or closure per wait).

import { SSE_BATCH_BYTES_MAX, SSE_BATCH_RECORDS_MAX } from '../config/limits.ts';
import { forEachRecord } from '../storage/format/record-codec.ts';
import { ServiceError } from './errors.ts';
import type { PageReader } from './page-reader.ts';
import type { Subscription, SubscriptionBatch } from './service-api.ts';
import type { MemBatch, StreamState, TailParker } from './stream-state.ts';
import type { SequencedRecord } from './types.ts';

const shared = new WeakMap<MemBatch, SubscriptionBatch>();
/** The batch asked for last: a fan-out hands one batch to thousands of subscribers in a row, so this
 *  one-entry memo answers nearly every lookup without the WeakMap's hashing (held batches carry no
 *  field for it: they are kept by the million, see HeldBatch). */
let lastMem: MemBatch | undefined;
let lastShared: SubscriptionBatch | undefined;

/** The one batch object every subscriber at `b.firstSeq` receives. */
function sharedBatch(b: MemBatch): SubscriptionBatch {
  if (b === lastMem) return lastShared!;
  let v = shared.get(b);
  if (!v) {
    const records: SequencedRecord[] = [];
    forEachRecord(b.frame, 0, 0, (r) => { records.push(r); return true; });
    v = { records, tail: { seq_num: b.firstSeq + b.count, timestamp_ms: b.maxTs } };
    shared.set(b, v);
  }
  lastMem = b;
  lastShared = v;
  return v;
}

export class LiveSubscription implements Subscription, TailParker {
  private closed = false;
  /** next()'s tail waiter while it waits. */
  private wake: (() => void) | undefined;
  /** onReady's callback while parked. */
  private readyCb: (() => void) | undefined;
  parkedAt = -1;

  constructor(
    private readonly st: StreamState,
    private seq: number,
    private readonly reader: PageReader,
    private readonly onClose: () => void,
  ) {
    st.subscribers += 1;
  }

  get cursor(): number { return this.seq; }

  /** The stream's state: every subscription of one stream shares it (see Subscription.shareKey). */
  get shareKey(): object { return this.st; }

  /** Another subscription of this stream at this cursor, or at the committed tail when the cursor is
   *  past it (a start not reached yet must not hold back others waiting at the tail); closed on its
   *  own, it counts against nothing but the stream's subscriber count (which keeps the stream from
   *  going dormant while it is open). */
  fork(): LiveSubscription {
    return new LiveSubscription(this.st, Math.min(this.seq, this.st.tail), this.reader, () => {});
  }

  /** Moves the cursor forward to `seq`, a batch boundary a fork of this stream delivered through. */
  advanceTo(seq: number): void {
    if (seq < this.seq) throw new ServiceError('internal', `a subscription cannot move back from ${this.seq} to ${seq}`);
    this.seq = seq;
  }

  async next(): Promise<SubscriptionBatch> {
    for (;;) {
      if (this.closed) throw new ServiceError('unavailable', 'subscription closed');
      const st = this.st;
      if (st.evicted) throw new ServiceError('unavailable', 'the stream moved to another star; reconnect with the cursor');
      if (st.deleted) throw new ServiceError('not_found', 'the stream was deleted');
      if (this.seq < st.trimSeq) throw new ServiceError('trimmed', `the stream was trimmed past the cursor ${this.seq}`);
      if (this.seq < st.tail) {
        const batch = await this.fetch();
        if (batch.records.length) {
          this.seq = batch.tail.seq_num;
          return batch;
        }
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        st.addWaiter(resolve);
      });
      this.wake = undefined;
    }
  }

  /** The committed in-memory batch that starts at the cursor, shared with every subscriber there,
   *  or undefined when there is none whole in memory (a history read or an error is next()'s job). */
  private memBatch(): SubscriptionBatch | undefined {
    const st = this.st;
    if (this.seq >= st.tail || this.seq < st.settledEnd) return undefined;
    // A caught-up subscriber wants the newest batch: looked at first, before the binary search.
    let i = st.mem.length - 1;
    if (i < 0 || this.seq < st.mem[i].firstSeq) i = st.memIndexOf(this.seq);
    if (i < 0) return undefined;
    const b = st.mem[i];
    if (b.firstSeq !== this.seq || b.count > SSE_BATCH_RECORDS_MAX || b.frameBytes > SSE_BATCH_BYTES_MAX) return undefined;
    return sharedBatch(b);
  }

  /** The next batch when it is already committed in memory (the caught-up case), without a promise;
   *  undefined otherwise: then atTail() tells waiting (onReady) from calling next(). Never call while
   *  a next() is pending. */
  poll(): SubscriptionBatch | undefined {
    if (!this.readable(this.seq)) return undefined;
    const b = this.memBatch();
    if (b) this.seq = b.tail.seq_num;
    return b;
  }

  /** True while records from `seq` on may still be served to a subscriber of this stream: it is not
   *  deleted, nor trimmed past `seq`, and this subscription is open. */
  readable(seq: number): boolean {
    const st = this.st;
    return !this.closed && !st.deleted && seq >= st.trimSeq;
  }

  /** True when the cursor is at the committed tail of a live stream: nothing to do but wait. */
  atTail(): boolean {
    return this.readable(this.seq) && this.seq >= this.st.tail;
  }

  /** Calls `cb` once, the next time the stream's tail moves (or it is deleted, trimmed or this
   *  subscription closes). One wait at a time, like next(). */
  onReady(cb: () => void): void {
    if (this.closed) { cb(); return; }
    this.readyCb = cb;
    this.st.park(this);
  }

  /** StreamState.wake() (or close()) ends the park. */
  tailMoved(): void {
    const cb = this.readyCb;
    this.readyCb = undefined;
    cb?.();
  }

  private async fetch(): Promise<SubscriptionBatch> {
    const st = this.st;
    const mem = this.memBatch();
    if (mem) return mem;
    const records = await this.reader.page(st, this.seq, { limit: SSE_BATCH_RECORDS_MAX, maxBytes: SSE_BATCH_BYTES_MAX });
    const last = records[records.length - 1];
    return { records, tail: last ? { seq_num: last.seq_num + 1, timestamp_ms: last.timestamp_ms } : st.tailPosition() };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.st.subscribers -= 1;
    const w = this.wake;
    if (w) {
      this.st.removeWaiter(w);
      w();
    }
    if (this.parkedAt >= 0) {
      this.st.unpark(this);
      this.tailMoved();
    }
    this.onClose();
  }
}
