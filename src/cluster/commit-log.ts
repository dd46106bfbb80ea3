// The cluster's commit log: the LogPort of a star whose metadata is shared (PostgreSQL). Instead of
// a local WAL, each group commit is one object in object storage holding every stream's new frames,
// then one PostgreSQL statement that records a chunk per stream under the leader's lease epoch
// (storage/metadata/postgres-cluster.ts). Only then does the durable offset move and the appends get
// their acks, so nothing acknowledged depends on this star's disk.
//
// A stream whose lease moved (the epoch check failed), or whose commit failed, is refused here: its
// entries answer 503 and the stream is poisoned, so no later frame of it commits past the gap. When the
// group's object PUT failed (or did not end within COMMIT_PUT_MS_MAX), nothing was asked of
// PostgreSQL: nothing of it is stored and the lease is not in question, so the star keeps the stream
// (its committed tail stays in memory and is served through an object-store outage) and rewinds its
// sequencing to that tail (rewind: every frame of it queued so far is refused, later ones commit).
// Otherwise (the lease moved, or the outcome is in doubt) the star drops the stream and the next
// request reloads it from what PostgreSQL and the object store hold. A statement whose answer was
// lost (the connection dropped mid-statement) may have committed, or may still: before its appends
// are answered, it is fenced off and PostgreSQL is asked which of its chunks it holds
// (PostgresCluster.commitOutcome; those are acknowledged, the others refused), and only when it
// cannot say within COMMIT_OUTCOME_WAIT_MS_MAX are they refused as of unknown outcome.

import { FRAME_ROTATE, frameInfo, sealFrame } from '../storage/format/record-codec.ts';
import type { ChunkCommit, PostgresCluster } from '../storage/metadata/postgres-cluster.ts';
import type { ObjectStore } from '../storage/objects/object-store.ts';
import type { LogPort, Refusal, Timers } from '../core/ports.ts';
import { COMMIT_LINGER_MS_EXPRESS, COMMIT_LINGER_MS_STANDARD, COMMIT_OUTCOME_RETRY_MS, COMMIT_OUTCOME_WAIT_MS_MAX, COMMIT_PUT_MS_MAX } from '../config/limits.ts';
import { OutageLog } from '../core/outage-log.ts';

/** Frames waiting for a group commit, in bytes; past it appends are pushed back (429). */
export const COMMIT_QUEUE_BYTES_MAX = 64 * 1024 * 1024;
/** The most frame bytes one group commit's object holds (the rest wait for the next one). */
export const COMMIT_OBJECT_BYTES_MAX = 16 * 1024 * 1024;
/** Where a stream's frames may commit: its address, the lease epoch this star holds it at, and
 *  whether it is of the express class (its frames go to the express bucket). */
export interface LeaderOf {
  (streamId: string): { bucket: string; key: string; epoch: number; express: boolean } | undefined;
}

/** Chunk objects of express-class streams are named under this prefix and live in the express bucket. */
export const EXPRESS_CHUNK_PREFIX = 'xchunks/';

interface Entry { end: number; frame: Buffer; streamId: string; firstSeq: number; count: number; rotate: boolean }
type GroupChunk = ChunkCommit & { entries: Entry[] };
/** One group commit on its way: its objects' PUTs started (one per class), its statement not yet run. */
interface Group {
  end: number;
  objectKeys: string[];
  chunks: GroupChunk[];
  /** Streams this star stopped leading: refused when the group finishes. */
  orphans: { streamId: string; entries: Entry[] }[];
  put: Promise<{ ok: true; ms: number } | { ok: false; err: unknown }>;
}

export interface CommitLogDeps {
  starId: string;
  objects: ObjectStore;
  /** The express class's bucket (absent: express frames go to `objects` too). */
  express?: ObjectStore;
  pg: PostgresCluster;
  timers: Timers;
  leaderOf: LeaderOf;
  leaseTtlMs: number;
  /** Unique per process start, so object keys never collide across restarts of a star. */
  incarnation: string;
  /** The standard class's linger (default COMMIT_LINGER_MS_STANDARD). */
  lingerMs?: number;
  /** How long a commit whose answer was lost waits for PostgreSQL to say whether it landed (default
   *  COMMIT_OUTCOME_WAIT_MS_MAX). */
  outcomeWaitMsMax?: number;
  /** A group's object PUT in all (default COMMIT_PUT_MS_MAX). */
  putMsMax?: number;
  log_error?: (msg: string, err?: unknown) => void;
}

