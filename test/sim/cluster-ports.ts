// In-memory ports for a simulated cluster of stars (DESIGN.md: Cluster) on one World: lease rows with
// epochs, a commit log that commits each stream's frames only under the lease the committing star
// holds at its epoch (as the PostgreSQL commit statement does), and the leadership each star believes
// it has, which may be stale: a star cut off from the lease table keeps believing until told.

import { FRAME_ROTATE, contentBytes, forEachRecord, frameInfo, frameTimestamps, sealFrame } from '../../src/storage/format/record-codec.ts';
import type { Leadership, LogPort } from '../../src/core/ports.ts';
import type { Star } from '../../src/core/star.ts';
import type { Incarnation, LeaseGuard, World } from './ports.ts';

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
 *  generation (nothing is written: settling reads the leader's memory). */
export class SimCommitLog implements LogPort {
  readonly capacityBytes = 4 * 1024 * 1024;
  private head = 0;
  private published = 0;
  private durable = 0;
  private signal = 0;
  private readonly queued: { end: number; bytes: Buffer }[] = [];
  private readonly refusals = new Map<number, string>();
  /** As the real commit log's: streams reloaded while frames their previous state sequenced were
   *  still queued; those frames never commit (they name positions the reload hands out again). */
  private readonly staleUpTo = new Map<string, number>();
  private waiters: (() => void)[] = [];
  private dead = false;
  /** The star whose frames these are (set once it is built: it names the stream of a stream id). */
  star: Star | undefined;

  constructor(
    private readonly inc: Incarnation,
    private readonly commits: Commits,
    private readonly leadership: SimLeadership,
    private generation: number,
  ) {}

  tryAppend(frame: Uint8Array): number {
    if (this.dead) return -1;
    if (this.head - this.durable + frame.length > this.capacityBytes) return -1;
    this.head += frame.length;
    // A view, not a copy (as the real commit log): sealing it seals the frame the star keeps in
    // memory too, and settling from memory checks those checksums.
    this.queued.push({ end: this.head, bytes: Buffer.from(frame.buffer, frame.byteOffset, frame.length) });
    return this.head;
  }

  publish(): void { this.published = this.head; }
  durableOffset(): number { return this.durable; }
  durableSignal(): number { return this.signal; }
  failed(): boolean { return false; }
  failureCause(): string { return ''; }
  discardUndurable(): void { /* the simulated commit log never fails as a whole */ }
  currentFileNo(): number { return this.generation; }

  takeRefusal(end: number): string | undefined {
    const cause = this.refusals.get(end);
    if (cause !== undefined) this.refusals.delete(end);
    return cause;
  }

  /** The star reloads `streamId` (it took the lease again): what it queued of it before never commits. */
  clear(streamId: string): void {
    if (this.head > this.durable) this.staleUpTo.set(streamId, this.head);
  }

  waitDurable(seen: number): Promise<unknown> {
    if (this.dead) return new Promise(() => undefined);
    if (this.signal !== seen) return Promise.resolve();
    return new Promise<void>((resolve) => { this.waiters.push(resolve); });
  }

  /** One group commit of everything published. */
  flush(): number {
    if (this.dead || this.published === this.durable) return 0;
    let n = 0;
    while (this.queued.length > 0 && this.queued[0].end <= this.published) {
      const f = this.queued.shift()!;
      n++;
      if (f.bytes[8] === FRAME_ROTATE) { this.generation += 1; continue; }
      sealFrame(f.bytes, 0, f.bytes.length);
      const info = frameInfo(f.bytes);
      const where = this.star?.addressOf(info.streamId);
      const epoch = where ? this.leadership.epochOf(where.bucket, where.key) : undefined;
      const lease = where ? this.inc.world.leases.get(addr(where.bucket, where.key)) : undefined;
      if (epoch === undefined || lease === undefined || lease.holder !== this.leadership.starId || lease.epoch !== epoch) {
        this.commits.refused += 1;
        this.refusals.set(f.end, `the lease is no longer held at epoch ${epoch ?? 'none'} (simulated commit)`);
        continue;
      }
      if (f.end <= (this.staleUpTo.get(info.streamId) ?? -1)) {
        this.refusals.set(f.end, 'sequenced before the stream was reloaded (simulated commit)');
        continue;
      }
      this.commits.frames.push({ streamId: info.streamId, firstSeq: info.firstSeq, count: info.recordCount, frame: f.bytes });
    }
    this.durable = this.published;
    this.signal++;
    for (const w of this.waiters.splice(0)) w();
    return n;
  }

  crash(): void {
    this.dead = true;
    this.waiters = [];
    this.queued.length = 0;
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
