// Settling: sealed WAL files become one segment object per stream, strictly in file order, and a
// file is removed only once every row that points at its records elsewhere is durable (until then
// its batches stay in memory and the file on disk, and a crash replays it). The star owns the rows
// and their locks; this file owns which streams each file holds, the queue, and the retries.

import type { SegmentMeta, StreamMeta } from '../storage/metadata/metadata-store.ts';
import type { SegmentSettler, Timers, WalJanitor } from './ports.ts';
import type { StreamState } from './stream-state.ts';

/** Backoff between attempts to settle a WAL file that failed to settle. */
const SETTLE_RETRY_MS_MIN = 100;
const SETTLE_RETRY_MS_MAX = 30_000;

/** What settling needs of the star: its row locks and writes, and the memory and objects it frees. */
export interface SettlingHost {
  withRows<T>(sts: StreamState[], fn: () => Promise<T>): Promise<T>;
  rowWrite(sts: StreamState[], write: Promise<void>): Promise<void>;
  /** Committed batches of `bytes` left memory: their segments serve them now. */
  settled(bytes: number): void;
  /** A segment no durable row points at: forget it and delete it from the store. */
  dropObject(key: string): void;
  /** A segment of `st` is durable and named by its row: the auditor verifies it. */
  segmentSettled(st: StreamState, segment: SegmentMeta): void;
  closed(): boolean;
}

export interface SettlingDeps {
  settler: SegmentSettler;
  metadata: { putStreams(rows: StreamMeta[]): Promise<void> };
  wal: WalJanitor;
  timers: Timers;
  log_error?: (msg: string, err?: unknown) => void;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class Settling {
  /** Streams with records in each WAL file not yet settled. */
  private readonly fileStreams = new Map<number, Set<StreamState>>();
  private queue: Promise<void> = Promise.resolve();
  /** WAL files recovery found a gap in: never removed automatically. */
  private readonly pinned = new Set<number>();

  constructor(private readonly d: SettlingDeps, private readonly host: SettlingHost) {}

  /** Records that `st` has records in WAL file `fileNo`. */
  touch(fileNo: number, st: StreamState): void {
    if (st.lastWalFileNo === fileNo) return; // saves a Set insert per append
    st.lastWalFileNo = fileNo;
    let s = this.fileStreams.get(fileNo);
    if (!s) this.fileStreams.set(fileNo, (s = new Set()));
    s.add(st);
  }

  /** Keeps a WAL file on disk for an operator to inspect. */
  pin(fileNo: number): void { this.pinned.add(fileNo); }

  filesWithRecords(): number[] { return [...this.fileStreams.keys()]; }

  /** Resolves once every file queued so far has settled. */
  idle(): Promise<void> { return this.queue; }

  /** Settles sealed files strictly in order. A failure is retried (with backoff) until it succeeds:
   *  settling a later file first would mark the failed file's records settled without a segment.
   *  One line when an episode starts and one when it ends, not a stack per attempt. */
  enqueue(fileNo: number): void {
    this.queue = this.queue.then(async () => {
      for (let attempt = 0; !this.host.closed(); attempt++) {
        try {
          await this.settleFile(fileNo);
          if (attempt > 0) this.d.log_error?.(`settling WAL file ${fileNo} succeeded after ${attempt + 1} attempts`);
          return;
        } catch (err) {
          if (attempt === 0) this.d.log_error?.(`settling WAL file ${fileNo} failed (${errorText(err)}); it stays in the WAL and is retried with backoff`);
          const delayMs = Math.min(SETTLE_RETRY_MS_MIN * 2 ** attempt, SETTLE_RETRY_MS_MAX);
          await new Promise<void>((resolve) => { this.d.timers.setTimeout(resolve, delayMs); });
        }
      }
    });
  }

  /** Moves one sealed WAL file's batches into segments and records them; the file is removed only
   *  once every row that points at its records elsewhere is durable. Until then the batches stay in
   *  memory and the file stays on disk, so a failed row write is simply retried (and a crash
   *  replays the file). */
  private async settleFile(fileNo: number): Promise<void> {
    const touched = [...(this.fileStreams.get(fileNo) ?? [])].filter((st) => !st.deleted && st.mem.some((b) => b.walFileNo === fileNo));
    if (touched.length) {
      // Where each stream's records in this file end: its segment must reach that far.
      const need = new Map<StreamState, number>();
      for (const st of touched) {
        let end = 0;
        for (const b of st.mem) if (b.walFileNo === fileNo) end = Math.max(end, b.firstSeq + b.count);
        need.set(st, end);
      }
      const settled = await this.d.settler.settle(fileNo, touched.map((st) => ({ streamId: st.streamId, fromSeq: st.settledEnd })));
      // The settler stops at the first frame that fails its checksum, and removing the file after a
      // short settle would lose what it held. Throwing keeps the file, and the settle is retried.
      for (const st of touched) {
        const seg = settled.find((x) => x.streamId === st.streamId)?.segment;
        if (!st.deleted && (!seg || seg.end_seq < need.get(st)!)) {
          throw new Error(`settling WAL file ${fileNo} gave stream ${st.streamId} ${seg ? `records up to ${seg.end_seq}` : 'no segment'}, short of ${need.get(st)}`);
        }
      }
      const byId = new Map(touched.map((st) => [st.streamId, st]));
      const orphans: string[] = [];
      for (const { streamId, segment } of settled) if (!byId.has(streamId)) orphans.push(segment.object_key);
      await this.host.withRows(touched, async () => {
        // Built under the row locks: from the rows as the last write left them (a trim or a fence
        // may have landed while the segments uploaded), so this write undoes none of them.
        const next: { st: StreamState; meta: StreamMeta; dead: string[]; segment: SegmentMeta }[] = [];
        for (const { streamId, segment } of settled) {
          const st = byId.get(streamId);
          if (!st) continue;
          if (st.deleted) { orphans.push(segment.object_key); continue; }
          if (segment.first_seq !== st.settledEnd) {
            throw new Error(`segment of stream ${streamId} starts at ${segment.first_seq}, not at its settled end ${st.settledEnd}`);
          }
          // A trim that ran while this file settled may already cover the new segment.
          const all = [...st.meta.segments, segment];
          const meta: StreamMeta = {
            ...st.meta, segments: all.filter((x) => x.end_seq > st.trimSeq), settled_end_seq: segment.end_seq, settled_end_ts: segment.max_ts,
          };
          next.push({ st, meta, segment, dead: all.filter((x) => x.end_seq <= st.trimSeq).map((x) => x.object_key) });
        }
        if (next.length) await this.host.rowWrite(next.map((n) => n.st), this.d.metadata.putStreams(next.map((n) => n.meta)));
        // Durable: the segments serve these records now, and memory lets them go.
        for (const n of next) {
          n.st.meta = n.meta;
          this.host.settled(n.st.dropSettled(n.meta.settled_end_seq));
          if (n.segment.end_seq > n.st.trimSeq) this.host.segmentSettled(n.st, n.segment);
          orphans.push(...n.dead);
        }
      });
      for (const key of orphans) this.host.dropObject(key);
    }
    this.fileStreams.delete(fileNo);
    if (!this.pinned.has(fileNo)) this.d.wal.removeFile(fileNo);
  }
}
