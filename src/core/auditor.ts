// The auditor: what a star has released and what it has settled, checked in the background and shown
// on the admin plane (ListAuditQueues, PeekAuditQueue, the dashboard's Audits page) and in /metrics.
//   deletions      objects released by trim, retention or deletion, waiting out the read grace
//                  (object-reclaimer.ts) so a vended read plan stays good for its whole life;
//   verifications  settled segments waiting to be fetched back and checked: present, the length the
//                  row records, footer and every frame's checksum;
//   findings       what the checks found wrong (newest kept), each also logged once.
// Every segment the star's streams name is verified again once per scrub interval, so bytes altered
// or lost after their first check are found too.
// On one star the auditor is the star's own; each star of a cluster audits what it settles.

import {
  AUDIT_CHECK_GROUP_BYTES_MAX, AUDIT_CHECK_GROUP_SEGMENTS_MAX, AUDIT_FINDINGS_KEPT_MAX, AUDIT_VERIFY_BATCH_MAX, AUDIT_VERIFY_QUEUE_MAX,
  AUDIT_VERIFY_RUN_MS_MAX,
} from '../config/limits.ts';
import type { SegmentMeta } from '../storage/metadata/metadata-store.ts';
import type { ObjectReclaimer } from './object-reclaimer.ts';
import type { Clock, SegmentChecker } from './ports.ts';
import { runsOf } from './runs.ts';

export const AUDIT_QUEUES = ['deletions', 'verifications', 'findings'] as const;
export type AuditQueueName = (typeof AUDIT_QUEUES)[number];

export interface AuditItem { bucket: string; key: string; reason: string; enqueuedAtMs: number }

interface Verification { bucket: string; key: string; streamId: string; seg: SegmentMeta; enqueuedAtMs: number }

/** A named segment, as the scrub walks them. */
export interface NamedSegment { bucket: string; key: string; streamId: string; seg: SegmentMeta }

/** In a cluster the scrub is the cluster's, not each star's: one star at a time runs it (under the
 *  auditor lease), over every stream in the shared store. */
export interface AuditScope {
  /** Whether this star is the cluster's auditor now. */
  mayScrub(): boolean;
  /** Every settled segment of the cluster. */
  segments(): AsyncIterable<NamedSegment>;
  /** Whether the stream's row still names the object (a trimmed segment is not damage). */
  stillNamed(bucket: string, key: string, objectKey: string): Promise<boolean>;
}

/** Counters for /metrics. */
export interface AuditCounters { verified: number; findings: number; skipped: number }

/** A scrub yields to pending I/O after this many named segments. */
const AUDIT_SCRUB_SLICE = 1000;

export class Auditor {
  private verifications: Verification[] = [];
  private readonly findingsKept: AuditItem[] = [];
  private running = false;
  private scrubbing = false;
  private lastScrubMs: number;
  /** Where the next scrub starts: segments past the queue's bound are taken by the next scrubs, not
   *  skipped forever (a scrub used to start over at the first segment every time). */
  private scrubFrom = 0;
  private scope: AuditScope | undefined;
  /** Taken off the queue by the run under way and not checked yet: they count against its bound. */
  private checking = 0;
  private readonly scrubMs: number;
  private readonly queueMax: number;
  private readonly defer: (fn: () => void) => void;
  readonly counters: AuditCounters = { verified: 0, findings: 0, skipped: 0 };

  constructor(
    private readonly checker: SegmentChecker,
    private readonly deletions: ObjectReclaimer,
    private readonly clock: Clock,
    /** Whether the segment is still one the stream's row names (a trimmed one is not damage). */
    private readonly stillNamed: (bucket: string, key: string, streamId: string, objectKey: string) => boolean,
    private readonly logError?: (msg: string) => void,
    opts: {
      /** How often every named segment is verified again (0: never). */
      scrubMs?: number;
      /** Verifications queued at most (AUDIT_VERIFY_QUEUE_MAX). */
      queueMax?: number;
      /** Runs `fn` after pending I/O: a scrub over a million streams yields between slices. */
      defer?: (fn: () => void) => void;
    } = {},
  ) {
    this.lastScrubMs = clock.nowMs();
    this.scrubMs = opts.scrubMs ?? 0;
    this.queueMax = opts.queueMax ?? AUDIT_VERIFY_QUEUE_MAX;
    this.defer = opts.defer ?? ((fn) => setImmediate(fn));
  }

  /** A cluster's scope: the scrub runs on the auditor lease's holder, over the shared store. */
  useScope(scope: AuditScope): void { this.scope = scope; }