export class ClusterCommitLog implements LogPort {
  readonly capacityBytes = COMMIT_QUEUE_BYTES_MAX;
  private queue: Entry[] = [];
  private queuedBytes = 0;
  private appendedEnd = 0;
  private durable = 0;
  private signal = 0;
  private waiters: (() => void)[] = [];
  private flushing = false;
  private scheduled = false;
  private objectNo = 0;
  /** Entries (by end offset) that were not acknowledged, and why. */
  private readonly refusals = new Map<number, Refusal>();
  /** Streams with a refused entry: nothing more of them commits until the star reloads them. */
  private readonly poisoned = new Set<string>();
  /** Streams reloaded while frames of their previous state were still queued or in flight: entries
   *  of the stream ending at or below the mark were sequenced by that state and never commit (they
   *  would name positions the reloaded state hands out again). */
  private readonly staleUpTo = new Map<string, number>();
  private stopped = false;
  /** Observes each group commit: the PUT's and the PostgreSQL statement's latencies in ms (metrics). */
  onCommit: ((putMs: number, commitMs: number) => void) | undefined;

  /** Failed group commits while a dependency is away: once per interval, not once per commit. */
  private readonly outages: OutageLog;

  constructor(private readonly d: CommitLogDeps) {
    this.outages = new OutageLog(d.log_error, () => Date.now());
  }

  tryAppend(frame: Uint8Array): number {
    if (this.queuedBytes > 0 && this.queuedBytes + frame.length > COMMIT_QUEUE_BYTES_MAX) return -1;
    const info = frameInfo(frame);
    this.appendedEnd += frame.length;
    this.queuedBytes += frame.length;
    this.queue.push({
      end: this.appendedEnd, frame: Buffer.from(frame.buffer, frame.byteOffset, frame.length), streamId: info.streamId,
      firstSeq: info.firstSeq, count: info.recordCount, rotate: info.kind === FRAME_ROTATE,
    });
    return this.appendedEnd;
  }

  publish(): void {
    if (this.flushing || this.scheduled || this.stopped) return;
    this.scheduled = true;
    const standardMs = this.d.lingerMs ?? COMMIT_LINGER_MS_STANDARD;
    // The class is looked up only when the two lingers differ (they are equal by default).
    const last = standardMs === COMMIT_LINGER_MS_EXPRESS ? undefined : this.queue[this.queue.length - 1];
    const lingerMs = last !== undefined && this.d.leaderOf(last.streamId)?.express === true ? COMMIT_LINGER_MS_EXPRESS : standardMs;
    const run = (): void => { this.scheduled = false; void this.flushLoop(); };
    if (lingerMs > 0) this.d.timers.setTimeout(run, lingerMs);
    else this.d.timers.defer(run);
  }

  durableOffset(): number { return this.durable; }
  durableSignal(): number { return this.signal; }

  waitDurable(seen: number): Promise<unknown> {
    if (this.signal !== seen) return Promise.resolve();
    return new Promise<void>((resolve) => { this.waiters.push(resolve); });
  }

  /** Failures are per stream here (refusals), never the whole log's. */
  failed(): boolean { return false; }
  failureCause(): string { return ''; }
  discardUndurable(): void { /* nothing to discard: failures are refused entry by entry */ }
  currentFileNo(): number { return 0; }

  /** Why the entry ending at `end` was not acknowledged (once; undefined when it committed). */
  takeRefusal(end: number): Refusal | undefined {
    const cause = this.refusals.get(end);
    if (cause !== undefined) this.refusals.delete(end);
    return cause;
  }

  /** A stream reloaded from what is committed: its frames appended from now on may commit again;
   *  those appended before never do. */
  clear(streamId: string): void {
    this.poisoned.delete(streamId);
    if (this.appendedEnd > this.durable) this.staleUpTo.set(streamId, this.appendedEnd);
  }

  /** A stream the star kept after a refusal with `rewind` (its sequencing is back at its committed
   *  tail): as for a reload, what it appended before never commits, what it appends now may. */
  rewind(streamId: string): void { this.clear(streamId); }

  /** Commits what is queued, then stops taking frames (a stopping star). */
  async stop(): Promise<void> {
    await this.flushLoop();
    this.stopped = true;
  }

  /** The loop under way, if any: stop() waits for it (returning early, the star would refuse as
   *  "shutting down" appends whose commit then lands: review 41, F2). */
  private running: Promise<void> | undefined;

  private flushLoop(): Promise<void> {
    if (this.running) return this.running;
    this.running = this.runFlushLoop().finally(() => { this.running = undefined; });
    return this.running;
  }

  /** Group commits, two in flight at most: the next group's PUT runs while the previous group's
   *  PostgreSQL statement does. Statements run strictly in order, each after the one before has
   *  answered, so a stream refused in one group is refused in the next (no gap ever commits). */
  private async runFlushLoop(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    let inFlight: Promise<void> | undefined;
    try {
      // Frames queued while the last group finishes find `flushing` set and do not start a loop of
      // their own: the queue is looked at again after that wait, or they would sit there until the
      // next append came (forever, on a stream that went quiet).
      while (this.queue.length > 0) {
        while (this.queue.length > 0) {
          const group = this.prepare();
          const before = inFlight;
          inFlight = this.finish(group, before);
          if (before) await before;
        }
        await inFlight;
        inFlight = undefined;
      }
    } finally {
      this.flushing = false;
    }
  }

