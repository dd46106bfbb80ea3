// A live subscription: pull-paced (the transport asks for the next batch only when the previous one
// is written), pending at the tail, ending with an error when the stream is deleted or trimmed under
// the cursor. Subscribers caught up at the same position share one batch object, so a transport can
// encode each committed batch once for all of them.

import { SSE_BATCH_BYTES_MAX, SSE_BATCH_RECORDS_MAX } from '../config/limits.ts';
import { forEachRecord } from '../storage/format/record-codec.ts';
import { ServiceError } from './errors.ts';
import type { PageReader } from './page-reader.ts';
import type { Subscription, SubscriptionBatch } from './service-api.ts';
import type { MemBatch, StreamState } from './stream-state.ts';
import type { SequencedRecord } from './types.ts';

const shared = new WeakMap<MemBatch, SubscriptionBatch>();

/** The one batch object every subscriber at `b.firstSeq` receives. */
function sharedBatch(b: MemBatch): SubscriptionBatch {
  let v = shared.get(b);
  if (!v) {
    const records: SequencedRecord[] = [];
    forEachRecord(b.frame, 0, 0, (r) => { records.push(r); return true; });
    v = { records, tail: { seq_num: b.firstSeq + b.count, timestamp_ms: b.maxTs } };
    shared.set(b, v);
  }
  return v;
}

export class LiveSubscription implements Subscription {
  private closed = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly st: StreamState,
    private seq: number,
    private readonly reader: PageReader,
    private readonly onClose: () => void,
  ) {}

  get cursor(): number { return this.seq; }

  async next(): Promise<SubscriptionBatch> {
    for (;;) {
      if (this.closed) throw new ServiceError('unavailable', 'subscription closed');
      const st = this.st;
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

  private async fetch(): Promise<SubscriptionBatch> {
    const st = this.st;
    const i = this.seq >= st.settledEnd ? st.memIndexOf(this.seq) : -1;
    if (i >= 0) {
      const b = st.mem[i];
      if (b.firstSeq === this.seq && b.count <= SSE_BATCH_RECORDS_MAX && b.frame.length <= SSE_BATCH_BYTES_MAX) return sharedBatch(b);
    }
    const records = await this.reader.page(st, this.seq, { limit: SSE_BATCH_RECORDS_MAX, maxBytes: SSE_BATCH_BYTES_MAX });
    const last = records[records.length - 1];
    return { records, tail: last ? { seq_num: last.seq_num + 1, timestamp_ms: last.timestamp_ms } : st.tailPosition() };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.wake) {
      this.st.removeWaiter(this.wake);
      this.wake();
    }
    this.onClose();
  }
}
