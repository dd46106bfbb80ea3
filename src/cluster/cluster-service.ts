// A star in a cluster: the StreamService every transport calls, over the local star (core/star.ts).
// Per-stream operations run on the stream's leader. This star leads a stream once it holds the
// stream's lease (PostgreSQL, storage/metadata/postgres-cluster.ts) and has loaded the stream from
// what is committed: its row and segments, and its chunks read back from object storage. When
// another live star holds the lease, the operation answers not_owner with that star's addresses (the
// HTTP bridge hops there; gRPC callers are told). When the holder is gone, its lease is waited out and
// taken with the next epoch. Bucket operations and listings read the shared store directly.

import {
  CHUNK_GC_MS, CHUNK_READBACK_CONCURRENT, COMMITTED_SNAPSHOT_ATTEMPTS_MAX, COMMITTED_VIEW_GET_MS_MAX, DRAIN_HANDOFF_MS_MAX, DRAIN_POLL_MS, DRAIN_WAIT_MS_MAX, LEASE_IDLE_MS, LEASE_RENEW_MS, LEASE_SAFETY_MARGIN_MS, LEASE_TTL_MS,
  LIST_PAGE_MAX, OBJECTS_DOWN_HANDOFF_MS, OBJECTS_PROBE_MS_MAX, OBJECTS_UP_RESUME_MS, RETENTION_SWEEP_MS, STAR_GONE_AFTER_MS, STAR_HEARTBEAT_MS, UNSETTLED_SWEEP_FAILED_KEPT_MAX, UNSETTLED_SWEEP_MS,
  UNSETTLED_SWEEP_RETRY_MS, UNSETTLED_SWEEP_RUN_MS_MAX, UNSETTLED_SWEEP_STREAMS_MAX,
} from '../config/limits.ts';
import { ServiceError } from '../core/errors.ts';
import { OutageLog } from '../core/outage-log.ts';
import type { Clock, Leadership, Timers } from '../core/ports.ts';
import type {
  BucketCreate, ListPage, PlanResult, PlanStart, StreamConfigInput, StreamCreate, StreamEvent, StreamService, Subscription,
} from '../core/service-api.ts';
import { needsHandoff, type Star } from '../core/star.ts';
import { streamInfoOf, type CommittedBatch } from '../core/stream-state.ts';
import { bucketInfoOf } from '../core/buckets.ts';
import type { NamedSegment } from '../core/auditor.ts';
import type {
  AppendAck, AppendInput, BucketConfig, BucketInfo, Position, ReadOptions, ReadResult, ReadStart, StreamConfig, StreamInfo,
} from '../core/types.ts';
import { contentBytes, forEachRecord, frameInfo, frameIsIntact, frameTimestamps } from '../storage/format/record-codec.ts';
import type { StreamMeta } from '../storage/metadata/metadata-store.ts';
import type { ChunkRow, LeaseHolder, StarRow, VacantUnsettled } from '../storage/metadata/postgres-cluster.ts';
import type { CallBound, ObjectStore } from '../storage/objects/object-store.ts';
import { collectChunkObjects } from './chunk-gc.ts';
import { EXPRESS_CHUNK_PREFIX } from './commit-log.ts';
import type { ClusterLog, ClusterMetadata, ClusterStore } from './cluster-ports.ts';
import type { ClusterView } from '../api/grpc/admin-reads.ts';

export interface ClusterDeps {
  star: Star;
  /** The cluster's tables (PostgresCluster in production). */
  pg: ClusterStore;
  /** The stream and bucket rows (PostgresMetadataStore in production). */
  metadata: ClusterMetadata;
  objects: ObjectStore;
  /** The express class's bucket (absent: express chunks live in `objects`). */
  express?: ObjectStore;
  /** The commit log (ClusterCommitLog in production). */
  log: ClusterLog;
  starId: string;
  clock: Clock;
  timers: Timers;
  leaseTtlMs?: number;
  leaseIdleMs?: number;
  /** How often the vacant streams this star is home to are swept for unsettled chunks (default UNSETTLED_SWEEP_MS). */
  unsettledSweepMs?: number;
  /** True while the request being handled was sent here by another star as the stream's home. */
  inHop?: () => boolean;
  /** The star this request's own hop found refusing connections (down): its leases are waited out. */
  unreachable?: () => string | undefined;
  log_error?: (msg: string, err?: unknown) => void;
  /** Asks another star to settle now (SettleStar over gRPC, with this star's peer credential): a
   *  star drained from elsewhere settles at once, not only when it next reads its state. */
  settlePeer?: (star: StarRow) => Promise<void>;
  /** Whether `objects` answers (its DependencyHealth): reported with each heartbeat (stepAside). */
  objectsHealth?: { readonly up: boolean };
}

type SettledView = ReturnType<Star['settledView']>;

/** How often leases of `ttlMs` are renewed: LEASE_RENEW_MS, or a third of a shorter term, so one
 *  renewal may fail or come late (a loaded machine, a slow commit) and the next still lands in time. */
export function leaseRenewMs(ttlMs: number): number {
  return Math.max(1, Math.min(LEASE_RENEW_MS, Math.floor(ttlMs / 3)));
}

/** A lease this star holds: its epoch, and until when (by this star's clock) it may serve from memory. */
interface Held { bucket: string; key: string; epoch: number; validUntilMs: number; takenAtMs: number }

/** Counters for /metrics and the admin views. */
export interface ClusterCounters { takeovers: number; leasesTaken: number; leasesLost: number; leasesReleased: number }

const addr = (bucket: string, key: string): string => `${bucket}\u0000${key}`;
/** Where each star writes its object-store probe (probeObjects): one tiny object per star, rewritten. */
const OBJECTS_PROBE_PREFIX = 'probes/';
const PROBE_BODY = new Uint8Array([0x31]);

/** The auditor's lease row: a bucket no stream can have (bucket names are never empty). */
const AUDITOR_LEASE_BUCKET = '';
const AUDITOR_LEASE_KEY = 'svcd:auditor';

/** How strongly a stream belongs on a star: the live star with the highest score is its home
 *  (rendezvous hashing; ClusterService.homeOf). */
export function homeScore(starId: string, bucket: string, key: string): number {
  return fnv1a(`${starId}\u0000${bucket}\u0000${key}`);
}