  /** Takes the entries at the head of the queue, builds their object and starts its PUT. */
  private prepare(): Group {
    let n = 0;
    let bytes = 0;
    while (n < this.queue.length && (n === 0 || bytes + this.queue[n].frame.length <= COMMIT_OBJECT_BYTES_MAX)) bytes += this.queue[n++].frame.length;
    const batch = this.queue.splice(0, n);
    this.queuedBytes -= bytes;

    // Frames grouped by stream, each stream's contiguous in the object, in sequence order.
    const byStream = new Map<string, Entry[]>();
    for (const e of batch) {
      if (e.rotate) continue;
      let list = byStream.get(e.streamId);
      if (!list) byStream.set(e.streamId, (list = []));
      list.push(e);
    }
    const chunks: GroupChunk[] = [];
    const orphans: { streamId: string; entries: Entry[] }[] = [];
    const no = String(this.objectNo++).padStart(12, '0');
    // One object per class in this group: standard frames to the main bucket, express to its own.
    const objects = [
      { key: `chunks/${this.d.starId}/${this.d.incarnation}-${no}`, store: this.d.objects, parts: [] as Buffer[], bytes: 0 },
      { key: `${EXPRESS_CHUNK_PREFIX}${this.d.starId}/${this.d.incarnation}-${no}`, store: this.d.express ?? this.d.objects, parts: [] as Buffer[], bytes: 0 },
    ];
    for (const [streamId, queued] of byStream) {
      const stale = this.staleUpTo.get(streamId);
      const entries = stale === undefined ? queued : queued.filter((e) => e.end > stale);
      if (entries.length < queued.length) this.refuseStale(queued.slice(0, queued.length - entries.length));
      if (entries.length === 0) continue;
      const lead = this.d.leaderOf(streamId);
      if (!lead) { orphans.push({ streamId, entries }); continue; }
      const o = objects[lead.express ? 1 : 0];
      const length = entries.reduce((s, e) => s + e.frame.length, 0);
      // Checksummed here, as the local WAL's flusher does: a chunk read back is verified frame by frame.
      for (const e of entries) { sealFrame(e.frame, 0, e.frame.length); o.parts.push(e.frame); }
      const last = entries[entries.length - 1];
      chunks.push({
        bucket: lead.bucket, key: lead.key, epoch: lead.epoch, stream_id: streamId, first_seq: entries[0].firstSeq,
        end_seq: last.firstSeq + last.count, object_key: o.key, byte_offset: o.bytes, byte_length: length, entries,
      });
      o.bytes += length;
    }
    const used = objects.filter((o) => o.bytes > 0);
    const t0 = performance.now();
    const bound = { deadlineMs: this.d.putMsMax ?? COMMIT_PUT_MS_MAX };
    const put = Promise.all(used.map((o) => o.store.put(o.key, Buffer.concat(o.parts, o.bytes), bound))).then(
      () => ({ ok: true as const, ms: performance.now() - t0 }),
      (err: unknown) => ({ ok: false as const, err }),
    );
    return { end: batch[batch.length - 1].end, objectKeys: used.map((o) => o.key), chunks, orphans, put };
  }

