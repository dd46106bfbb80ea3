// Trim and retention: a stream's watermark only advances, readers see it move only once the row
// that moves it is durable (a crash before then would bring records back to readers already told
// they were gone), and segments wholly below it are released after that. Retention by age and by
// bytes is a trim the star makes itself, one pass at a time. The star owns the rows and their
// locks; this file owns where the watermark goes.

import type { StreamMeta } from '../storage/metadata/metadata-store.ts';
import { ServiceError } from './errors.ts';
import type { PageReader } from './page-reader.ts';
import type { StreamState } from './stream-state.ts';

/** What retention needs of the star: its row locks and writes, and the objects it releases. */
export interface RetentionHost {
  withRows<T>(sts: StreamState[], fn: () => Promise<T>): Promise<T>;
  rowWrite(sts: StreamState[], write: Promise<void>): Promise<void>;
  /** A segment no durable row points at any more. */
  dropObject(key: string, st: StreamState): void;
}

export interface RetentionDeps {
  metadata: { putStream(row: StreamMeta): Promise<void> };
  reader: Pick<PageReader, 'seqAtOrAfter' | 'watermarkForBytes'>;
  log_error?: (msg: string, err?: unknown) => void;
}

export class Retention {
  /** A retention pass is running: the next sweep does not start another. */
  private sweeping = false;

  constructor(private readonly d: RetentionDeps, private readonly host: RetentionHost) {}

  /** An explicit trim (spec: Trim): to a seq_num (clamped to the tail) or to the first record at or
   *  after a timestamp. Waits for the stream's appends in flight, so the target sees them. */
  async trim(st: StreamState, to: { seq_num?: number; timestamp_ms?: number }): Promise<void> {
    await st.drained();
    const target = to.seq_num !== undefined ? Math.min(to.seq_num, st.tail) : await this.d.reader.seqAtOrAfter(st, to.timestamp_ms!);
    await this.advance(st, target);
  }

  /** Trims what the stream's retention (age and bytes) no longer keeps as of `nowMs`. */
  async apply(st: StreamState, nowMs: number): Promise<void> {
    const { retention_max_age_ms: age, retention_max_bytes: bytes } = st.config;
    if (!age && !bytes) return;
    let target = st.trimSeq;
    if (age) target = Math.max(target, await this.d.reader.seqAtOrAfter(st, nowMs - age));
    if (bytes) target = Math.max(target, await this.d.reader.watermarkForBytes(st, bytes));
    await this.advance(st, Math.min(target, st.tail));
  }

  /** One background pass over the streams that have a retention setting; skipped while the last
   *  pass is still running (a slow metadata store must not stack passes up). */
  sweep(streams: Iterable<StreamState>, nowMs: number): void {
    if (this.sweeping) return;
    const due: StreamState[] = [];
    for (const st of streams) if (st.config.retention_max_age_ms || st.config.retention_max_bytes) due.push(st);
    if (due.length === 0) return;
    this.sweeping = true;
    void (async () => {
      for (const st of due) await this.apply(st, nowMs);
    })().catch((err: unknown) => this.d.log_error?.('retention sweep failed', err)).finally(() => { this.sweeping = false; });
  }

  /** Moves the watermark to `target` (it only advances); the segments wholly below it are released
   *  once the row is durable. */
  private advance(st: StreamState, target: number): Promise<void> {
    return this.host.withRows([st], async () => {
      // Evicted while waiting (a cluster: its lease moved): nothing was trimmed here, and saying so
      // as a success would tell the caller a trim happened that the new leader never saw.
      if (st.evicted) throw movedAway(st);
      if (st.deleted || target <= st.trimSeq) return;
      const dead = st.meta.segments.filter((s) => s.end_seq <= target);
      const meta: StreamMeta = { ...st.meta, trim_seq: target, segments: st.meta.segments.filter((s) => s.end_seq > target) };
      await this.host.rowWrite([st], this.d.metadata.putStream(meta));
      st.meta = meta;
      st.wake();
      for (const s of dead) this.host.dropObject(s.object_key, st);
    });
  }
}

/** A stream that left this star (its lease moved) while a call on it waited: retry finds the leader. */
export function movedAway(st: StreamState): ServiceError {
  return new ServiceError('unavailable', `stream ${st.meta.bucket}/${st.meta.key} moved to another star; retry`);
}
