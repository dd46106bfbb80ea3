// In-memory ports for a simulated cluster of stars (DESIGN.md: Cluster) on one World: lease rows with
// epochs, a commit log that commits each stream's frames only under the lease the committing star
// holds at its epoch (as the PostgreSQL commit statement does), and the leadership each star believes
// it has, which may be stale: a star cut off from the lease table keeps believing until told.

import { FRAME_ROTATE, contentBytes, forEachRecord, frameInfo, frameTimestamps, sealFrame } from '../../src/storage/format/record-codec.ts';
import type { Leadership, Refusal } from '../../src/core/ports.ts';
import type { Star } from '../../src/core/star.ts';
import { SimRing, type Incarnation, type LeaseGuard, type World } from './ports.ts';

const addr = (bucket: string, key: string): string => `${bucket}\u0000${key}`;

/** A frame committed by some star: what a taker reads back above the settled end. */
export interface CommittedFrame { streamId: string; firstSeq: number; count: number; frame: Buffer }

/** The cluster's shared commit store (PostgreSQL's chunk rows and their objects). */
export class Commits {
  readonly frames: CommittedFrame[] = [];
  /** Frames a commit refused because the committing star's epoch was not the lease's. */
  refused = 0;
}

/** The leases one star believes it holds. Taking writes the world's lease row (the epoch rises);
 *  nothing tells a star that another took its lease, so its belief can be stale. */
export class SimLeadership implements Leadership, LeaseGuard {
  private readonly held = new Map<string, number>();

  constructor(readonly starId: string, private readonly world: World) {}

  epochOf(bucket: string, key: string): number | undefined { return this.held.get(addr(bucket, key)); }

  /** Gives a lease up (an idle stream let go): the row stays, and the next take bumps its epoch. */
  release(bucket: string, key: string): void { this.held.delete(addr(bucket, key)); }

  /** Takes the lease of (bucket, key) with the next epoch, whoever held it. */
  take(bucket: string, key: string): number {
    const a = addr(bucket, key);
    const epoch = (this.world.leases.get(a)?.epoch ?? 0) + 1;
    this.world.leases.set(a, { holder: this.starId, epoch });
    this.held.set(a, epoch);
    return epoch;
  }
}

/** The cluster's commit log for one star: a group commit writes each stream's frames only when the
 *  world's lease row names this star at the epoch it believes it holds; a refused frame is reported
 *  once through takeRefusal, as the real commit log reports a lease lost. ROTATE starts the next
 *  generation (nothing is written: settling reads the leader's memory). A group commit whose object
 *  PUT fails (flush(true)) refuses its frames as not stored (`rewind`) and poisons their streams, so
 *  nothing of them commits past the gap until the star rewinds them, as the real commit log does. */
export class SimCommitLog extends SimRing {
  private readonly refusals = new Map<number, Refusal>();
  /** As the real commit log's: streams reloaded while frames their previous state sequenced were
   *  still queued; those frames never commit (they name positions the reload hands out again). */
  private readonly staleUpTo = new Map<string, number>();
  /** Streams with a frame refused by a failed PUT, until the star rewinds or reloads them. */
  private readonly poisoned = new Set<string>();
  /** Group commits whose object PUT failed (with something to commit). */
  putFailures = 0;
  /** The star whose frames these are (set once it is built: it names the stream of a stream id). */
  star: Star | undefined;

  constructor(
    private readonly inc: Incarnation,
    private readonly commits: Commits,
    private readonly leadership: LeaseGuard,
    private generation: number,
  ) { super(); }

  // A view, not a copy (as the real commit log): sealing it seals the frame the star keeps in
  // memory too, and settling from memory checks those checksums.
  protected keep(frame: Uint8Array): Buffer { return Buffer.from(frame.buffer, frame.byteOffset, frame.length); }
  currentFileNo(): number { return this.generation; }

  takeRefusal(end: number): Refusal | undefined {
    const cause = this.refusals.get(end);
    if (cause !== undefined) this.refusals.delete(end);
    return cause;
  }

  /** The star reloads `streamId` (it took the lease again): what it queued of it before never commits. */
  clear(streamId: string): void {
    this.poisoned.delete(streamId);
    const end = this.undurableEnd;
    if (end !== undefined) this.staleUpTo.set(streamId, end);
  }

  /** The star kept a stream after a failed PUT and went back to its committed tail: as a reload. */
  rewind(streamId: string): void { this.clear(streamId); }

  /** One group commit of everything published; with `failPut`, its object's PUT fails. */
  flush(failPut = false): number {
    let failed = false;
    const n = this.commitPublished((end, bytes) => {
      if (bytes[8] === FRAME_ROTATE) { this.generation += 1; return; }
      sealFrame(bytes, 0, bytes.length);
      const info = frameInfo(bytes);
      const where = this.star?.addressOf(info.streamId);
      const epoch = where ? this.leadership.epochOf(where.bucket, where.key) : undefined;
      const lease = where ? this.inc.world.leases.get(addr(where.bucket, where.key)) : undefined;
      if (epoch === undefined || lease === undefined || lease.holder !== this.leadership.starId || lease.epoch !== epoch) {
        this.commits.refused += 1;
        this.refusals.set(end, { cause: `the lease is no longer held at epoch ${epoch ?? 'none'} (simulated commit)`, outcomeUnknown: false });
        return;
      }
      if (end <= (this.staleUpTo.get(info.streamId) ?? -1)) {
        this.refusals.set(end, { cause: 'sequenced before the stream was reloaded (simulated commit)', outcomeUnknown: false, followOn: true });
        return;
      }
      if (this.poisoned.has(info.streamId)) {
        this.refusals.set(end, { cause: 'an earlier append of the stream failed to commit (simulated commit)', outcomeUnknown: false, followOn: true });
        return;
      }
      if (failPut) {
        failed = true;
        this.poisoned.add(info.streamId);
        this.refusals.set(end, { cause: 'the object PUT failed (simulated commit)', outcomeUnknown: false, rewind: true });
        return;
      }
      this.commits.frames.push({ streamId: info.streamId, firstSeq: info.firstSeq, count: info.recordCount, frame: bytes });
    });
    if (failed) this.putFailures += 1;
    return n;
  }
}

/** A stream's committed batches above its settled end, in order: what a taker adopts (as
 *  ClusterService.load reads its chunks back). */
export function committedBatches(commits: Commits, streamId: string, settledEnd: number): Parameters<Star['adopt']>[1] {
  return commits.frames
    .filter((c) => c.streamId === streamId && c.firstSeq + c.count > settledEnd)
    .sort((a, b) => a.firstSeq - b.firstSeq)
    .map((c) => {
      const ts = frameTimestamps(c.frame);
      let content = 0;
      forEachRecord(c.frame, 0, 0, (rec) => { content += contentBytes(rec); return true; });
      return { firstSeq: c.firstSeq, count: c.count, frame: c.frame, minTs: ts[0] ?? 0, maxTs: ts[ts.length - 1] ?? 0, contentBytes: content };
    });
}