/** 32-bit FNV-1a of a string's UTF-16 units, then murmur3's finalizer (FNV alone barely mixes
 *  strings that differ only early, as star ids do): cheap, stable across stars and restarts. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

export class ClusterService implements StreamService, Leadership {
  private readonly held = new Map<string, Held>();
  private readonly taking = new Map<string, Promise<void>>();
  private readonly ttlMs: number;
  private readonly idleMs: number;
  private readonly timers: { cancel(): void }[] = [];
  /** The live active stars as last read (refreshed with the heartbeat): where vacant leases go. */
  private live: StarRow[] = [];
  /** The live stars a vacant stream may be homed on: those with a data bridge, when any has one. A
   *  star without one (`--listen ''`) cannot be hopped to, so homed there a stream would be out of
   *  reach of every HTTP caller (and of the Gateway); a cluster of such stars homes streams on all. */
  private homes: StarRow[] = [];
  /** Stars whose row was last read with a stale heartbeat (frozen, cut off or dead). */
  private stale = new Set<string>();
  private stopped = false;
  /** This star's membership state as last read or set: a draining or decommissioned star takes no
   *  lease and hands over the ones it holds. */
  private ownState: StarRow['state'] = 'active';
  private draining: Promise<number> | undefined;
  /** Since when this star's object store has been down (undefined: up), and whether it has stepped
   *  aside for it (stepAside). */
  private objectsDownSinceMs: number | undefined;
  private objectsUpSinceMs: number | undefined;
  private aside = false;
  private probing = false;
  /** The hand-over loop running now (handOver): a drain that starts while the star is stepped aside
   *  waits for it rather than running a second loop over the same leases. */
  private handingOver: Promise<number> = Promise.resolve(0);
  /** The cluster's one auditor lease, while this star holds it: only its holder scrubs. */
  private auditorLease: Held | undefined;
  /** Where the unsettled sweep goes on from (undefined: the start), and the streams it could not lead
   *  lately, with when to try each again (at most UNSETTLED_SWEEP_FAILED_KEPT_MAX). */
  private sweepCursor: VacantUnsettled | undefined;
  private readonly sweepFailed = new Map<string, number>();
  readonly counters: ClusterCounters = { takeovers: 0, leasesTaken: 0, leasesLost: 0, leasesReleased: 0 };

  /** Failures of retrying work while a dependency is away: once per interval, not once per retry. */
  private readonly outages: OutageLog;

  constructor(private readonly d: ClusterDeps) {
    this.outages = new OutageLog(d.log_error, () => d.clock.nowMs());
    this.ttlMs = d.leaseTtlMs ?? LEASE_TTL_MS;
    this.idleMs = d.leaseIdleMs ?? LEASE_IDLE_MS;
  }

  // ------------------------------------------------------------------ leadership

  /** The epoch this star holds (bucket, key) at (core's Leadership port): the star acknowledges, and
   *  the metadata store writes the stream's rows, only at this epoch. */
  epochOf(bucket: string, key: string): number | undefined { return this.held.get(addr(bucket, key))?.epoch; }

  /** Where a stream's frames commit: its address and this star's epoch (the commit log asks). */
  leaderOf(streamId: string): { bucket: string; key: string; epoch: number; express: boolean } | undefined {
    const a = this.d.star.addressOf(streamId);
    if (!a) return undefined;
    const h = this.held.get(addr(a.bucket, a.key));
    return h ? { ...a, epoch: h.epoch } : undefined;
  }

  /** The store a chunk object lives in: express-class chunks in the express bucket. */
  private storeOf(objectKey: string): ObjectStore {
    return objectKey.startsWith(EXPRESS_CHUNK_PREFIX) ? this.d.express ?? this.d.objects : this.d.objects;
  }

  /** The membership last saw `starId`'s heartbeat go stale: it will not answer a hop. A star that
   *  left the membership (stopped) is not: it answers the requests it was sent before it went. */
  starGone(starId: string): boolean { return this.stale.has(starId); }

  /** Streams this star leads now. */
  get leasesHeld(): number { return this.held.size; }
  /** Whether this star has stepped aside for its object store (stepAside): it leads nothing now. */
  get steppedAside(): boolean { return this.aside; }

  /** The star forgot a stream (its lease moved, or a commit of it failed): so does the leadership. */
  evicted(bucket: string, key: string): void {
    if (this.held.delete(addr(bucket, key))) this.counters.leasesLost += 1;
  }

  start(): void {
    const every = (ms: number, fn: () => Promise<void>): void => {
      let running = false;
      this.timers.push(this.d.timers.setInterval(() => {
        if (running || this.stopped) return;
        running = true;
        void fn().catch((err: unknown) => this.outages.error('background', 'cluster background task failed', err)).finally(() => { running = false; });
      }, ms));
    };
    const report = async (): Promise<void> => {
      const objectsOk = this.d.objectsHealth?.up ?? true;
      await this.d.pg.heartbeat(objectsOk);
      const stars = await this.d.pg.stars();
      this.live = stars.filter((st) => st.state === 'active' && st.heartbeat_age_ms < STAR_GONE_AFTER_MS);
      const bridged = this.live.filter((st) => st.bridge_address !== '');
      const candidates = bridged.length > 0 ? bridged : this.live;
      // A star that does not reach the object store could not load a stream's committed tail.
      const reaching = candidates.filter((st) => st.objects_ok !== false);
      this.homes = reaching.length > 0 ? reaching : candidates;
      const others = this.live.filter((st) => st.star_id !== this.d.starId);
      if (!objectsOk || this.aside || others.some((st) => st.objects_ok === false)) this.probeObjects();
      // Decided on the store's health now, not as reported before the statements above: a store
      // back meanwhile must not send this star aside on a reading seconds old (the simulation's seed 9028).
      this.stepAside(this.d.objectsHealth?.up ?? true, others.some((st) => st.objects_ok !== false));
      this.stale = new Set(stars.filter((st) => st.heartbeat_age_ms >= STAR_GONE_AFTER_MS).map((st) => st.star_id));
      // Drained or decommissioned by a request to another star: drain here.
      const me = stars.find((st) => st.star_id === this.d.starId);
      if (me && me.state !== 'active' && this.ownState === 'active') void this.drainHere(me.state).catch((err: unknown) => this.d.log_error?.('draining failed', err));
    };
    void report().catch(() => undefined);
    every(STAR_HEARTBEAT_MS, report);
    const renewMs = leaseRenewMs(this.ttlMs);
    every(renewMs, () => this.renewAll());
    every(renewMs, () => this.keepAuditorLease());
    this.d.star.auditor.useScope({
      mayScrub: () => this.auditorLease !== undefined && this.d.clock.nowMs() < this.auditorLease.validUntilMs,
      segments: () => this.clusterSegments(),
      stillNamed: async (bucket, key, objectKey) => ((await this.d.metadata.readStream(bucket, key)).row?.segments ?? []).some((x) => x.object_key === objectKey),
    });
    every(RETENTION_SWEEP_MS, () => this.releaseIdle());
    every(CHUNK_GC_MS, () => this.collectChunkObjects());
    every(this.d.unsettledSweepMs ?? UNSETTLED_SWEEP_MS, () => this.sweepUnsettled());
  }

  /** Gives every lease up, so the streams' next leaders need not wait them out, and leaves the live
   *  membership. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) t.cancel();
    const all = [...this.held.values(), ...(this.auditorLease ? [this.auditorLease] : [])];
    this.held.clear();
    this.auditorLease = undefined;
    await this.d.pg.release(all).catch(() => undefined);
    await this.d.pg.leave().catch(() => undefined);
  }

  /** Resolves once this star leads (bucket, key) with a lease it may serve under; otherwise throws
   *  not_owner (another live star leads it) or unavailable. */
  private lead(bucket: string, key: string): Promise<void> | undefined {
    const a = addr(bucket, key);
    // A lease being taken or renewed is not served under until that is done: the lease is recorded
    // before the stream is loaded, and a request let through meanwhile would find no stream (404).
    let p = this.taking.get(a);
    if (p) return p;
    const h = this.held.get(a);
    if (h && this.d.clock.nowMs() < h.validUntilMs) return undefined;
    if (this.stopped) return Promise.reject(new ServiceError('unavailable', 'the star is shutting down'));
    p = this.acquire(bucket, key, a).finally(() => this.taking.delete(a));
    this.taking.set(a, p);
    return p;
  }

  private async acquire(bucket: string, key: string, a: string): Promise<void> {
    if (this.takesNoLeases()) throw await this.handedOff(bucket, key);
    const h = this.held.get(a);
    if (h) {
      // Held, but past the time this star may serve under it: renew (same epoch) or let it go.
      const sentMs = this.d.clock.nowMs();
      const kept = await this.d.pg.renew([h], this.ttlMs);
      if (kept.has(0) && this.held.get(a) === h) { h.validUntilMs = this.validUntil(sentMs); return; }
      this.d.star.evict(bucket, key);
      this.held.delete(a);
    }
    // A vacant stream's lease goes to the live star its address hashes to (rendezvous hashing), so
    // leases spread over the cluster however callers pick stars: another star sends the request there.
    const home = this.homeOf(bucket, key);
    if (home && home.star_id !== this.d.starId && !this.d.inHop?.()) {
      const cur = await this.d.pg.holderOf(bucket, key);
      // A lease the store says this star holds, unexpired, though this star let the stream go (a
      // renewal or take that landed after it did) is taken again below, not sent home: the home finds
      // it held by a live star and sends the caller back here, and gRPC callers following NOT_OWNER
      // went back and forth between the two until it ran out.
      const ownUnexpired = cur !== undefined && cur.holder === this.d.starId && cur.remaining_ms > 0;
      if (!ownUnexpired && (!cur || cur.holder === this.d.starId || !this.alive(cur))) {
        throw this.notOwner({ holder: home.star_id, epoch: cur?.epoch ?? 0, remaining_ms: 0, star: home }, bucket, key);
      }
    }
    const deadlineMs = this.d.clock.nowMs() + this.ttlMs + STAR_GONE_AFTER_MS;
    for (;;) {
      // Drained or stepped aside during a wait above (a renewal, a holder lookup, a dead holder's
      // lease waited out): no take goes out, so no epoch is spent on a lease given up at once.
      if (this.takesNoLeases()) throw await this.handedOff(bucket, key);
      const sentMs = this.d.clock.nowMs();
      const r = await this.d.pg.take(bucket, key, this.ttlMs);
      if (r.taken) {
        const held: Held = { bucket, key, epoch: r.epoch, validUntilMs: this.validUntil(sentMs), takenAtMs: sentMs };
        // Drained or stepped aside while the take was under way: a hand-over that found nothing
        // held has ended, and would never give this lease up.
        if (this.takesNoLeases()) {
          await this.d.pg.release([held]).catch(() => undefined);
          throw await this.handedOff(bucket, key);
        }
        this.held.set(a, held);
        this.counters.leasesTaken += 1;
        if (r.epoch > 1) this.counters.takeovers += 1;
        try {
          await this.load(bucket, key);
        } catch (err) {
          if (this.held.get(a) === held) this.held.delete(a);
          this.d.star.evict(bucket, key);
          await this.d.pg.release([held]).catch(() => undefined);
          if (err instanceof ServiceError) throw err;
          this.outages.error('load', `loading ${bucket}/${key} after taking its lease failed`, err);
          throw new ServiceError('unavailable', `the stream could not be loaded from what is committed (${(err as Error).message}); retry`);
        }
        return;
      }
      const cur = r.current;
      if (this.alive(cur)) throw this.notOwner(cur, bucket, key);
      // The holder is gone: wait its lease out, then take it with the next epoch.
      const left = deadlineMs - this.d.clock.nowMs();
      if (left <= 0) throw new ServiceError('unavailable', `the lease of ${bucket}/${key} is moving; retry`);
      await this.pause(Math.min(Math.max(cur.remaining_ms, 0) + 20, left));
    }
  }

  /** Why a draining or decommissioned star, or one stepped aside, does not serve a stream: the live
   *  star that leads it, else the active star it belongs on now (the bridge hops there), or a
   *  retryable 503 while none is known. The leader is asked first: a stream led elsewhere all along
   *  need not live on its hashed home, and a hop sent there (the home would not take a lease another
   *  live star holds) came back 503 on every retry for as long as this star stayed drained. */
  private async handedOff(bucket: string, key: string): Promise<ServiceError> {
    const cur = await this.d.pg.holderOf(bucket, key).catch(() => undefined);
    if (cur && this.alive(cur)) return this.notOwner(cur, bucket, key);
    const home = this.homeOf(bucket, key);
    if (home && home.star_id !== this.d.starId) return this.notOwner({ holder: home.star_id, epoch: 0, remaining_ms: 0, star: home }, bucket, key);
    return new ServiceError('unavailable', `${this.whyNoLeases()}: it leads no stream; retry`);
  }

  /** Drained, decommissioned or stepped aside for its object store: this star takes no lease. */
  private takesNoLeases(): boolean {
    return this.ownState !== 'active' || this.aside;
  }

  private whyNoLeases(): string {
    return this.ownState === 'active' && this.aside ? `star ${this.d.starId} does not reach the object store` : `star ${this.d.starId} is ${this.ownState}`;
  }

  // ------------------------------------------------------------------ an object store cut off

  /** A star that has not reached the object store for OBJECTS_DOWN_HANDOFF_MS while another live
   *  star reports reaching it steps aside: it hands its streams over as a drain does and takes no
   *  lease, so their appends commit on a star that can store them (their committed tails load there:
   *  the chunks are in the store), until its own store has answered for OBJECTS_UP_RESUME_MS. While
   *  no other star reaches the store either it keeps its streams: their unsettled tails are then
   *  served only from its memory. */
  private stepAside(objectsOk: boolean, anotherReaches: boolean): void {
    const now = this.d.clock.nowMs();
    if (objectsOk) { this.objectsDownSinceMs = undefined; this.objectsUpSinceMs ??= now; }
    else { this.objectsDownSinceMs ??= now; this.objectsUpSinceMs = undefined; }
    const down = this.objectsDownSinceMs === undefined ? 0 : now - this.objectsDownSinceMs;
    const up = this.objectsUpSinceMs === undefined ? 0 : now - this.objectsUpSinceMs;
    // In: down long enough. Out: up long enough (probing meanwhile), or no other star to hand to.
    const aside = anotherReaches && (this.aside ? up < OBJECTS_UP_RESUME_MS : down >= OBJECTS_DOWN_HANDOFF_MS);
    if (aside === this.aside) return;
    this.aside = aside;
    if (!aside) {
      this.d.log_error?.(`star ${this.d.starId} takes leases again: ${objectsOk ? 'its object store answers' : 'no other star reaches the object store'}`);
      return;
    }
    this.d.log_error?.(`star ${this.d.starId} has not reached the object store for ${down} ms and another star does: handing over its ${this.held.size} lease(s)`);
    if (this.draining) return; // a drain hands them over already (and one that starts later waits for this)
    void this.handOver(() => this.aside).catch((err: unknown) => this.d.log_error?.('handing over failed', err));
  }

  /** One PUT of a tiny object of this star's own (the same key each time), to learn whether the store
   *  takes writes, which is what leading a stream needs (the tracked store reports the outcome to
   *  objectsHealth). A GET would pass where writes fail (a store refusing PUTs, a lost bucket's 404). */
  private probeObjects(): void {
    if (this.probing) return;
    this.probing = true;
    void this.d.objects.put(`${OBJECTS_PROBE_PREFIX}${this.d.starId}`, PROBE_BODY, { deadlineMs: OBJECTS_PROBE_MS_MAX })
      .catch(() => undefined)
      .finally(() => { this.probing = false; });
  }

  /** Hands every held stream over (its lease released at once, so the next request anywhere takes it
   *  with the next epoch) as soon as none of its appends is in flight, the rest after
   *  DRAIN_HANDOFF_MS_MAX, quiesced first; stops early once `goingOn` says so. Answers how many. One
   *  loop at a time: a second hand-over starts when the one under way has ended. */
  private handOver(goingOn: () => boolean): Promise<number> {
    const next = this.handingOver.catch(() => 0).then(() => this.handOverLoop(goingOn));
    this.handingOver = next;
    return next;
  }

  private async handOverLoop(goingOn: () => boolean): Promise<number> {
    let moved = 0;
    const deadlineMs = this.d.clock.nowMs() + DRAIN_HANDOFF_MS_MAX;
    while (this.held.size > 0 && !this.stopped && goingOn()) {
      const late = this.d.clock.nowMs() >= deadlineMs;
      const ready = [...this.held].filter(([a, h]) => !this.taking.has(a) && (late || this.d.star.quiet(h.bucket, h.key))).map(([, h]) => h);
      // Never quiet (producers kept appending): what they had sequenced commits and is acked first.
      if (late && ready.length > 0) {
        this.d.log_error?.(`${this.whyNoLeases()}: ${ready.length} stream(s) still busy after ${DRAIN_HANDOFF_MS_MAX} ms: quiesced (new appends refused, those sequenced acked), then handed over`);
        await Promise.all(ready.map((h) => this.d.star.quiesce(h.bucket, h.key)));
      }
      if (ready.length > 0) {
        await this.letGo(ready).catch((err: unknown) => this.d.log_error?.('releasing leases while handing over failed (they run out by themselves)', err));
        moved += ready.length;
      }
      if (this.held.size > 0) await this.pause(DRAIN_POLL_MS);
    }
    return moved;
  }

  // ------------------------------------------------------------------ drain and decommission

  /** Drain (or Decommission) the star `starId` ('' : this one): it takes no more leases and hands the
   *  ones it holds to the other stars; decommissioned, it never leads again. Answers the leases it
   *  handed over. Refused for the last active star: no other star could take its streams. */
  async drain(starId: string, decommission: boolean): Promise<number> {
    const target = starId === '' ? this.d.starId : starId;
    const stars = await this.d.pg.stars();
    if (!stars.some((st) => st.star_id === target)) throw new ServiceError('not_found', `no star ${target} in this cluster`);
    const others = stars.filter((st) => st.star_id !== target && st.state === 'active' && st.heartbeat_age_ms < STAR_GONE_AFTER_MS);
    const verb = decommission ? 'decommission' : 'drain';
    if (others.length === 0) throw new ServiceError('failed_precondition', `cannot ${verb} star ${target}: it is the last active star, and no other could take its streams`);
    const state = decommission ? 'decommissioned' : 'draining';
    await this.d.pg.setState(target, state);
    if (target === this.d.starId) return this.drainHere(state);
    // Another star sees its new state at its next heartbeat and drains itself; wait for it to let go.
    const before = (await this.d.pg.leaseCounts()).get(target) ?? 0;
    const row = stars.find((st) => st.star_id === target);
    if (row && this.d.settlePeer && row.heartbeat_age_ms < STAR_GONE_AFTER_MS) {
      await this.d.settlePeer(row).catch((err: unknown) => this.d.log_error?.(`asking star ${target} to settle failed (it settles as it drains)`, err));
    }
    const deadlineMs = this.d.clock.nowMs() + DRAIN_WAIT_MS_MAX;
    while (((await this.d.pg.leaseCounts()).get(target) ?? 0) > 0) {
      if (this.d.clock.nowMs() >= deadlineMs) throw new ServiceError('unavailable', `star ${target} is still handing over its leases; ask again to wait more`);
      await this.pause(STAR_HEARTBEAT_MS);
    }
    return before;
  }

  /** This star drains: no new leases; what it holds settles, then each stream is handed over (its
   *  lease released at once, so the next request anywhere takes it with the next epoch) as soon as
   *  none of its appends is in flight, the rest after DRAIN_HANDOFF_MS_MAX, quiesced first. */
  private drainHere(state: StarRow['state']): Promise<number> {
    if (state === 'decommissioned' || this.ownState === 'active') this.ownState = state;
    if (this.draining) return this.draining;
    this.d.log_error?.(`star ${this.d.starId} is ${state}: handing over its ${this.held.size} lease(s)`);
    this.draining = (async () => {
      // Settling first spares the next leaders reading the chunks back; with the object store down it
      // cannot land, and waiting for it (up to SETTLE_WAIT_MS_MAX) would keep the leases meanwhile.
      if (this.d.objectsHealth?.up !== false) {
        await this.d.star.settle().catch((err: unknown) => this.d.log_error?.('settling before the hand-over failed (the next leaders read the chunks)', err));
      }
      const moved = await this.handOver(() => true);
      await this.letAuditorGo();
      this.d.log_error?.(`star ${this.d.starId} is ${this.ownState}: ${moved} lease(s) handed over`);
      return moved;
    })();
    return this.draining;
  }

  // ------------------------------------------------------------------ the cluster's auditor

  /** Takes the auditor lease when it is free, renews it while held; an active star only. */
  private async keepAuditorLease(): Promise<void> {
    // A star that cannot read the segments (drained, or stepped aside for its object store) leaves
    // the scrub to one that can.
    if (this.takesNoLeases()) { await this.letAuditorGo(); return; }
    const sentMs = this.d.clock.nowMs();
    const h = this.auditorLease;
    if (h) {
      const kept = await this.d.pg.renew([h], this.ttlMs);
      if (this.auditorLease !== h) return;
      if (kept.has(0)) h.validUntilMs = this.validUntil(sentMs);
      else this.auditorLease = undefined;
      return;
    }
    const r = await this.d.pg.take(AUDITOR_LEASE_BUCKET, AUDITOR_LEASE_KEY, this.ttlMs);
    if (r.taken) {
      this.auditorLease = { bucket: AUDITOR_LEASE_BUCKET, key: AUDITOR_LEASE_KEY, epoch: r.epoch, validUntilMs: this.validUntil(sentMs), takenAtMs: sentMs };
    }
  }

  private async letAuditorGo(): Promise<void> {
    const h = this.auditorLease;
    if (!h) return;
    this.auditorLease = undefined;
    await this.d.pg.release([h]).catch((err: unknown) => this.d.log_error?.('releasing the auditor lease failed (it runs out by itself)', err));
  }

  /** Every settled segment of the cluster, from the shared store, a page of buckets and streams at
   *  a time (the auditor's scrub). */
  private async *clusterSegments(): AsyncIterable<NamedSegment> {
    for (let afterBucket = ''; ;) {
      const buckets = await this.d.metadata.listBucketRows(afterBucket, LIST_PAGE_MAX);
      for (const b of buckets) {
        for (let afterKey = ''; ;) {
          const rows = await this.d.metadata.listStreamRows(b.name, afterKey, LIST_PAGE_MAX);
          for (const r of rows) {
            const { row } = await this.d.metadata.readStream(b.name, r.key);
            for (const seg of row?.segments ?? []) yield { bucket: b.name, key: r.key, streamId: r.stream_id, seg };
          }
          if (rows.length < LIST_PAGE_MAX) break;
          afterKey = rows[rows.length - 1].key;
        }
      }
      if (buckets.length < LIST_PAGE_MAX) return;
      afterBucket = buckets[buckets.length - 1].name;
    }
  }

  /** The live star a stream's lease belongs on (highest hash of star and address, among `homes`);
   *  undefined while the membership has not been read yet (then this star takes what it is asked for). */
  private homeOf(bucket: string, key: string): StarRow | undefined {
    let best: StarRow | undefined;
    let bestScore = -1;
    for (const st of this.homes) {
      const score = homeScore(st.star_id, bucket, key);
      if (score > bestScore) { best = st; bestScore = score; }
    }
    return best;
  }

  private alive(cur: LeaseHolder): boolean {
    return cur.holder !== this.d.starId && cur.holder !== this.d.unreachable?.() && cur.remaining_ms > 0 && cur.star !== undefined
      && cur.star.heartbeat_age_ms < STAR_GONE_AFTER_MS && cur.star.state !== 'decommissioned';
  }

  private notOwner(cur: LeaseHolder, bucket: string, key: string): ServiceError {
    return new ServiceError('not_owner', `stream is led by star ${cur.holder}`, {
      leader: { star_id: cur.holder, bridge_address: cur.star?.bridge_address ?? '', grpc_address: cur.star?.grpc_address ?? '' },
      stream: { bucket, key },
    });
  }

  /** Reads a stream back from what is committed: its row and segments, then its unsettled chunks. */
  private async load(bucket: string, key: string): Promise<void> {
    const { row, deleted } = await this.d.metadata.readStream(bucket, key);
    if (!row) { this.d.star.adoptAbsent(bucket, key, deleted); return; }
    const batches = await this.committedBatches(row);
    this.d.log.clear(row.stream_id);
    this.d.star.adopt(row, batches);
  }

  /** A stream's committed batches above its settled end, read back from its chunks in order. */
  private async committedBatches(row: StreamMeta): Promise<CommittedBatch[]> {
    const chunks = await this.d.pg.chunksOf(row.stream_id, row.settled_end_seq);
    // Fetched CHUNK_READBACK_CONCURRENT at a time, each into its own slot: the frames stay in order.
    const read: Awaited<ReturnType<ClusterService['chunkFrames']>>[] = new Array(chunks.length);
    let next = 0;
    const reader = async (): Promise<void> => {
      while (next < chunks.length) {
        const i = next++;
        read[i] = await this.chunkFrames(chunks[i]);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CHUNK_READBACK_CONCURRENT, chunks.length) }, reader));
    const batches: CommittedBatch[] = [];
    for (const frames of read) {
      for (const { info, frame } of frames) {
        if (info.firstSeq + info.recordCount <= row.settled_end_seq) continue; // settled already
        const ts = frameTimestamps(frame);
        let content = 0;
        forEachRecord(frame, 0, 0, (rec) => { content += contentBytes(rec); return true; });
        batches.push({ firstSeq: info.firstSeq, count: info.recordCount, frame, maxTs: ts[ts.length - 1] ?? 0, contentBytes: content });
      }
    }
    return batches;
  }

  private async renewAll(): Promise<void> {
    const all = [...this.held.values()];
    if (all.length === 0) return;
    const sentMs = this.d.clock.nowMs();
    const kept = await this.d.pg.renew(all, this.ttlMs);
    all.forEach((h, i) => {
      if (this.held.get(addr(h.bucket, h.key)) !== h) return;
      if (kept.has(i)) h.validUntilMs = this.validUntil(sentMs);
      else {
        this.d.log_error?.(`lease of ${h.bucket}/${h.key} (epoch ${h.epoch}) was taken by another star; letting the stream go`);
        this.d.star.evict(h.bucket, h.key);
        this.held.delete(addr(h.bucket, h.key));
      }
    });
  }

  /** Streams nobody used for the idle timeout go vacant: out of memory, lease given up. */
  private async releaseIdle(): Promise<void> {
    const idle: Held[] = [];
    for (const [a, h] of this.held) {
      // A lease is kept at least the idle timeout after it was taken (a stream just created or just
      // read has had no append yet, and letting it go at once would bounce it between stars).
      if (this.taking.has(a) || this.d.clock.nowMs() - h.takenAtMs < this.idleMs || !this.d.star.idle(h.bucket, h.key, this.idleMs)) continue;
      idle.push(h);
    }
    if (idle.length > 0) await this.letGo(idle);
  }

  /** Leads the vacant streams this star is home to that hold committed, unsettled chunks: taking
   *  the lease loads them, and the star settles what it adopts at once (Star.adopt); the stream is
   *  let go once idle and settled (releaseIdle). Chunks whose stream is gone (deleted, and the star
   *  that deleted it stopped before forgetting them) are forgotten, so their objects are collected. */
  private async sweepUnsettled(): Promise<void> {
    if (this.ownState !== 'active') return;
    const startMs = this.d.clock.nowMs();
    let led = 0;
    // Pages of every star's candidates, in address order from where the last run stopped: each star
    // acts only on the streams it is home to, so a page is as many rows as the cluster has stars'
    // shares of a run.
    const pageRows = UNSETTLED_SWEEP_STREAMS_MAX * Math.max(1, this.homes.length);
    for (;;) {
      const page = await this.d.pg.vacantUnsettled(this.sweepCursor, pageRows);
      for (const v of page) {
        // A run that stops goes on from the last row it looked at, next run.
        if (this.stopped || this.ownState !== 'active' || this.d.star.unsettledHalfFull) return;
        this.sweepCursor = v;
        if (this.homeOf(v.bucket, v.key)?.star_id !== this.d.starId) continue; // its home star sweeps it
        const a = addr(v.bucket, v.key);
        if ((this.sweepFailed.get(a) ?? 0) > this.d.clock.nowMs()) continue;
        if (await this.settleVacant(v)) this.sweepFailed.delete(a);
        else this.sweepFailedUntil(a);
        if (++led >= UNSETTLED_SWEEP_STREAMS_MAX || this.d.clock.nowMs() - startMs >= UNSETTLED_SWEEP_RUN_MS_MAX) return;
      }
      if (page.length < pageRows) { this.sweepCursor = undefined; return; } // the end: start over next run
    }
  }

  /** Leads one vacant stream so what it adopts settles; false when it could not be led or loaded. */
  private async settleVacant({ bucket, key, stream_id }: VacantUnsettled): Promise<boolean> {
    try {
      await this.lead(bucket, key);
    } catch (err) {
      // Taken meanwhile by a live star: whoever leads it settles it.
      if (err instanceof ServiceError && err.code === 'not_owner') return true;
      if (!this.sweepFailed.has(addr(bucket, key))) {
        this.outages.error('sweep', `sweep: vacant ${bucket}/${key} holds unsettled chunks and could not be led (tried again in ${UNSETTLED_SWEEP_RETRY_MS / 1000} s)`, err);
      }
      return false;
    }
    // Chunks of a stream that is gone (deleted; the address may hold a new one): decided on the
    // durable row, not on this star's memory.
    const { row } = await this.d.metadata.readStream(bucket, key);
    if (row?.stream_id !== stream_id) await this.d.pg.dropChunks(stream_id);
    return true;
  }

  /** Leaves a stream the sweep could not lead alone for a while (bounded: the oldest is forgotten). */
  private sweepFailedUntil(a: string): void {
    this.sweepFailed.delete(a);
    if (this.sweepFailed.size >= UNSETTLED_SWEEP_FAILED_KEPT_MAX) {
      const oldest = this.sweepFailed.keys().next().value;
      if (oldest !== undefined) this.sweepFailed.delete(oldest);
    }
    this.sweepFailed.set(a, this.d.clock.nowMs() + UNSETTLED_SWEEP_RETRY_MS);
  }

  /** Lets streams go (idle, drained, reconfigured): out of this star's memory, and their leases
   *  released at once, so the next request anywhere takes them with the next epoch. */
  private async letGo(hs: Held[]): Promise<void> {
    for (const h of hs) {
      this.held.delete(addr(h.bucket, h.key));
      this.d.star.evict(h.bucket, h.key);
    }
    this.counters.leasesReleased += hs.length;
    await this.d.pg.release(hs);
  }

  /** Until when a lease renewed or taken by a statement sent at `sentMs` may be served under, by this
   *  star's clock (a margin short of its expiry, for clock drift against PostgreSQL's). */
  private validUntil(sentMs: number): number { return sentMs + this.ttlMs - LEASE_SAFETY_MARGIN_MS; }

  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => { this.d.timers.setTimeout(resolve, ms); });
  }

  private async collectChunkObjects(): Promise<void> {
    await collectChunkObjects(this.d.pg, (keys) => this.deleteChunkObjects(keys), this.d.clock);
  }

  /** Chunk objects from both buckets (an express stream's live in the express one). */
  private async deleteChunkObjects(keys: string[]): Promise<string[]> {
    const express = keys.filter((k) => k.startsWith(EXPRESS_CHUNK_PREFIX));
    const standard = keys.filter((k) => !k.startsWith(EXPRESS_CHUNK_PREFIX));
    const deleted = standard.length > 0 ? await this.storeOf(standard[0]).deleteMany(standard) : [];
    if (express.length > 0) deleted.push(...await this.storeOf(express[0]).deleteMany(express));
    return deleted;
  }

  // ------------------------------------------------------------------ buckets: the shared store

  /** The bucket as the shared store holds it, into the star's view (another star may have changed it). */
  private async freshBucket(name: string): Promise<void> {
    this.d.star.syncBucket(name, await this.d.metadata.readBucket(name));
  }

  async createBucket(name: string, body: BucketCreate): Promise<BucketInfo> {
    await this.freshBucket(name);
    return this.d.star.createBucket(name, body);
  }

  async getBucket(name: string): Promise<BucketInfo> {
    await this.freshBucket(name);
    return this.d.star.getBucket(name);
  }

  async updateBucket(name: string, body: Partial<BucketConfig>): Promise<BucketInfo> {
    await this.freshBucket(name);
    return this.d.star.updateBucket(name, body);
  }

  async deleteBucket(name: string): Promise<void> {
    await this.freshBucket(name);
    this.d.star.getBucket(name); // not found first
    if (await this.d.metadata.bucketHasStreams(name)) throw new ServiceError('bucket_not_empty', `bucket ${name} is not empty: delete its streams first`);
    return this.d.star.deleteBucket(name);
  }

  async listBuckets(startAfter: string, limit: number): Promise<ListPage<BucketInfo>> {
    const n = Math.min(Math.max(limit, 1), LIST_PAGE_MAX);
    const rows = await this.d.metadata.listBucketRows(startAfter, n + 1);
    const page = rows.slice(0, n);
    return { items: page.map(bucketInfoOf), next: rows.length > n ? page[page.length - 1].name : '' };
  }

  async listStreams(bucket: string, startAfter: string, limit: number): Promise<ListPage<StreamInfo>> {
    await this.freshBucket(bucket);
    this.d.star.getBucket(bucket); // not found
    const n = Math.min(Math.max(limit, 1), LIST_PAGE_MAX);
    const rows = await this.d.metadata.listStreamRows(bucket, startAfter, n + 1);
    const page = rows.slice(0, n);
    return { items: page.map(streamInfo), next: rows.length > n ? page[page.length - 1].key : '' };
  }

  // ------------------------------------------------------------------ streams: on the leader

  /** Runs `fn` on this star once it leads the stream (a bucket refreshed first when `bucketToo`). */
  private async onLeader<T>(bucket: string, key: string, fn: () => T | Promise<T>, bucketToo = false): Promise<T> {
    if (bucketToo || !this.d.star.holds(bucket, key)) await this.freshBucket(bucket);
    await this.lead(bucket, key);
    return fn();
  }

  createStream(bucket: string, key: string, body: StreamCreate): Promise<StreamInfo> {
    return this.onLeader(bucket, key, () => this.d.star.createStream(bucket, key, body), true);
  }

  async getStream(bucket: string, key: string): Promise<StreamInfo & { fencing_token: string }> {
    // A vacant stream is described from its committed row, with no lease taken (spec: States).
    const row = await this.vacantRow(bucket, key);
    if (row) return { ...streamInfo(row), fencing_token: row.fencing_token };
    return this.leadStream(bucket, key);
  }

  /** A producer session's open: the stream from its leader, taking a vacant stream's lease. */
  leadStream(bucket: string, key: string): Promise<StreamInfo & { fencing_token: string }> {
    return this.onLeader(bucket, key, () => this.d.star.getStream(bucket, key));
  }

  /** A change of class, producer policy, timestamping, throughput or batch settings is taken up by a
   *  new leadership: once the new config is durable the stream is let go here (its live producers
   *  reconnect once) and its lease released, so the next request takes it with the next epoch and
   *  loads the new config. A PATCH that changes none of those keeps the leadership. */
  async reconfigureStream(bucket: string, key: string, patch: StreamConfigInput): Promise<StreamInfo> {
    return this.onLeader(bucket, key, async () => {
      const before = this.d.star.getStream(bucket, key);
      const after = await this.d.star.reconfigureStream(bucket, key, patch);
      const h = this.held.get(addr(bucket, key));
      if (h && needsHandoff(before, after)) {
        await this.d.star.quiesce(bucket, key);
        await this.letGo([h]).catch((err: unknown) => this.d.log_error?.(`releasing ${bucket}/${key} after its reconfiguration failed (the lease runs out by itself)`, err));
      }
      return after;
    }, true);
  }

  deleteStream(bucket: string, key: string): Promise<void> {
    return this.onLeader(bucket, key, async () => {
      const id = this.d.star.holds(bucket, key) ? this.d.star.getStream(bucket, key).stream_id : undefined;
      await this.d.star.deleteStream(bucket, key);
      // Its chunks name a stream id nothing will read again; their objects are collected once unreferenced.
      if (id) await this.d.pg.dropChunks(id).catch((err: unknown) => this.d.log_error?.(`forgetting the chunks of deleted stream ${id} failed`, err));
    });
  }

  /** The hot path: a stream this star leads is appended to with no await of its own. */
  append(bucket: string, key: string, input: AppendInput): Promise<AppendAck> {
    if (this.d.star.holds(bucket, key) && this.lead(bucket, key) === undefined) return this.d.star.append(bucket, key, input);
    return this.onLeader(bucket, key, () => this.d.star.append(bucket, key, input));
  }

  async read(bucket: string, key: string, opts: ReadOptions): Promise<ReadResult> {
    let vacant: ReturnType<Star['detached']> | undefined;
    try {
      vacant = await this.vacantState(bucket, key);
    } catch (err) {
      // A seq_num start above the settled frontier is the leader's to serve: no view is built for it.
      const start = opts.start;
      return this.settledInstead(err, bucket, key, (view) => view.read(opts), (row) => start.kind !== 'seq_num' || start.value < row.settled_end_seq);
    }
    if (vacant) return vacant.read(opts);
    return this.onLeader(bucket, key, () => this.d.star.read(bucket, key, opts));
  }

  /** `err` is not_owner (another live star leads the stream): a read or plan of settled history is
   *  answered here from what is committed all the same (spec: "Any star serves settled history");
   *  anything else rethrows it (the leader serves the tail). */
  private async settledInstead<V>(err: unknown, bucket: string, key: string, answer: (view: SettledView) => Promise<V | undefined>, worthIt?: (row: StreamMeta) => boolean): Promise<V> {
    if (!(err instanceof ServiceError) || err.code !== 'not_owner') throw err;
    let got: V | undefined;
    try {
      const view = await this.settledViewOf(bucket, key, worthIt);
      got = view ? await answer(view) : undefined;
    } catch (e) {
      // An answer of the read itself (410, 416, 400) stands; anything else failing here (the store
      // read for the tail) leaves the leader, which can still answer.
      if (e instanceof ServiceError && e.code !== 'internal' && e.code !== 'unavailable') throw e;
      // Once per interval while the object store is away (every read of a stream led elsewhere comes
      // here then), not a stack per read.
      this.outages.error('committed-view', `serving ${bucket}/${key} from what is committed failed; the leader answers`, e);
    }
    if (got === undefined) throw err;
    return got;
  }

  /** A stream as this star can serve it without leading it: its committed row and tail. The newest
   *  chunk is read before the row it is checked against: a settle between the two reads moves the
   *  row's settled end past the chunks it deletes, so the tail found is never behind an append
   *  acknowledged before this call (the leader acknowledges only what is committed in a chunk). */
  private async settledViewOf(bucket: string, key: string, worthIt?: (row: StreamMeta) => boolean): Promise<SettledView | undefined> {
    const before = (await this.d.metadata.readStream(bucket, key)).row;
    if (!before || (worthIt && !worthIt(before))) return undefined;
    const last = await this.d.pg.lastChunkOf(before.stream_id);
    const { row } = await this.d.metadata.readStream(bucket, key);
    if (!row || row.stream_id !== before.stream_id) return undefined; // deleted meanwhile: the leader answers
    await this.freshBucket(bucket);
    return this.d.star.settledView(row, await this.committedTail(row, last));
  }

  /** The committed tail: where the newest chunk ends (one ranged GET of it gives the last record's
   *  time), or the row's settled end when no chunk lies above it. */
  private async committedTail(row: StreamMeta, last: ChunkRow | undefined): Promise<Position> {
    if (!last || last.end_seq <= row.settled_end_seq) return { seq_num: row.settled_end_seq, timestamp_ms: row.settled_end_ts };
    // The leader answers when this does not (settledInstead): no need to wait out the store's bounds.
    const frames = await this.chunkFrames(last, { deadlineMs: COMMITTED_VIEW_GET_MS_MAX });
    const ts = frames.length > 0 ? frameTimestamps(frames[frames.length - 1].frame) : [];
    return { seq_num: last.end_seq, timestamp_ms: ts[ts.length - 1] ?? row.settled_end_ts };
  }

  /** A chunk's frames, read back from its object and each checked whole. */
  private async chunkFrames(c: ChunkRow, bound?: CallBound): Promise<{ info: ReturnType<typeof frameInfo>; frame: Buffer }[]> {
    const buf = await this.storeOf(c.object_key).get(c.object_key, { offset: c.byte_offset, length: c.byte_length }, bound);
    const frames: { info: ReturnType<typeof frameInfo>; frame: Buffer }[] = [];
    for (let off = 0; off < buf.length;) {
      if (!frameIsIntact(buf, off, buf.length - off)) throw new Error(`chunk ${c.object_key}@${c.byte_offset} of stream ${c.stream_id} is damaged at ${off}`);
      const info = frameInfo(buf, off);
      frames.push({ info, frame: buf.subarray(off, off + info.frameBytes) });
      off += info.frameBytes;
    }
    return frames;
  }

  /** Where a read of a stream this star does not lead is served: another live star's leader (it
   *  serves the tail: not_owner), else what is committed, read here with no lease taken (spec:
   *  States, Stream leadership). Undefined when this star leads it, or it does not exist (a read may
   *  create it: that takes the lease). A read never takes the lease of a stream that exists: a lease
   *  the read saw expiring must not move to the reader. */
  private async vacantState(bucket: string, key: string): Promise<ReturnType<Star['detached']> | undefined> {
    const first = await this.vacantRow(bucket, key);
    return first && this.detachedFrom(bucket, key, first);
  }

  /** The star's detached view of what is committed of a stream whose row was just read as `first`
   *  (undefined when it was deleted meanwhile). */
  private async detachedFrom(bucket: string, key: string, first: StreamMeta): Promise<ReturnType<Star['detached']> | undefined> {
    const snap = await this.committedSnapshot(bucket, key, first);
    if (!snap) return undefined;
    await this.freshBucket(bucket);
    return this.d.star.detached(snap.row, snap.batches);
  }

  /** A stream's row with its committed, unsettled batches, as of one moment. A settle (by whoever
   *  leads the stream now, or the sweep) moves settled_end_seq and deletes the chunks it covers in
   *  one statement; landing between the row's read and the chunks' it would leave the row's old
   *  frontier with the chunks above the new one, and the records between them unseen (a tail below
   *  what was acknowledged). So the row is read again after the chunks, and the pair read again when
   *  the frontier moved. Undefined when the stream was deleted meanwhile. */
  private async committedSnapshot(bucket: string, key: string, first: StreamMeta): Promise<{ row: StreamMeta; batches: CommittedBatch[] } | undefined> {
    let row = first;
    for (let attempt = 1; ; attempt++) {
      const batches = await this.committedBatches(row);
      const again = (await this.d.metadata.readStream(bucket, key)).row;
      if (!again || again.stream_id !== row.stream_id) return undefined;
      if (again.settled_end_seq === row.settled_end_seq) return { row: again, batches };
      if (attempt >= COMMITTED_SNAPSHOT_ATTEMPTS_MAX) throw new ServiceError('unavailable', `${bucket}/${key} is settling; retry`);
      row = again;
    }
  }

  /** The committed row of a stream nobody leads (vacant), or undefined when this star leads it or it
   *  does not exist; not_owner when another live star leads it. */
  private async vacantRow(bucket: string, key: string): Promise<StreamMeta | undefined> {
    if (this.held.has(addr(bucket, key)) || this.stopped) return undefined;
    const cur = await this.d.pg.holderOf(bucket, key);
    if (cur && this.alive(cur)) throw this.notOwner(cur, bucket, key);
    return (await this.d.metadata.readStream(bucket, key)).row;
  }

  /** What is committed of a stream, read from PostgreSQL and object storage by any star (the
   *  leader acknowledges only what is committed there, so this is its acknowledged state). */
  private async committed(bucket: string, key: string): Promise<ReturnType<Star['detached']> | undefined> {
    const { row: first } = await this.d.metadata.readStream(bucket, key);
    return first && this.detachedFrom(bucket, key, first);
  }

  private async committedOrMissing(bucket: string, key: string): Promise<ReturnType<Star['detached']>> {
    const c = await this.committed(bucket, key);
    if (!c) throw new ServiceError('not_found', `stream ${bucket}/${key} not found`);
    return c;
  }

  leased(bucket: string, key: string): boolean {
    return this.held.has(addr(bucket, key)) && this.d.star.leased(bucket, key);
  }

  checkTail(bucket: string, key: string): Promise<Position> {
    return this.onLeader(bucket, key, () => this.d.star.checkTail(bucket, key));
  }

  async readTail(bucket: string, key: string): Promise<Position> {
    const vacant = await this.vacantState(bucket, key);
    if (vacant) return vacant.tail();
    return this.onLeader(bucket, key, () => this.d.star.readTail(bucket, key));
  }

  trim(bucket: string, key: string, to: { seq_num?: number; timestamp_ms?: number }): Promise<void> {
    return this.onLeader(bucket, key, () => this.d.star.trim(bucket, key, to));
  }

  fence(bucket: string, key: string, token: string): Promise<Position> {
    return this.onLeader(bucket, key, () => this.d.star.fence(bucket, key, token));
  }

  subscribe(bucket: string, key: string, start: ReadStart): Promise<Subscription> {
    return this.onLeader(bucket, key, () => this.d.star.subscribe(bucket, key, start));
  }

  /** A plan vends only settled segments, so any star answers it from what is committed, with no
   *  lease taken; the leader answers for the stream it holds, and a missing stream goes there too
   *  (create_stream_on_read). */
  async readPlan(bucket: string, key: string, start: PlanStart, maxEntries: number): Promise<PlanResult> {
    const plan = async (view: SettledView): Promise<PlanResult> => view.plan(start, maxEntries);
    let vacant: SettledView | undefined;
    try {
      vacant = (await this.vacantRow(bucket, key)) ? await this.settledViewOf(bucket, key) : undefined;
    } catch (err) {
      return this.settledInstead(err, bucket, key, plan);
    }
    if (vacant) return plan(vacant);
    return this.onLeader(bucket, key, () => this.d.star.readPlan(bucket, key, start, maxEntries));
  }

  /** Watches a stream this star leads (callers lead it first: leadStream). */
  watch(bucket: string, key: string, listener: (ev: StreamEvent) => void): () => void {
    if (!this.d.star.holds(bucket, key)) throw new ServiceError('unavailable', `stream ${bucket}/${key} moved to another star; reopen`);
    return this.d.star.watch(bucket, key, listener);
  }

  settle(): Promise<void> { return this.d.star.settle(); }

  /** Membership and leases as the admin views show them. */
  view(): ClusterView {
    return {
      drain: (starId, decommission) => this.drain(starId, decommission),
      stars: async () => (await this.d.pg.stars()).map((st) => ({
        star_id: st.star_id, address: st.grpc_address, state: st.state, started_unix_ms: Number(st.started_unix_ms),
        gone: st.heartbeat_age_ms >= STAR_GONE_AFTER_MS,
      })),
      leaderOf: async (bucket, key) => {
        const h = await this.d.pg.holderOf(bucket, key);
        return h && h.remaining_ms > 0 ? h.holder : '';
      },
      epochOf: async (bucket, key) => (await this.d.pg.holderOf(bucket, key))?.epoch ?? 0,
      // The admin views answer on any star, from the leader's memory here or from what is committed.
      stream: async (bucket, key) => {
        if (this.d.star.holds(bucket, key)) return this.d.star.getStream(bucket, key);
        const { row } = await this.d.metadata.readStream(bucket, key);
        if (!row) throw new ServiceError('not_found', `stream ${bucket}/${key} not found`);
        return { ...streamInfo(row), fencing_token: row.fencing_token };
      },
      tail: async (bucket, key) => (this.d.star.holds(bucket, key) ? this.d.star.checkTail(bucket, key) : (await this.committedOrMissing(bucket, key)).tail()),
      read: async (bucket, key, opts) => (this.d.star.holds(bucket, key) ? this.d.star.read(bucket, key, opts) : (await this.committedOrMissing(bucket, key)).read(opts)),
    };
  }
}

function streamInfo(s: StreamMeta): StreamInfo {
  return streamInfoOf(s, s.config as unknown as StreamConfig);
}

