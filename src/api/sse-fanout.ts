// The SSE fan-out's scheduler and its frames. A woken subscriber (or a cohort of them: sse-cohort.ts) is
// queued, and each event-loop turn serves at most SSE_SOCKETS_PER_TURN_MAX sockets, synchronously,
// then yields, so appends are read and acked between slices. Each committed batch's frame is encoded
// once per encoding and the same bytes go to every subscriber that receives that batch.

import { SSE_SOCKETS_PER_TURN_MAX } from '../config/limits.ts';
import type { SubscriptionBatch } from '../core/service-api.ts';
import { encodeRecord } from './wire.ts';

const frames = [new WeakMap<SubscriptionBatch, Buffer>(), new WeakMap<SubscriptionBatch, Buffer>()];
/** The frame written last, per encoding: a fan-out writes one batch to thousands of subscribers in a
 *  row, so this one-entry memo answers nearly every lookup without touching the WeakMap. */
const lastBatch: (SubscriptionBatch | undefined)[] = [undefined, undefined];
const lastFrame: (Buffer | undefined)[] = [undefined, undefined];

export function encodeBatchFrame(b: SubscriptionBatch, base64: boolean): Buffer {
  const k = base64 ? 1 : 0;
  if (lastBatch[k] === b) return lastFrame[k]!;
  const cache = frames[k];
  let f = cache.get(b);
  if (!f) {
    const data = JSON.stringify({ records: b.records.map((r) => encodeRecord(r, base64)), tail: b.tail });
    f = Buffer.from(`id: ${b.tail.seq_num}\ndata: ${data}\n\n`, 'utf8');
    cache.set(b, f);
  }
  lastBatch[k] = b;
  lastFrame[k] = f;
  return f;
}

/** A pump the fan-out can run: one turn writes what its subscriber has at hand. */
export interface Runnable {
  queued: boolean;
  /** Serves at most `budget` sockets; returns how many it wrote (none returned: one). */
  run(budget: number): number | void;
}

/**
 * The ready queue. A pump is in it at most once (the `queued` flag), so it holds at most one entry
 * per open subscription: bounded by SUBSCRIPTIONS_PER_STAR_MAX and the per-host SSE connection cap.
 * FIFO, so a pump that goes again after a full write waits behind every other ready subscriber.
 * A cohort's round that ran out of a turn's budget goes on first in the next turn (`resume`): one
 * batch reaches all its subscribers before the next batch's round starts, as when each subscriber
 * was queued on its own. Taking turns between rounds instead delays every batch by all the others.
 */
export class FanOut {
  /** Runnables served per turn: SSE_SOCKETS_PER_TURN_MAX (a test may pass a smaller bound). */
  constructor(private readonly perTurnMax: number = SSE_SOCKETS_PER_TURN_MAX) {}

  private queue: (Runnable | undefined)[] = [];
  private head = 0;
  private scheduled = false;
  /** Served first in the next turn: the runnable whose work a turn's budget cut short. */
  private front: Runnable | undefined;

  enqueue(p: Runnable): void {
    if (p.queued) return;
    p.queued = true;
    this.queue.push(p);
    this.schedule();
  }

  /** Queues `p` ahead of every other: it goes on with work the last turn's budget cut short. */
  resume(p: Runnable): void {
    if (p.queued) return;
    if (this.front !== undefined) { this.enqueue(p); return; }
    p.queued = true;
    this.front = p;
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // setImmediate, not a microtask: I/O (appends, acks, new subscribers) runs between slices.
    setImmediate(this.turn);
  }

  private readonly turn = (): void => {
    this.scheduled = false;
    // Only what was queued before the turn: a runnable that queues itself again waits for the next.
    const end = this.queue.length;
    let budget = this.perTurnMax;
    const first = this.front;
    if (first !== undefined) {
      this.front = undefined;
      first.queued = false;
      budget -= first.run(budget) ?? 1;
    }
    while (this.head < end && budget > 0) {
      const p = this.queue[this.head];
      this.queue[this.head++] = undefined;
      if (!p) continue;
      p.queued = false;
      budget -= p.run(budget) ?? 1;
    }
    if (this.head >= this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
      if (this.front !== undefined) this.schedule();
    } else {
      // Served entries are dropped once they are the larger part, so the array stays near the queue's size.
      if (this.head >= this.queue.length - this.head) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      this.schedule();
    }
  };
}

/** The star's one fan-out: every event stream's writes take their turns here. */
export const fanOut = new FanOut();