  /** Queues every named segment for verification again, once per scrub interval and only when
   *  nothing else waits (a scrub never crowds out what was just settled). Alone, the segments are
   *  the ones `local` yields (this star's streams); in a cluster, the scope's. */
  async scrub(local: () => Iterable<NamedSegment>): Promise<void> {
    const now = this.clock.nowMs();
    if (this.scrubMs <= 0 || now - this.lastScrubMs < this.scrubMs || this.verifications.length > 0 || this.running || this.scrubbing) return;
    if (this.scope && !this.scope.mayScrub()) return;
    this.lastScrubMs = now;
    this.scrubbing = true;
    try {
      const source: AsyncIterable<NamedSegment> | Iterable<NamedSegment> = this.scope ? this.scope.segments() : local();
      let at = 0;
      let full = false;
      for await (const n of source) {
        if (at % AUDIT_SCRUB_SLICE === AUDIT_SCRUB_SLICE - 1) await new Promise<void>((r) => this.defer(r));
        if (at++ < this.scrubFrom) continue;
        if (this.queued() >= this.queueMax) { full = true; break; }
        this.verifications.push({ ...n, enqueuedAtMs: now });
      }
      // A full queue: the next scrub goes on from here (close enough when streams come and go
      // meanwhile). Otherwise every segment was taken: the next one starts over.
      this.scrubFrom = full ? at - 1 : 0;
    } finally {
      this.scrubbing = false;
    }
  }

  /** A segment was settled: it is fetched back and checked. Past the queue's bound, the newest
   *  settled segments are not queued (counted as skipped): the bound keeps memory fixed. */
  settled(bucket: string, key: string, streamId: string, seg: SegmentMeta): void {
    if (this.queued() >= this.queueMax) { this.counters.skipped += 1; return; }
    this.verifications.push({ bucket, key, streamId, seg, enqueuedAtMs: this.clock.nowMs() });
  }

  /** Checks queued segments (one run at a time), up to AUDIT_VERIFY_BATCH_MAX, in groups of
   *  AUDIT_CHECK_GROUP_SEGMENTS_MAX or AUDIT_CHECK_GROUP_BYTES_MAX, starting no group after
   *  AUDIT_VERIFY_RUN_MS_MAX. A time budget, not a fixed count: 16 a sweep took 52 minutes to check
   *  what settling 50,000 small streams queued, and held it all meanwhile. */
  async run(): Promise<void> {
    if (this.running || this.verifications.length === 0) return;
    this.running = true;
    const startMs = this.clock.nowMs();
    try {
      const batch = this.verifications.splice(0, AUDIT_VERIFY_BATCH_MAX);
      this.checking = batch.length;
      let i = 0;
      for (const [start, end] of runsOf(batch, (v) => v.seg.size_bytes, AUDIT_CHECK_GROUP_BYTES_MAX, AUDIT_CHECK_GROUP_SEGMENTS_MAX)) {
        if (this.clock.nowMs() - startMs >= AUDIT_VERIFY_RUN_MS_MAX) break;
        const group = batch.slice(start, end);
        this.checking -= group.length;
        i = end;
        if (!await this.verify(group)) break;
      }
      this.checking = 0;
      if (i < batch.length) this.verifications.unshift(...batch.slice(i));
    } finally {
      this.running = false;
    }
  }

  /** False when the store did not answer: the group goes to the back of the queue, and the run
   *  ends (the next sweep tries again rather than every queued check meeting the same outage). */
  private async verify(group: Verification[]): Promise<boolean> {
    let faults: (string | undefined)[];
    try {
      faults = await this.checker.check(group.map((v) => v.seg));
    } catch {
      // The store did not answer: try again later rather than report damage.
      this.verifications.push(...group);
      return false;
    }
    for (let i = 0; i < group.length; i++) await this.found(group[i], faults[i]);
    return true;
  }

  private async found(v: Verification, fault: string | undefined): Promise<void> {
    this.counters.verified += 1;
    if (fault === undefined) return;
    const named = this.scope ? await this.scope.stillNamed(v.bucket, v.key, v.seg.object_key) : this.stillNamed(v.bucket, v.key, v.streamId, v.seg.object_key);
    if (!named) return;
    const reason = `segment ${v.seg.object_key} (records ${v.seg.first_seq}..${v.seg.end_seq}): ${fault}`;
    this.counters.findings += 1;
    this.logError?.(`audit: stream ${v.bucket}/${v.key}: ${reason}`);
    this.findingsKept.push({ bucket: v.bucket, key: v.key, reason, enqueuedAtMs: this.clock.nowMs() });
    if (this.findingsKept.length > AUDIT_FINDINGS_KEPT_MAX) this.findingsKept.shift();
  }

  private queued(): number { return this.verifications.length + this.checking; }

  depth(name: AuditQueueName): number {
    if (name === 'deletions') return this.deletions.pending;
    if (name === 'verifications') return this.verifications.length;
    return this.findingsKept.length;
  }

  /** The oldest `limit` items of a queue. */
  peek(name: AuditQueueName, limit: number): AuditItem[] {
    if (name === 'deletions') {
      return this.deletions.peek(limit).map((d) => ({
        bucket: d.bucket, key: d.streamKey, enqueuedAtMs: d.enqueuedMs,
        reason: `delete ${d.key} once the read grace has passed (at ${new Date(d.dueMs).toISOString()})`,
      }));
    }
    if (name === 'verifications') {
      return this.verifications.slice(0, limit).map((v) => ({
        bucket: v.bucket, key: v.key, enqueuedAtMs: v.enqueuedAtMs,
        reason: `verify segment ${v.seg.object_key} (records ${v.seg.first_seq}..${v.seg.end_seq}, ${v.seg.size_bytes} B)`,
      }));
    }
    return this.findingsKept.slice(0, limit);
  }
}