  /** Once the group before it has finished: records the group's chunks (or refuses them) and moves
   *  the durable offset past it. */
  private async finish(g: Group, before: Promise<void> | undefined): Promise<void> {
    const put = await g.put;
    if (before) await before;
    for (const o of g.orphans) this.refuse(o.streamId, o.entries, 'this star no longer leads the stream');
    // A stream refused in an earlier group (here or before) commits nothing past the gap.
    const live = g.chunks.filter((c) => {
      const stale = this.staleUpTo.get(c.stream_id);
      if (stale !== undefined && c.entries[0].end <= stale) {
        // Prepared before the stream was reloaded, so sequenced by the state dropped since.
        this.refuseStale(c.entries);
        return false;
      }
      if (!this.poisoned.has(c.stream_id)) return true;
      this.refuseEntries(c.entries, 'an earlier append of the stream failed to commit', FOLLOW_ON);
      return false;
    });
    if (live.length > 0 && !put.ok) {
      // Nothing was asked of PostgreSQL: nothing of the group is stored, and no lease moved for it.
      // The star keeps the streams (rewind), so their committed tails stay readable from memory.
      this.outages.error('commit', `group commit of ${live.length} stream(s) failed; their appends are refused`, put.err);
      const cause = `the commit failed (${errorText(put.err)})`;
      for (const c of live) this.refuse(c.stream_id, c.entries, cause, { outcomeUnknown: false, rewind: true });
    } else if (live.length > 0 && put.ok) {
      const t1 = performance.now();
      try {
        const committed = await this.d.pg.commit(live, g.objectKeys, this.d.leaseTtlMs);
        this.onCommit?.(put.ms, performance.now() - t1);
        live.forEach((c, i) => {
          if (!committed.has(i)) this.refuse(c.stream_id, c.entries, 'the stream\'s lease moved to another star');
        });
      } catch (err) {
        await this.settleLostAnswer(g, live, err);
      }
    }
    this.durable = g.end;
    for (const [id, mark] of this.staleUpTo) if (mark <= g.end) this.staleUpTo.delete(id);
    this.signal += 1;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** The statement failed without an answer that says whether it committed: asks PostgreSQL which
   *  chunks it recorded (acknowledged: they are committed under this star's epoch) and refuses the
   *  rest; when PostgreSQL cannot say within COMMIT_OUTCOME_WAIT_MS_MAX, refuses them all as of
   *  unknown outcome. Either way a refused stream is poisoned and reloaded from what is committed. */
  private async settleLostAnswer(g: Group, live: GroupChunk[], err: unknown): Promise<void> {
    const cause = `the commit failed (${errorText(err)})`;
    const waitMs = this.d.outcomeWaitMsMax ?? COMMIT_OUTCOME_WAIT_MS_MAX;
    const outcome = await this.outcomeOf(g.objectKeys, waitMs);
    if (outcome === undefined) {
      this.outages.error('commit', `group commit of ${live.length} stream(s) failed and PostgreSQL did not say within ${waitMs} ms whether it landed; their appends are refused as of unknown outcome`, err);
      for (const c of live) this.refuse(c.stream_id, c.entries, cause, { outcomeUnknown: true });
      return;
    }
    this.outages.error('commit', `group commit of ${live.length} stream(s) lost its answer; PostgreSQL says it ${outcome.committed ? 'committed' : 'did not commit'}`, err);
    for (const c of live) {
      if (outcome.chunks.has(`${c.stream_id}:${c.first_seq}`)) continue; // committed: acknowledged
      // The statement committed but this chunk is not there: its lease check failed, or another star
      // that took the stream since settled it already. Which one cannot be told from here.
      this.refuse(c.stream_id, c.entries, outcome.committed ? `${cause}, and whether this append landed is unknown` : cause, { outcomeUnknown: outcome.committed });
    }
  }

  /** PostgreSQL's answer to whether the group's statement committed, asked every
   *  COMMIT_OUTCOME_RETRY_MS for at most `waitMs`; undefined when it gave none. */
  private async outcomeOf(objectKeys: string[], waitMs: number): Promise<{ committed: boolean; chunks: Set<string> } | undefined> {
    const untilMs = Date.now() + waitMs;
    for (;;) {
      const leftMs = untilMs - Date.now();
      if (leftMs <= 0 || this.stopped) return undefined;
      let timer: { cancel(): void } | undefined;
      const bound = new Promise<undefined>((resolve) => { timer = this.d.timers.setTimeout(() => resolve(undefined), leftMs); });
      const asked = this.d.pg.commitOutcome(objectKeys).then((o) => ({ o }), () => undefined);
      const answer = await Promise.race([asked, bound]);
      timer?.cancel();
      if (answer !== undefined) return answer.o;
      if (Date.now() >= untilMs) return undefined;
      await new Promise<void>((resolve) => { this.d.timers.setTimeout(resolve, COMMIT_OUTCOME_RETRY_MS); });
    }
  }

  /** Entries sequenced by a state of their stream that was dropped and reloaded since: refused, the
   *  reloaded state left unpoisoned (its own entries follow what is committed). */
  private refuseStale(entries: Entry[]): void {
    this.refuseEntries(entries, 'the stream was reloaded on this star, or an earlier append of it failed to commit, while the append was in flight', FOLLOW_ON);
  }

  private refuse(streamId: string, entries: Entry[], cause: string, how: RefusalHow = NOT_STORED): void {
    this.poisoned.add(streamId);
    this.refuseEntries(entries, cause, how);
  }

  private refuseEntries(entries: Entry[], cause: string, how: RefusalHow = NOT_STORED): void {
    for (const e of entries) this.refusals.set(e.end, { cause, ...how });
  }
}

/** A refusal's flags (Refusal, less its cause). */
type RefusalHow = Omit<Refusal, 'cause'>;
/** Certainly not stored; what becomes of the stream is the star's to decide (dropped and reloaded). */
const NOT_STORED: RefusalHow = { outcomeUnknown: false };
/** Refused only because an earlier entry of its stream was, or its stream was reloaded or rewound. */
const FOLLOW_ON: RefusalHow = { outcomeUnknown: false, followOn: true };

function errorText(err: unknown): string {
  return (err as Error | undefined)?.message ?? String(err);
}
