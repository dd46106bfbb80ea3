// A star: the StreamService over one data dir. Owns every stream's sequencing on the main thread,
// hands sequenced frames to the log ring, acknowledges on the flusher's durable offset, settles
// sealed WAL files into segments, and enforces trim and retention.

import {
  APPEND_PACE_WAIT_MS_MAX, DORMANT_RETIRE_SLICE_STREAMS, LEASE_IDLE_MS, LIST_PAGE_MAX, MATCH_MISS_DRAIN_WAITS_MAX, READ_BYTES_MAX, READ_RECORDS_MAX, RETENTION_SWEEP_MS, STAR_INFLIGHT_BYTES_MAX,
  STREAM_INFLIGHT_BYTES_MAX, WAL_FILE_BYTES_MAX, WAL_SETTLE_AFTER_MS, SUBSCRIPTIONS_PER_STAR_MAX, UNSETTLED_BYTES_MAX, IDLE_UNSETTLED_HOLD_MS_MAX, DRAIN_HANDOFF_MS_MAX,
} from '../config/limits.ts';
import { FrameArena } from './frame-arena.ts';
import { contentBytes, encodeBatch, encodeRotate, patchBatch, type CodecRecord } from '../storage/format/record-codec.ts';
import type { BucketMeta, MetadataStore, MetaState, SegmentMeta, StreamMeta } from '../storage/metadata/metadata-store.ts';
import { packRow, packedHasSegments, packedStreamId, unpackRow, unpackRowHead, type PackedRow } from '../storage/metadata/packed-row.ts';
import type { ObjectStore } from '../storage/objects/object-store.ts';
import { checkStoredSegments } from '../storage/segments/segment-check.ts';
import { OrderedMap } from './ordered-keys.ts';
import { ServiceError, credentialExpired, invalid, notFound } from './errors.ts';
import { PageReader } from './page-reader.ts';
import { Buckets } from './buckets.ts';
import { StreamReads } from './reads.ts';
import { Settling } from './settling.ts';
import { Retention, movedAway } from './retention.ts';
import { invariant } from './invariant.ts';
import { ObjectReclaimer } from './object-reclaimer.ts';
import { Auditor } from './auditor.ts';
import { soleLeadership, type Clock, type Ids, type Leadership, type LogPort, type SegmentChecker, type SegmentSettler, type Timers, type WalJanitor } from './ports.ts';
import { checkBatchCaps, checkFence, checkMatch, pace, stampTimestamps, type PaceState } from './sequencer.ts';
import type {
  BucketCreate, ListPage, PlanResult, PlanStart, StreamConfigInput, StreamCreate, StreamEvent, StreamService, Subscription,
} from './service-api.ts';
import { ROWS_IDLE, StreamState, heldBatch, holdBatch, streamInfoOf, type CommittedBatch, type MemBatch } from './stream-state.ts';
import { LiveSubscription } from './subscription.ts';
import {
  namedSeqText, streamDefaultsOf, type AppendAck, type AppendInput, type BucketConfig, type BucketInfo, type EncodedBatch, type RecordInput,
  type Position, type ReadOptions, type ReadResult, type ReadStart, type StreamConfig, type StreamInfo,
} from './types.ts';

export interface StarDeps {
  clock: Clock;
  timers: Timers;
  ids: Ids;
  log: LogPort;
  /** Who leads each stream, at which epoch (default: this star alone, every stream, epoch 0). */
  leadership?: Leadership;
  metadata: MetadataStore;
  objects: ObjectStore;
  settler: SegmentSettler;
  /** How the auditor checks a settled segment (default: fetched and checked on this thread). */
  segmentChecker?: SegmentChecker;
  wal: WalJanitor;
  /** WAL file the flusher writes first (after recovery). */
  walFileNo: number;
  readRecordsMax?: number;
  readBytesMax?: number;
  /** A WAL file is sealed and settled at this size (default WAL_FILE_BYTES_MAX) … */
  walFileBytesMax?: number;
  /** … or this long after it was opened, when it holds anything (default WAL_SETTLE_AFTER_MS). */
  walSettleAfterMs?: number;
  log_error?: (msg: string, err?: unknown) => void;
  /** The express storage class's bucket; '' or absent when none is set, and then no stream may be
   *  switched to express (spec: States, PATCH). */
  expressBucket?: string;
  /** This star's name, in refusals a caller may get through another star's hop (default 'this star'). */
  starId?: string;
  /** How long a stream stays leased after its last append (default LEASE_IDLE_MS). */
  leaseIdleMs?: number;
  /** A star alone: a stream idle this long with nothing of it only in memory goes dormant (its
   *  state dropped, its row kept) and is made live again by the next call on it. Absent or 0: never
   *  (a cluster's leadership lets idle streams go instead). */
  dormantAfterMs?: number;
  /** How long a segment no row points at stays in the object store: the read-plan validity, so a
   *  vended URL keeps answering until it expires (default 0: deleted at once). */
  objectGraceMs?: number;
  /** How often the auditor verifies every named segment again (0: only when settled). */
  auditScrubMs?: number;
  /** A stream left this star without being deleted (a cluster: its lease moved, or a commit of it
   *  failed); the leadership forgets it too. */
  onEvicted?: (bucket: string, key: string) => void;
}

/** The client's time of record i, as stampTimestamps reads it (module-level: no closure per append). */
const recordClientTs = (recs: readonly RecordInput[], i: number): number | undefined => recs[i].timestamp_ms;
const encodedClientTs = (e: EncodedBatch, i: number): number | undefined => (Number.isNaN(e.clientTs[i]) ? undefined : e.clientTs[i]);

/** The refusals sequence() would make of `input` from its stream's config alone (timestamps under
 *  the timestamping mode, the batch caps), made on the config an autocreating append would create
 *  its stream with, before creating it: a refused append leaves nothing behind. */
function checkFirstBatch(config: StreamConfig, input: AppendInput, arrivalMs: number): void {
  if (input.encoded) {
    const e = input.encoded;
    stampTimestamps(e.recordOffsets.length, e, encodedClientTs, config, arrivalMs, 0);
    checkBatchCaps(config, e.recordOffsets.length, e.contentBytes);
    return;
  }
  const recs = input.records;
  stampTimestamps(recs.length, recs, recordClientTs, config, arrivalMs, 0);
  let content = 0;
  for (const r of recs) content += contentBytes({ headers: r.headers, body: r.body });
  checkBatchCaps(config, recs.length, content);
}

/** A promise's settling functions, taken by one module-level executor: `new Promise(captureSettlers)`
 *  runs it at once, and the caller reads them right after. An executor closing over the append's
 *  variables made V8 keep them in a context of their own, a closure and a context per append. */
let capturedResolve!: (a: AppendAck) => void;
let capturedReject!: (e: unknown) => void;
const captureSettlers = (resolve: (a: AppendAck) => void, reject: (e: unknown) => void): void => {
  capturedResolve = resolve;
  capturedReject = reject;
};

/** An append sequenced into the ring, waiting for the flusher's durable offset to pass `end`. */
interface PendingEntry {
  end: number;
  st?: StreamState;
  batch?: MemBatch;
  /** The batch's first timestamp, for its ack (the held batch keeps only the last). */
  minTs?: number;
  frameBytes: number;
  /** The leadership epoch the batch was sequenced at: it is acknowledged only at that epoch. */
  epoch?: number;
  resolve?: (a: AppendAck) => void;
  reject?: (e: unknown) => void;
  /** A ROTATE marker: the file it closes settles once it is durable. */
  sealedFileNo?: number;
  /** A ROTATE marker's: resolves `lastSealed` once the file is sealed and queued to settle. */
  onSealed?: () => void;
}

const addr = (bucket: string, key: string): string => `${bucket}\u0000${key}`;
/** A dormant stream's row, unpacked from its address (bucket names hold no NUL; keys may). */
const rowOf = (a: string, packed: PackedRow): StreamMeta => {
  const i = a.indexOf('\u0000');
  return unpackRow(a.slice(0, i), a.slice(i + 1), packed);
};

export class Star implements StreamService {
  private readonly d: StarDeps;
  private readonly leadership: Leadership;
  private readonly buckets: Buckets;
  private readonly streams = new Map<string, StreamState>();
  /** The same streams by stream id (a cluster's commit log and settler look them up by the frames' id). */
  private readonly byId = new Map<string, StreamState>();
  /** Every stream of each bucket in key order, for listing: the live state, or a dormant one's row. */
  private readonly byBucket = new Map<string, OrderedMap<StreamState | PackedRow>>();
  /** Dormant streams by address: only their row is kept (see wake() and retireIdle()). */
  private readonly dormant = new Map<string, PackedRow>();
  /** Where the retirement of idle streams goes on (see retireIdle), and whether its next slice waits. */
  private retireCursor: IterableIterator<[string, StreamState]> | undefined;
  private retireScheduled = false;
  /** Streams that went dormant and that woke since start (metrics, the simulation). */
  readonly dormancy = { retired: 0, woken: 0 };
  private readonly deleted = new Set<string>();
  /** Streams whose last row write failed (StreamState.suspect), read back by reconcile(). */
  private readonly suspectStreams = new Set<StreamState>();
  private reconciling = false;
  private readonly reader: PageReader;
  /** Where reads start and what a page or a plan holds (core/reads.ts). */
  private readonly reads: StreamReads;
  /** Memory for the frames this star sequences, kept until their WAL file settles. */
  private readonly frames = new FrameArena();
  private pending: PendingEntry[] = [];
  /** The ring offset the newest entry ends at (each entry ends past the one before). */
  private lastEnd = 0;
  private pendingHead = 0;
  private inflightBytes = 0;
  /** Committed bytes held in memory until their WAL file settles (bounded by UNSETTLED_BYTES_MAX). */
  private unsettledBytes = 0;
  /** True while committed bytes waiting to settle fill more than half of UNSETTLED_BYTES_MAX: a
   *  cluster's sweep then leads no more vacant streams (adopting their tails would refuse appends). */
  get unsettledHalfFull(): boolean { return this.unsettledBytes > UNSETTLED_BYTES_MAX / 2; }
  /** The WAL failed and the sequencer has not yet seen it recover (see durableLoop). */
  private walDown = false;
  private walFileNo: number;
  private walFileBytes = 0;
  private walFileOpenedMs = 0;
  /** Sealed WAL files into segments, in order (core/settling.ts). */
  private readonly settling: Settling;
  /** Trim and retention: where each stream's watermark goes (core/retention.ts). */
  private readonly retention: Retention;
  /** Deletes unreferenced segments once read plans that name them have expired. */
  private readonly reclaimer: ObjectReclaimer;
  /** Deletions waiting out the read grace, settled segments to verify, what was found (admin plane). */
  readonly auditor: Auditor;
  /** Resolves once the newest ROTATE is durable and its file is queued to settle (see settle()). */
  private lastSealed: Promise<void> = Promise.resolve();
  private subscriptions = 0;
  private closed = false;
  private timers: { cancel(): void }[] = [];
  private readonly walFileBytesMax: number;
  private readonly walSettleAfterMs: number;

  constructor(deps: StarDeps) {
    this.d = deps;
    this.leadership = deps.leadership ?? soleLeadership;
    this.buckets = new Buckets({
      metadata: deps.metadata, clock: deps.clock, expressBucket: deps.expressBucket, starName: this.starName(),
      streamsIn: (name) => this.byBucket.get(name)?.size ?? 0,
    });
    this.reader = new PageReader(deps.objects);
    this.reads = new StreamReads(this.reader, deps.readRecordsMax ?? READ_RECORDS_MAX, deps.readBytesMax ?? READ_BYTES_MAX);
    this.reclaimer = new ObjectReclaimer(deps.objects, deps.clock, deps.objectGraceMs ?? 0, (m) => deps.log_error?.(m));
    this.auditor = new Auditor(deps.segmentChecker ?? { check: (segs) => checkStoredSegments(deps.objects, segs) }, this.reclaimer, deps.clock,
      (bucket, key, id, objectKey) => this.rowAt(bucket, key, id)?.segments.some((x) => x.object_key === objectKey) ?? false, (m) => deps.log_error?.(m),
      { scrubMs: deps.auditScrubMs ?? 0, defer: (fn) => deps.timers.defer(fn) });
    this.settling = new Settling(deps, {
      withRows: (sts, fn) => this.withRows(sts, fn),
      rowWrite: (sts, write) => this.rowWrite(sts, write),
      settled: (bytes) => { this.unsettledBytes -= bytes; },
      dropObject: (key) => this.dropObject(key),
      segmentSettled: (st, seg) => this.auditor.settled(st.meta.bucket, st.meta.key, st.streamId, seg),
      closed: () => this.closed,
    });
    this.retention = new Retention({ metadata: deps.metadata, reader: this.reader, log_error: deps.log_error }, {
      withRows: (sts, fn) => this.withRows(sts, fn),
      rowWrite: (sts, write) => this.rowWrite(sts, write),
      dropObject: (key, st) => this.dropObject(key, st),
    });
    this.walFileNo = deps.walFileNo;
    this.walFileBytesMax = deps.walFileBytesMax ?? WAL_FILE_BYTES_MAX;
    this.walSettleAfterMs = deps.walSettleAfterMs ?? WAL_SETTLE_AFTER_MS;
  }

  // ---------------------------------------------------------------- lifecycle

  /** Loads metadata, then replays the recovered WAL frames onto it. */
  open(
    state: MetaState,
    recovered: Iterable<{ fileNo: number; streamId: string; firstSeq: number; count: number; frame: Buffer; timestamps: number[]; contentBytes: number }>,
    walFiles: readonly number[] = [],
  ): void {
    this.buckets.load(state.buckets);
    // With dormancy on, every stream starts dormant and only those the WAL holds records of wake: a
    // restart over many streams builds their states as they are used, not all at once.
    state.streams.forEach((bucket, key, packed) => {
      if (this.d.dormantAfterMs) this.rest(bucket, key, packed);
      else {
        const s = unpackRow(bucket, key, packed);
        this.addStream(new StreamState(s, this.configOf(s)));
      }
    });
    for (const d of state.deleted) this.deleted.add(addr(d.bucket, d.key));
    // Only the streams the WAL holds frames of are looked up by id.
    const frames = [...recovered];
    const ids = new Set(frames.map((f) => f.streamId));
    const addrById = new Map<string, string>();
    if (ids.size > 0) {
      state.streams.forEach((bucket, key, packed) => {
        const id = packedStreamId(packed);
        if (ids.has(id)) addrById.set(id, addr(bucket, key));
      });
    }
    for (const f of frames) {
      const a = addrById.get(f.streamId);
      const st = a === undefined ? undefined : this.wake(a);
      if (!st || f.firstSeq + f.count <= st.tail) continue; // deleted stream, or already settled
      if (f.firstSeq !== st.tail) {
        // A gap means records are missing from both the WAL and the segments: never paper over it.
        // The frame is not served, and its file is kept (pinned) for an operator to inspect.
        this.d.log_error?.(`recovery: stream ${st.streamId} frame at ${f.firstSeq} does not follow tail ${st.tail}; not served, WAL file ${f.fileNo} kept`);
        this.settling.pin(f.fileNo);
        continue;
      }
      const batch = heldBatch({
        firstSeq: f.firstSeq, count: f.count, frame: f.frame, maxTs: f.timestamps[f.timestamps.length - 1] ?? 0, contentBytes: f.contentBytes,
      }, f.fileNo);
      st.commitBatch(batch);
      this.unsettledBytes += batch.frameBytes;
      st.nextSeq = st.tail;  // recovery: no waiters yet
      st.lastSeqTs = st.tailTs;
      this.settling.touch(f.fileNo, st);
    }
    // Every recovered file is sealed (the flusher starts a fresh one). Settle them in order; files
    // whose frames are all settled already, or belong to deleted streams, or are empty, are removed.
    const sealed = new Set([...walFiles, ...this.settling.filesWithRecords()]);
    for (const fileNo of [...sealed].sort((a, b) => a - b)) this.settling.enqueue(fileNo);
    this.walFileOpenedMs = this.d.clock.nowMs();
    this.timers.push(this.d.timers.setInterval(() => this.sweep(), RETENTION_SWEEP_MS));
    void this.durableLoop();
  }

  /** Call after the flusher has drained the ring and stopped: appends it made durable are
   *  acknowledged, any others fail (the caller may retry against the next start). */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) t.cancel();
    this.commitDurable();
    this.failPending(new ServiceError('unavailable', 'the star is shutting down'));
    for (const st of this.streams.values()) st.wake();
  }

  // ---------------------------------------------------------------- leadership (a cluster)

  /** Takes a stream this star now leads: its row as the store holds it and its committed, unsettled
   *  batches in order (read back from object storage). They settle with the current generation. */
  adopt(row: StreamMeta, batches: readonly CommittedBatch[]): void {
    const a = addr(row.bucket, row.key);
    this.dormant.delete(a);
    const old = this.streams.get(a);
    if (old) this.evictState(old);
    const st = new StreamState(row, this.configOf(row));
    this.addStream(st);
    this.deleted.delete(a);
    for (const b of batches) {
      if (b.firstSeq !== st.tail) throw new Error(`stream ${st.streamId}: committed chunk at ${b.firstSeq} does not follow ${st.tail}`);
      const batch = heldBatch(b, this.walFileNo);
      st.commitBatch(batch);
      this.unsettledBytes += batch.frameBytes;
      this.walFileBytes += batch.frameBytes; // so the generation seals and these settle
      this.settling.touch(this.walFileNo, st);
    }
    st.nextSeq = st.tail;
    st.lastSeqTs = st.tailTs;
    // Taking the lead counts as use: the idle timeout runs from here, not from the epoch.
    st.lastAppendMs = this.d.clock.nowMs();
    // What a previous leader committed and did not settle settles now, not at the next size or
    // time rotation: its chunks leave PostgreSQL and the next takeover reads less.
    if (batches.length > 0) this.rotate();
  }

  /** An address this star leads that has no stream: deleted (idempotent deletes answer so) or never made. */
  adoptAbsent(bucket: string, key: string, deleted: boolean): void {
    const a = addr(bucket, key);
    const old = this.streams.get(a);
    if (old) this.evictState(old);
    if (deleted) this.deleted.add(a);
    else this.deleted.delete(a);
  }

  /** Lets go of a stream this star no longer leads; its callers are told to retry. */
  evict(bucket: string, key: string): void {
    this.forgetDormant(bucket, key);
    const st = this.streams.get(addr(bucket, key));
    if (st) this.evictState(st);
    this.deleted.delete(addr(bucket, key));
  }

  private evictState(st: StreamState): void {
    if (st.evicted) return;
    st.evicted = true;
    this.unsettledBytes -= st.memBytes();
    st.mem.length = 0;
    if (st.suspect) { st.suspect = false; this.suspectStreams.delete(st); }
    this.dropStream(st);
    st.emit({ kind: 'moved' });
    this.d.onEvicted?.(st.meta.bucket, st.meta.key);
  }

  /** The bucket as the shared store holds it now (absent: deleted). */
  syncBucket(name: string, row: BucketMeta | undefined): void {
    this.buckets.sync(name, row);
  }

  /** True when nothing keeps the stream on this star: no append in flight or for `idleMs`, nobody
   *  watching or subscribed, nothing waiting to settle. A leader lets such a stream go (it goes
   *  vacant). Let go unsettled, its chunks would stay until a sweep leads it again: read back from
   *  object storage by every read meanwhile. Only a star whose settling has failed for
   *  IDLE_UNSETTLED_HOLD_MS_MAX lets an unsettled stream go (its chunks are durable; the sweep of
   *  the stream's home star settles them), so one stuck settle does not pin every stream here. */
  idle(bucket: string, key: string, idleMs: number): boolean {
    const st = this.streams.get(addr(bucket, key));
    if (!st) return true;
    const quietMs = this.d.clock.nowMs() - st.lastAppendMs;
    return !st.watched && st.subscribers === 0 && st.inflightBytes === 0 && !st.metaPending && !st.suspect && quietMs >= idleMs
      && (st.mem.length === 0 || quietMs >= idleMs + IDLE_UNSETTLED_HOLD_MS_MAX);
  }

  /** True when nothing of the stream is being committed or written: no append in flight, no row
   *  write pending. A draining leader hands such a stream over without failing anyone's append. */
  quiet(bucket: string, key: string): boolean {
    const st = this.streams.get(addr(bucket, key));
    return !st || (st.inflightBytes === 0 && !st.metaPending);
  }

  /** The frames of a stream this star holds in memory for the given generation and earlier, from
   *  `fromSeq` on (the cluster's settler builds segments from them). */
  framesOf(streamId: string, generation: number, fromSeq: number): Buffer[] {
    const st = this.byId.get(streamId);
    if (!st || st.evicted) return [];
    return st.mem.filter((b) => b.walFileNo <= generation && b.firstSeq >= fromSeq).map((b) => b.frame);
  }

  /** The address of a stream this star holds, by its id. */
  addressOf(streamId: string): { bucket: string; key: string; express: boolean } | undefined {
    const st = this.byId.get(streamId);
    return st && !st.deleted ? { bucket: st.meta.bucket, key: st.meta.key, express: st.config.class === 'express' } : undefined;
  }

  /** Streams held only as their row now (a star alone; see dormantAfterMs). */
  get dormantStreams(): number { return this.dormant.size; }
  /** Streams whose whole state is in memory now. */
  get liveStreams(): number { return this.streams.size; }
  /** The log's end offset after the last sequenced append: it changes with every append (the heap
   *  trimmer's sign of a quiet star). */
  get logEnd(): number { return this.lastEnd; }

  /** Whether this star holds the stream in memory now. */
  holds(bucket: string, key: string): boolean { return this.streams.has(addr(bucket, key)); }

  /** A hand-off (a cluster star lets the stream go: a reconfiguration, so that the next leadership loads
   *  its new config, or a drain that found it never quiet): appends not yet sequenced are refused from
   *  now on (retryable: the next leader takes them), and those already sequenced commit and are
   *  acknowledged first, for at most DRAIN_HANDOFF_MS_MAX. Let go with commits in flight, those
   *  answered "not acknowledged; retry" although they had landed, and a producer that retried wrote
   *  them twice. */
  async quiesce(bucket: string, key: string): Promise<void> {
    const st = this.streams.get(addr(bucket, key));
    if (st === undefined || st.deleted) return;
    st.handingOff = true;
    await new Promise<void>((resolve) => {
      const bound = this.d.timers.setTimeout(resolve, DRAIN_HANDOFF_MS_MAX);
      void st.drained().then(() => { bound.cancel(); resolve(); });
    });
  }

  // ---------------------------------------------------------------- buckets

  async createBucket(name: string, body: BucketCreate): Promise<BucketInfo> { return this.buckets.create(name, body); }
  getBucket(name: string): BucketInfo { return this.buckets.info(this.buckets.require(name)); }
  async updateBucket(name: string, body: Partial<BucketConfig>): Promise<BucketInfo> { return this.buckets.update(name, body); }
  listBuckets(startAfter: string, limit: number): ListPage<BucketInfo> { return this.buckets.list(startAfter, limit); }

  async deleteBucket(name: string): Promise<void> {
    await this.buckets.delete(name);
    for (const a of [...this.deleted]) if (a.startsWith(`${name}\u0000`)) this.deleted.delete(a);
  }

  // ---------------------------------------------------------------- streams

  private configOf(s: Pick<StreamMeta, 'config'>): StreamConfig {
    return s.config as unknown as StreamConfig;
  }

  private addStream(st: StreamState): void {
    this.streams.set(addr(st.meta.bucket, st.meta.key), st);
    this.byId.set(st.streamId, st);
    let m = this.byBucket.get(st.meta.bucket);
    if (!m) this.byBucket.set(st.meta.bucket, (m = new OrderedMap()));
    m.set(st.meta.key, st);
  }

  private dropStream(st: StreamState): void {
    if (this.streams.get(addr(st.meta.bucket, st.meta.key)) === st) {
      this.streams.delete(addr(st.meta.bucket, st.meta.key));
      this.byBucket.get(st.meta.bucket)?.delete(st.meta.key);
    }
    if (this.byId.get(st.streamId) === st) this.byId.delete(st.streamId);
    st.deleted = true;
    st.wake();
  }

  private requireStream(bucket: string, key: string): StreamState {
    const st = this.wake(addr(bucket, key));
    if (!st) {
      if (!this.buckets.has(bucket)) throw notFound(`bucket ${bucket} not found`);
      throw notFound(`stream ${bucket}/${key} not found`);
    }
    st.lastUsedMs = this.d.clock.nowMs();
    return st;
  }

  // ---------------------------------------------------------------- dormant streams (a star alone)

  /** The live state of the stream at `a`, making a dormant one live again from its row. */
  private wake(a: string): StreamState | undefined {
    const st = this.streams.get(a);
    if (st) return st;
    const packed = this.dormant.get(a);
    if (packed === undefined) return undefined;
    this.dormant.delete(a);
    const row = rowOf(a, packed);
    this.dormancy.woken += 1;
    const woken = new StreamState(row, this.configOf(row));
    woken.lastUsedMs = this.d.clock.nowMs();
    this.addStream(woken);
    return woken;
  }

  /** Keeps only the row of a stream, packed (listing still finds it there). */
  private rest(bucket: string, key: string, packed: PackedRow): void {
    this.dormant.set(addr(bucket, key), packed);
    let m = this.byBucket.get(bucket);
    if (!m) this.byBucket.set(bucket, (m = new OrderedMap()));
    m.set(key, packed);
  }

  private forgetDormant(bucket: string, key: string): void {
    if (this.dormant.delete(addr(bucket, key))) this.byBucket.get(bucket)?.delete(key);
  }

  /** Streams idle for dormantAfterMs whose state holds nothing beyond their row go dormant. A
   *  stream with a retention setting stays live: the retention sweep visits it every second. */
  private retireIdle(): void {
    const afterMs = this.d.dormantAfterMs;
    if (!afterMs || this.closed) return;
    const nowMs = this.d.clock.nowMs();
    // In slices of DORMANT_RETIRE_SLICE_STREAMS streams looked at, the next one deferred behind
    // pending I/O: each retired stream is packed on the main thread, and 50,000 going idle at once held
    // it for a quarter of a second; a fixed number per sweep instead let a burst of creations outrun
    // it. The cursor stays valid while the map changes (a Map iterator skips deleted entries).
    const it = (this.retireCursor ??= this.streams.entries());
    for (let left = DORMANT_RETIRE_SLICE_STREAMS; left > 0; left--) {
      const next = it.next();
      if (next.done) {
        this.retireCursor = undefined;
        return;
      }
      const [a, st] = next.value;
      if (nowMs - Math.max(st.lastAppendMs, st.lastUsedMs) < afterMs || !st.restsInRow()) continue;
      if (st.config.retention_max_age_ms || st.config.retention_max_bytes) continue;
      this.streams.delete(a);
      if (this.byId.get(st.streamId) === st) this.byId.delete(st.streamId);
      st.retired = true;
      this.dormancy.retired += 1;
      // The store's own string when it holds the same row (it does once the row's last write landed):
      // one copy of the row, not two.
      const packed = packRow(st.meta);
      const stored = this.d.metadata.packedStream?.(st.meta.bucket, st.meta.key);
      this.rest(st.meta.bucket, st.meta.key, stored === packed ? stored : packed);
    }
    this.retireScheduled = true;
    this.d.timers.defer(() => {
      this.retireScheduled = false;
      this.retireIdle();
    });
  }

  /** How a refusal names this star: in a cluster the caller may have asked another star, which
   *  relayed the answer of the stream's leader. */
  private starName(): string {
    return this.d.starId ? `star ${this.d.starId}` : 'this star';
  }

  /** The row of the stream at (bucket, key), live or dormant, when it is still the stream `id` (the
   *  auditor asks whether a segment is still named). */
  private rowAt(bucket: string, key: string, id: string): StreamMeta | undefined {
    const a = addr(bucket, key);
    const packed = this.dormant.get(a);
    const row = this.streams.get(a)?.meta ?? (packed === undefined ? undefined : rowOf(a, packed));
    return row?.stream_id === id ? row : undefined;
  }

  private async newStream(bucket: BucketMeta, key: string, body: StreamCreate): Promise<StreamState> {
    const config = streamDefaultsOf(bucket.config as unknown as BucketConfig);
    for (const k of Object.keys(config) as (keyof StreamConfig)[]) {
      const v = body[k];
      if (v !== undefined && v !== '') (config as unknown as Record<string, unknown>)[k] = v;
    }
    if (config.class === 'express' && !this.d.expressBucket) {
      // Refused before anything is written, as a switch to express is: nowhere to put its objects.
      throw invalid(`${this.starName()} has no express bucket set (--express-bucket); a stream of class express cannot be created here`);
    }
    const meta: StreamMeta = {
      stream_id: this.d.ids.uuid(), bucket: bucket.name, key, config: config as unknown as Record<string, unknown>, // one object, never changed in place
      created_at_unix_ms: this.d.clock.nowMs(), creation_token: body.creation_token ?? '', fencing_token: '',
      trim_seq: 0, settled_end_seq: 0, settled_end_ts: 0, segments: [],
    };
    const st = new StreamState(meta, config);
    this.addStream(st);
    const wasDeleted = this.deleted.delete(addr(bucket.name, key));
    // Appends must not be acknowledged before the stream they belong to is durable.
    try {
      await st.gate(this.withRows([st], () => this.rowWrite([st], this.d.metadata.putStream(meta))));
    } catch (err) {
      // Not durable: the stream never existed. Callers waiting on it see it gone.
      this.dropStream(st);
      if (wasDeleted) this.deleted.add(addr(bucket.name, key));
      throw err;
    }
    return st;
  }

  async createStream(bucket: string, key: string, body: StreamCreate): Promise<StreamInfo> {
    const b = this.buckets.require(bucket);
    const existing = this.wake(addr(bucket, key));
    if (existing) {
      const token = body.creation_token ?? '';
      if (token !== '' && existing.meta.creation_token === token) {
        if (existing.metaPending) await existing.metaPending; // converge only once it is durable
        if (!existing.deleted) return existing.info();
        return this.createStream(bucket, key, body);
      }
      throw new ServiceError('already_exists', `stream ${bucket}/${key} already exists`);
    }
    return (await this.newStream(b, key, body)).info();
  }

  getStream(bucket: string, key: string): StreamInfo & { fencing_token: string } {
    const st = this.requireStream(bucket, key);
    return { ...st.info(), fencing_token: st.meta.fencing_token };
  }

  /** A star alone leads every stream: getStream. */
  leadStream(bucket: string, key: string): StreamInfo & { fencing_token: string } {
    return this.getStream(bucket, key);
  }

  async reconfigureStream(bucket: string, key: string, patch: StreamConfigInput): Promise<StreamInfo> {
    const st = this.requireStream(bucket, key);
    const b = this.buckets.require(bucket);
    // Built from the config the previous row write left (under the row lock), so two concurrent
    // reconfigures never undo each other.
    const retentionChanged = await this.withRows([st], () => this.reconfigureLocked(st, b, bucket, key, patch));
    // Retention takes effect immediately (spec: States), not at the next background sweep. It takes
    // the row lock itself, so it runs once the config's write has released it.
    if (retentionChanged) await this.retention.apply(st, this.d.clock.nowMs());
    return st.info();
  }

  /** Writes the patched config; answers whether retention changed. */
  private async reconfigureLocked(st: StreamState, b: BucketMeta, bucket: string, key: string, patch: StreamConfigInput): Promise<boolean> {
    if (st.evicted) throw movedAway(st); // as trim and fence: evicted while it waited for the lock
    if (st.deleted) throw notFound(`stream ${bucket}/${key} not found`);
    const defaults = streamDefaultsOf(b.config as unknown as BucketConfig);
    const config = { ...st.config };
    for (const k of Object.keys(config) as (keyof StreamConfig)[]) {
      const v = patch[k];
      if (v === undefined) continue;
      (config as unknown as Record<string, unknown>)[k] = v === '' ? defaults[k] : v;
    }
    if (config.class === 'express' && st.config.class !== 'express' && !this.d.expressBucket) {
      // Refused before anything is written: there is nowhere to put express-class objects.
      throw invalid(`${this.starName()} has no express bucket set (--express-bucket); the stream cannot switch to express`);
    }
    const handoff = needsHandoff(st.config, config);
    const changed = STREAM_CONFIG_FIELDS.some((k) => config[k] !== st.config[k]);
    const retentionChanged = config.retention_max_age_ms !== st.config.retention_max_age_ms || config.retention_max_bytes !== st.config.retention_max_bytes;
    const beforeConfig = st.config;
    st.config = config;
    st.meta = { ...st.meta, config: config as unknown as Record<string, unknown> };
    try {
      await st.gate(this.rowWrite([st], this.d.metadata.putStream(st.meta)));
    } catch (err) {
      if (st.config === config) { st.config = beforeConfig; st.meta = { ...st.meta, config: { ...beforeConfig } }; }
      throw err;
    }
    // A change that alters nothing causes no handoff; retention-only changes take effect in place.
    if (changed) st.emit({ kind: 'reconfigured', handoff, config: { ...config } });
    return retentionChanged;
  }

  async deleteStream(bucket: string, key: string): Promise<void> {
    const a = addr(bucket, key);
    const st = this.wake(a);
    if (!st) {
      // Idempotent on a deleted stream: its deletion was durable before it left memory.
      if (this.deleted.has(a)) return;
      if (!this.buckets.has(bucket)) throw notFound(`bucket ${bucket} not found`);
      throw notFound(`stream ${bucket}/${key} not found`);
    }
    // Durable first, then gone from memory: a failed write leaves the stream as it was, and a crash
    // can never bring back a stream this answer said was gone. Appends wait for the write (gate) and
    // are then refused; one in flight is refused when it commits.
    await st.gate(this.withRows([st], async () => {
      if (st.deleted) return; // a concurrent delete got there first
      await this.rowWrite([st], this.d.metadata.deleteStream(bucket, key));
      this.forgetStream(st);
    }));
    // Reclaimed later: gone for every caller already.
    for (const s of st.meta.segments) this.dropObject(s.object_key, st);
  }

  /** A stream whose deletion is durable leaves memory. */
  private forgetStream(st: StreamState): void {
    const a = addr(st.meta.bucket, st.meta.key);
    if (this.streams.get(a) === st) {
      this.streams.delete(a);
      this.byBucket.get(st.meta.bucket)?.delete(st.meta.key);
    }
    if (this.byId.get(st.streamId) === st) this.byId.delete(st.streamId);
    this.deleted.add(a);
    st.deleted = true;
    this.unsettledBytes -= st.memBytes();
    st.mem.length = 0;
    st.wake();
    st.emit({ kind: 'deleted' });
  }

  listStreams(bucket: string, startAfter: string, limit: number): ListPage<StreamInfo> {
    this.buckets.require(bucket);
    // Keys are listed in the order of their bytes (keys are byte strings; cursors carry the bytes).
    const m = this.byBucket.get(bucket);
    if (!m) return { items: [], next: '' };
    const { entries, more } = m.page(startAfter, Math.min(Math.max(limit, 1), LIST_PAGE_MAX));
    return {
      items: entries.map(([key, e]) => {
        if (e instanceof StreamState) return e.info();
        const head = unpackRowHead(bucket, key, e);
        return streamInfoOf(head, this.configOf(head));
      }),
      next: more ? entries[entries.length - 1][0] : '',
    };
  }

  // ---------------------------------------------------------------- append

  /** Sequences a batch into the ring; the promise settles when the flusher has made it durable.
   *  Not async: the common case returns the pending ack itself, since an async function that
   *  returns a promise costs extra microtask turns on every append. */
  append(bucket: string, key: string, input: AppendInput): Promise<AppendAck> {
    // Woken first: a dormant stream's throughput cap holds on the append that wakes it too.
    const st = this.wake(addr(bucket, key));
    if (st && st.config.throughput_max_bytes_per_second > 0) return this.appendPaced(st, bucket, key, input);
    if (st && !st.metaPending && input.chain?.waiting === undefined && (input.match_seq_num === undefined || input.match_seq_num === st.nextSeq)) {
      try {
        return this.sequence(st, bucket, key, input);
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return this.appendAfterWaits(bucket, key, input);
  }

  /** An append to a stream with a throughput cap: it waits its turn under the cap (as Kafka's quotas
   *  delay the answer) on whatever transport it came, up to APPEND_PACE_WAIT_MS_MAX; past that it is
   *  refused with 429 and takes nothing from the bucket. */
  private async appendPaced(st: StreamState, bucket: string, key: string, input: AppendInput): Promise<AppendAck> {
    const p = this.paceTurn(st.paced, st.config.throughput_max_bytes_per_second, input);
    st.paced = p.next;
    if (p.waitMs > 0) await new Promise<void>((resolve) => { this.d.timers.setTimeout(resolve, p.waitMs); });
    return this.appendAfterWaits(bucket, key, input);
  }

  /** The append's turn under a throughput cap of `rateBps` from the token bucket `state`; refused when
   *  the wait would pass APPEND_PACE_WAIT_MS_MAX or outlast the caller's credential. */
  private paceTurn(state: PaceState | undefined, rateBps: number, input: AppendInput): { waitMs: number; next: PaceState } {
    const bytes = input.encoded ? input.encoded.contentBytes : input.records.reduce((n, r) => n + contentBytes(r), 0);
    const p = pace(state, rateBps, this.d.clock.nowMs(), bytes);
    if (p.waitMs > APPEND_PACE_WAIT_MS_MAX) {
      throw new ServiceError('resource_exhausted', `the stream's throughput cap (${rateBps} bytes/s) is reached; retry in ${Math.ceil(p.waitMs / 1000)} s`);
    }
    // A wait that outlasts the caller's credential is refused now, taking nothing from the bucket.
    if (input.deadlineMs !== undefined && this.d.clock.nowMs() + p.waitMs >= input.deadlineMs) throw credentialExpired();
    return p;
  }

  /** An append that must first wait: for its stream to be created or its metadata to be written,
   *  or for in-flight appends to commit so a match_seq_num mismatch reports the committed tail. A batch
   *  of a producer session that waits for the drain holds the session's later batches behind it
   *  (chain.waiting): they do not wait for the drain themselves, and would otherwise be appended ahead
   *  of it, or after it was refused. */
  private async appendAfterWaits(bucket: string, key: string, input: AppendInput): Promise<AppendAck> {
    const chain = input.chain;
    let turn: { promise: Promise<void>; release: () => void } | undefined;
    /** Sequenced or refused: the session's later batches go on (refused, if this one was). */
    const letGo = (): void => {
      if (turn === undefined || chain === undefined) return;
      if (chain.waiting === turn.promise) chain.waiting = undefined;
      turn.release();
      turn = undefined;
    };
    try {
      let st = this.wake(addr(bucket, key));
      if (!st) {
        const b = this.buckets.require(bucket);
        if (!(b.config as unknown as BucketConfig).create_stream_on_append) throw notFound(`stream ${bucket}/${key} not found`);
        st = this.streams.get(addr(bucket, key));
        if (!st) {
          // What the new stream would refuse is refused before it is made: a refused append leaves
          // nothing behind (spec: "On a miss: 412 with tail, nothing appended").
          const defaults = streamDefaultsOf(b.config as unknown as BucketConfig);
          checkFence('', defaults.producer_policy, input.fencing_token);
          checkMatch(input.match_seq_num, 0, { seq_num: 0, timestamp_ms: 0 });
          checkFirstBatch(defaults, input, this.d.clock.nowMs());
          if (defaults.throughput_max_bytes_per_second > 0) this.paceTurn(undefined, defaults.throughput_max_bytes_per_second, input);
          const created = this.newStream(b, key, {});
          const made = this.streams.get(addr(bucket, key));
          // Not made: refused before anything was written (its config); the creation says why.
          if (!made) return await created.then(() => { throw notFound(`stream ${bucket}/${key} not found`); });
          st = made;
          void created.catch(() => undefined);
          // The creating append waits its turn under the new stream's throughput cap like any other.
          if (st.config.throughput_max_bytes_per_second > 0) return await this.appendPaced(st, bucket, key, input);
        }
      }
      let drainWaits = 0;
      for (;;) {
        if (st.metaPending) { await st.metaPending; continue; } // call order is kept: one shared promise
        // An earlier batch of this session waits for the drain: this one goes after it.
        if (chain?.waiting !== undefined && chain.waiting !== turn?.promise) { await chain.waiting; continue; }
        // A mismatch is reported with the committed tail as the next value to try, so it is refused
        // only while nothing is in flight: wait for in-flight appends to commit, again when others were
        // sequenced meanwhile (at most MATCH_MISS_DRAIN_WAITS_MAX times), but only after every other
        // refusal had its chance to answer at once.
        if (input.match_seq_num !== undefined && input.match_seq_num !== st.nextSeq && st.nextSeq !== st.tail && drainWaits < MATCH_MISS_DRAIN_WAITS_MAX) {
          this.admit(st, bucket, key, input);
          drainWaits += 1;
          if (chain !== undefined && turn === undefined) {
            let release!: () => void;
            turn = { promise: new Promise<void>((resolve) => { release = resolve; }), release };
            chain.waiting = turn.promise;
          }
          await st.drained();
          continue;
        }
        break;
      }
      const ack = this.sequence(st, bucket, key, input);
      letGo(); // sequenced: the session's later batches go on now, not once this one is durable
      return await ack;
    } catch (err) {
      // Refused before it was sequenced (or its commit failed): no later batch of its session goes.
      if (chain !== undefined) chain.broken = true;
      throw err;
    } finally {
      letGo();
    }
  }

  /** The refusals that do not depend on the tail, in the order they are reported. */
  private admit(st: StreamState, bucket: string, key: string, input: AppendInput): void {
    if (input.deadlineMs !== undefined && this.d.clock.nowMs() >= input.deadlineMs) throw credentialExpired();
    if (input.chain?.broken) throw new ServiceError('unavailable', 'an earlier batch of this producer session was refused, so no later one is appended: reopen the session and send again from the first unacknowledged batch');
    if (st.evicted || st.handingOff) throw movedAway(st);
    if (st.deleted) throw notFound(`stream ${bucket}/${key} not found`);
    if (this.walDown || this.d.log.failed()) throw new ServiceError('unavailable', `the write-ahead log cannot be written (${this.d.log.failureCause()}); not accepting appends until it recovers`);
    // The metadata store is down, or a row write's outcome is still unknown: no ack until the star
    // knows what the store holds (a lost delete or fence may have landed).
    if (!this.metadataReady()) throw new ServiceError('unavailable', 'the metadata store is unavailable; not accepting appends until it is back');
    if (this.unsettledBytes > UNSETTLED_BYTES_MAX) throw new ServiceError('unavailable', 'settling into segments is behind; retry shortly');
    checkFence(st.meta.fencing_token, st.config.producer_policy, input.fencing_token);
  }

  /** Checks and sequences one batch. Every check runs here, after the last wait, and nothing awaits
   *  between them and the copy into the ring, so no append slips past a delete, a fence or a WAL failure.
   *  A refused batch of a producer session breaks its chain here, before anything else runs: a later
   *  batch of the session resuming from a wait in the same turn must find it broken. */
  private sequence(st: StreamState, bucket: string, key: string, input: AppendInput): Promise<AppendAck> {
    if (input.chain === undefined) return this.sequenceChecked(st, bucket, key, input);
    try {
      return this.sequenceChecked(st, bucket, key, input);
    } catch (err) {
      input.chain.broken = true;
      throw err;
    }
  }

  private sequenceChecked(st: StreamState, bucket: string, key: string, input: AppendInput): Promise<AppendAck> {
    this.admit(st, bucket, key, input);
    const epoch = this.leadership.epochOf(bucket, key);
    if (epoch === undefined) throw new ServiceError('unavailable', `this star no longer leads ${bucket}/${key}; retry`);
    // The tail is built only for a mismatch's answer, not on every append.
    if (input.match_seq_num !== undefined && input.match_seq_num !== st.nextSeq) checkMatch(input.match_seq_num, st.nextSeq, st.tailPosition());
    const firstSeq = st.nextSeq;
    const arrival = this.d.clock.nowMs();
    let frame: Buffer;
    let stamps: number[];
    let content = 0;
    let count: number;
    if (input.encoded) {
      const e = input.encoded;
      count = e.recordOffsets.length;
      stamps = stampTimestamps(count, e, encodedClientTs, st.config, arrival, st.lastSeqTs);
      frame = e.frame;
      patchBatch(frame, st.idBytes, firstSeq, e.recordOffsets, stamps);
      content = e.contentBytes;
    } else {
      const recs = input.records;
      count = recs.length;
      stamps = stampTimestamps(count, recs, recordClientTs, st.config, arrival, st.lastSeqTs);
      const coded = new Array<CodecRecord>(count);
      for (let i = 0; i < count; i++) {
        const r = recs[i];
        coded[i] = { timestamp_ms: stamps[i], headers: r.headers, body: r.body };
        content += contentBytes(coded[i]);
      }
      frame = encodeBatch(st.idBytes, firstSeq, coded, undefined, this.frames.alloc);
    }
    checkBatchCaps(st.config, count, content);
    // Past the in-flight caps the producer is pushed back; a lone batch is always admitted, so a batch
    // bigger than a cap is not refused forever.
    const overStream = st.inflightBytes > 0 && st.inflightBytes + frame.length > STREAM_INFLIGHT_BYTES_MAX;
    const overStar = this.inflightBytes > 0 && this.inflightBytes + frame.length > STAR_INFLIGHT_BYTES_MAX;
    if (overStream || overStar) {
      throw new ServiceError('resource_exhausted', 'too many bytes in flight; retry shortly');
    }
    const end = this.d.log.tryAppend(frame);
    if (end < 0) throw new ServiceError('resource_exhausted', 'log ring full; retry shortly');
    // Acks are answered in ring order as the durable offset passes them: the ring must only grow.
    invariant(end > this.lastEnd && firstSeq >= st.tail, () => `stream ${st.streamId}: entry ending ${end} after ${this.lastEnd}, sequenced at ${firstSeq} below tail ${st.tail}`);
    this.lastEnd = end;
    this.d.log.publish();
    st.lastAppendMs = arrival; // only an accepted append keeps the stream leased
    st.nextSeq += count;
    st.lastSeqTs = stamps[stamps.length - 1];
    st.inflightBytes += frame.length;
    this.inflightBytes += frame.length;
    const batch = holdBatch(firstSeq, count, frame, this.walFileNo, stamps[stamps.length - 1], content);
    this.settling.touch(this.walFileNo, st);
    const ack = new Promise<AppendAck>(captureSettlers);
    const chain = input.chain;
    // This promise's reject, read now: the module's captured one is the next append's by the time a
    // refusal comes (a closure reading it then rejected another batch and left this one hanging).
    const rejectAck = capturedReject;
    const reject = chain === undefined ? rejectAck : (e: unknown): void => { chain.broken = true; rejectAck(e); };
    this.pending.push({ end, st, batch, minTs: stamps[0], frameBytes: frame.length, epoch, resolve: capturedResolve, reject });
    st.appendStarted();
    this.walFileBytes += frame.length;
    if (this.walFileBytes >= this.walFileBytesMax) this.rotate();
    return ack;
  }

  /** Seals the current WAL file: a ROTATE frame goes through the ring like any batch. False when the
   *  ring has no room yet (the next append or sweep tries again). */
  private rotate(): boolean {
    // While the WAL is failing, nothing enters the ring: what is there is about to be discarded.
    if (this.walDown || this.d.log.failed()) return false;
    const frame = encodeRotate();
    const end = this.d.log.tryAppend(frame);
    if (end < 0) return false;
    invariant(end > this.lastEnd, () => `rotate entry ending ${end} after ${this.lastEnd}`);
    this.lastEnd = end;
    this.d.log.publish();
    let onSealed!: () => void;
    let reject!: (e: unknown) => void;
    this.lastSealed = new Promise<void>((res, rej) => { onSealed = res; reject = rej; });
    this.lastSealed.catch(() => undefined); // a WAL failure is reported to appends, not here
    this.pending.push({ end, frameBytes: 0, sealedFileNo: this.walFileNo, onSealed, reject });
    this.walFileNo += 1;
    this.walFileBytes = 0;
    this.walFileOpenedMs = this.d.clock.nowMs();
    return true;
  }

  /** SettleStar: seals the current WAL file when it holds anything, and resolves once every sealed
   *  file has settled into segments (reads from them are then served from the object store). */
  async settle(): Promise<void> {
    if (this.walDown || this.d.log.failed()) throw new ServiceError('unavailable', `the write-ahead log cannot be written (${this.d.log.failureCause()}); retry shortly`);
    if (this.walFileBytes > 0 && !this.rotate()) throw new ServiceError('resource_exhausted', 'log ring full; retry shortly');
    // Also a rotate made just before (a full file, the sweep, another SettleStar) may not be queued
    // yet: wait for the newest one to be sealed, then for the queue it joined.
    await this.lastSealed;
    let timer: { cancel(): void } | undefined;
    const bound = new Promise<never>((_, reject) => {
      timer = this.d.timers.setTimeout(() => reject(new ServiceError('unavailable', 'settling is behind or failing; retry shortly')), SETTLE_WAIT_MS_MAX);
    });
    try {
      await Promise.race([this.settling.idle(), bound]);
    } finally {
      timer?.cancel();
    }
  }

  /** Waits on the flusher's durable offset and commits, in ring order, everything below it. When the
   *  WAL fails, every append not yet durable is refused and its frame discarded; when the flusher
   *  can write again, sequencing resumes on its current file. */
  private async durableLoop(): Promise<void> {
    while (!this.closed) {
      const seen = this.d.log.durableSignal();
      this.commitDurable();
      if (this.d.log.failed()) {
        if (!this.walDown) {
          this.walDown = true;
          // The flusher publishes its last durable offset before it flags the failure: read again now
          // that the flag is seen, or a group synced meanwhile would be refused, its sequence numbers
          // handed out again and both frames left in the WAL (review 41, F1).
          this.commitDurable();
          this.failPending(new ServiceError('unavailable', `the write-ahead log cannot be written (${this.d.log.failureCause()}); the append was not acknowledged`));
          this.d.log.discardUndurable();
        }
      } else if (this.walDown) {
        this.walDown = false;
        this.walFileNo = this.d.log.currentFileNo();
        this.walFileBytes = 0;
        this.walFileOpenedMs = this.d.clock.nowMs();
      }
      await this.d.log.waitDurable(seen);
    }
  }

  private commitDurable(): void {
    const durable = this.d.log.durableOffset();
    const q = this.pending;
    let i = this.pendingHead;
    if (i >= q.length || q[i].end > durable) return;
    const acked: PendingEntry[] = [];
    const moved = new Set<StreamState>();
    const evict = new Set<StreamState>();
    while (i < q.length && q[i].end <= durable) {
      const p = q[i++];
      if (p.sealedFileNo !== undefined) { this.settling.enqueue(p.sealedFileNo); p.onSealed?.(); continue; }
      const st = p.st!;
      st.inflightBytes -= p.frameBytes;
      this.inflightBytes -= p.frameBytes;
      // A log that checks each entry's lease itself (a cluster's: the commit statement) has the last
      // word: what it did not refuse is stored, even if this star's view of the stream moved since
      // (refused then, a retry would store it twice; code review 41, F5). Otherwise the epoch the
      // batch was sequenced at must still be this star's.
      const refusal = this.d.log.takeRefusal !== undefined ? this.d.log.takeRefusal(p.end)
        : this.leadership.epochOf(st.meta.bucket, st.meta.key) !== p.epoch ? { cause: `the stream's leadership moved past epoch ${p.epoch}`, outcomeUnknown: false } : undefined;
      if (refusal === undefined && st.evicted && this.d.log.takeRefusal !== undefined) {
        // Stored, but the stream left this star meanwhile: acknowledged, and kept nowhere here (its
        // next leader reads it from what is committed).
        st.appendSettled();
        const b = p.batch!;
        const end = { seq_num: b.firstSeq + b.count, timestamp_ms: b.maxTs };
        p.resolve!({ start: { seq_num: b.firstSeq, timestamp_ms: p.minTs! }, end, tail: end });
        continue;
      }
      if (refusal !== undefined || st.evicted) {
        // Not committed (a cluster: the lease moved, or the commit failed), or not known to be: the
        // stream leaves this star, and the next request reloads it from what is committed. A commit
        // certainly not stored under a lease still held (its object never reached the object store)
        // keeps the stream here, rewound to its committed tail: reloading it would need that object
        // store, and its committed tail would be unreadable until the store is back (chaos audit M3).
        // An entry refused only as following an earlier refusal leaves the stream as that one did.
        st.appendSettled();
        p.reject!(new ServiceError('unavailable', refusal?.outcomeUnknown === true
          ? `the append's outcome is unknown (${refusal.cause}): it may have been stored; read the tail, or append with match_seq_num, before retrying`
          : `the append was not acknowledged: ${refusal?.cause ?? 'the stream moved to another star'}; retry`));
        if (st.evicted || evict.has(st) || refusal?.followOn === true) continue;
        if (refusal?.rewind === true && this.d.log.rewind !== undefined) this.rewind(st);
        else evict.add(st);
        continue;
      }
      if (st.deleted) {
        st.appendSettled();
        // The deletion is durable (a stream leaves memory only then), so a crash cannot bring this
        // batch back: refusing it is the truth.
        p.reject!(new ServiceError('stream_deleted', 'the stream was deleted while the append was in flight'));
        continue;
      }
      st.commitBatch(p.batch!);
      this.unsettledBytes += p.frameBytes;
      st.appendSettled();
      moved.add(st);
      acked.push(p);
    }
    // Acks report the committed tail after the whole group commit, so a tail may be past `end`.
    for (const p of acked) {
      const b = p.batch!;
      p.resolve!({
        start: { seq_num: b.firstSeq, timestamp_ms: p.minTs! },
        end: { seq_num: b.firstSeq + b.count, timestamp_ms: b.maxTs },
        tail: p.st!.tailPosition(),
      });
    }
    for (const st of evict) this.evictState(st);
    // Producers hear first; subscribers are woken once the acks are on their way.
    this.d.timers.defer(() => { for (const st of moved) st.wake(); });
    if (i === q.length) { this.pending = []; this.pendingHead = 0; }
    else if (i > 1024 && i * 2 > q.length) { this.pending = q.slice(i); this.pendingHead = 0; }
    else this.pendingHead = i;
  }

  /** A stream whose appends were refused as certainly not stored, its lease still held (a cluster's
   *  group commit whose object PUT failed): its next sequence number goes back to its committed tail
   *  and the log drops every frame of it appended so far (those are refused as they come, so nothing
   *  sequenced past the gap commits). The stream stays, with its committed batches, subscribers and
   *  watchers; appends sequenced from now on commit once the log can commit again. */
  private rewind(st: StreamState): void {
    st.nextSeq = st.tail;
    st.lastSeqTs = st.tailTs;
    this.d.log.rewind!(st.streamId);
  }

  /** Fails every append not yet acknowledged (the WAL failed, or the star is closing). Their frames
   *  are never written (the flusher discards them and cuts its file back to what was durable), so
   *  each stream's next sequence number goes back to its committed tail. */
  private failPending(err: ServiceError): void {
    const rolledBack = new Set<StreamState>();
    for (let i = this.pendingHead; i < this.pending.length; i++) {
      const p = this.pending[i];
      if (p.st) {
        p.st.inflightBytes -= p.frameBytes;
        this.inflightBytes -= p.frameBytes;
        rolledBack.add(p.st);
      }
      p.reject?.(err);
    }
    this.pending = [];
    this.pendingHead = 0;
    for (const st of rolledBack) {
      st.nextSeq = st.tail;
      st.lastSeqTs = st.tailTs;
    }
    // Waiters are released only once every stream's next number is back at its tail.
    for (const st of rolledBack) st.appendsFailed();
  }

  // ---------------------------------------------------------------- metadata rows

  /** Runs `fn` holding the row locks of `sts`: row writes of one stream run one at a time, each built
   *  from the state the last one left, so a full-row write never undoes another (a settle's row
   *  cannot drop a trim, nor a trim's row a settle). All locks are queued for in one step, so two
   *  writers of overlapping sets never wait for each other in a cycle. A suspect row is read back
   *  first. */
  private async withRows<T>(sts: StreamState[], fn: () => Promise<T>): Promise<T> {
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    const before = sts.map((st) => { const prev = st.rowTail; st.rowTail = held; return prev; });
    try {
      await Promise.all(before);
      // A state dropped while its caller waited (it went dormant): writing through it could undo what
      // the live state wrote since. The caller retries and finds the live one.
      for (const st of sts) if (st.retired) throw new ServiceError('unavailable', `stream ${st.meta.bucket}/${st.meta.key} was reloaded while the call waited; retry`);
      for (const st of sts) if (st.suspect) await this.reconcileStream(st);
      return await fn();
    } finally {
      release();
      for (const st of sts) if (st.rowTail === held) st.rowTail = ROWS_IDLE;
    }
  }

  /** A stream row write: when it fails, the store may hold it or not (PostgreSQL's connection can
   *  drop after the commit), so the rows become suspect and are read back before the next write
   *  or ack (see reconcile). */
  private rowWrite(sts: StreamState[], write: Promise<void>): Promise<void> {
    return write.catch((err: unknown) => {
      for (const st of sts) { st.suspect = true; this.suspectStreams.add(st); }
      throw err;
    });
  }

  /** True when the metadata store answers and no row write's outcome is unknown. */
  metadataReady(): boolean {
    return this.d.metadata.healthy() && this.suspectStreams.size === 0 && !this.buckets.suspect;
  }

  /** Reads back every suspect row once the store answers again, and takes what the store holds as
   *  the truth (it is what a restart would load). Run by the sweep; one pass at a time. */
  private reconcile(): void {
    if (this.reconciling || !this.d.metadata.healthy()) return;
    if (this.suspectStreams.size === 0 && !this.buckets.suspect) return;
    this.reconciling = true;
    void (async () => {
      await this.buckets.reconcile();
      if (this.buckets.suspect) return;
      for (const st of [...this.suspectStreams]) await this.withRows([st], async () => undefined);
    })().catch(() => undefined).finally(() => { this.reconciling = false; });
  }

  /** Takes the store's row of a suspect stream (called holding its row lock). Only from a store that
   *  answers: what a failing store holds in memory may be what it failed to write. */
  private async reconcileStream(st: StreamState): Promise<void> {
    if (!this.d.metadata.healthy()) throw new ServiceError('unavailable', 'the metadata store is unavailable; retry shortly');
    const { row, deleted } = await this.d.metadata.readStream(st.meta.bucket, st.meta.key);
    st.suspect = false;
    this.suspectStreams.delete(st);
    const a = addr(st.meta.bucket, st.meta.key);
    if (st.evicted) return; // the next leader reads the row itself
    if (st.deleted) {
      // A creation reported failed whose row landed after all: the stream exists.
      if (row && row.stream_id === st.streamId && !this.streams.has(a) && !this.dormant.has(a)) {
        this.addStream(new StreamState(row, row.config as unknown as StreamConfig));
        this.deleted.delete(a);
      }
      return;
    }
    if (!row || row.stream_id !== st.streamId) {
      // The deletion landed (or the creation did not): the stream is gone.
      this.forgetStream(st);
      if (!deleted) this.deleted.delete(a);
      return;
    }
    const before = st.meta;
    st.meta = row;
    st.config = row.config as unknown as StreamConfig;
    // A settle whose write landed after all: its segments serve those records now.
    if (row.settled_end_seq > before.settled_end_seq) this.unsettledBytes -= st.dropSettled(row.settled_end_seq);
    if (row.fencing_token !== before.fencing_token) st.emit({ kind: 'fenced', fencing_token: row.fencing_token });
    st.wake();
  }

  // ---------------------------------------------------------------- read

  /** The stream a read verb reads; a missing one in a create_stream_on_read bucket is created, unless
   *  the read would be refused on it: a `refusedPast` sequence number start above 0, past an empty
   *  stream's tail (416), creates nothing, as an autocreating append the new stream would refuse
   *  creates nothing. */
  private async streamForRead(bucket: string, key: string, refusedPast?: number): Promise<StreamState> {
    const st = this.wake(addr(bucket, key));
    if (st) { st.lastUsedMs = this.d.clock.nowMs(); return st; }
    const b = this.buckets.require(bucket);
    if (!(b.config as unknown as BucketConfig).create_stream_on_read) throw notFound(`stream ${bucket}/${key} not found`);
    const existing = this.streams.get(addr(bucket, key));
    if (existing) return existing;
    if (refusedPast !== undefined && refusedPast > 0) {
      throw new ServiceError('range_not_satisfiable', `start ${namedSeqText(refusedPast)} is past the tail 0`, { tail: { seq_num: 0, timestamp_ms: 0 } });
    }
    return this.newStream(b, key, {});
  }

  async read(bucket: string, key: string, opts: ReadOptions): Promise<ReadResult> {
    const refusedPast = opts.start.kind === 'seq_num' && !opts.clamp ? opts.start.value : undefined;
    return this.reads.read(await this.streamForRead(bucket, key, refusedPast), opts);
  }

  /** A vacant stream's committed state, read without leading it (spec: States, "a vacant stream
   *  serves committed state locally with no lease acquired"): built from its row and committed
   *  batches for this one answer, never kept. */
  detached(row: StreamMeta, batches: readonly CommittedBatch[]): { read(opts: ReadOptions): Promise<ReadResult>; tail(): Position } {
    const st = new StreamState(row, this.configOf(row));
    for (const b of batches) st.commitBatch(heldBatch(b, 0));
    return { read: (opts) => this.reads.read(st, opts), tail: () => st.tailPosition() };
  }

  /** A stream another live star leads, as this star serves it from what is committed (spec: "Any
   *  star serves settled history"): its row and its committed tail, for one answer, never kept. A
   *  read is answered when it starts in settled history (cut at the settled frontier, as every read
   *  is) or at the tail; undefined when it starts in the records above the frontier, which only the
   *  leader holds in memory. A plan vends only settled segments: any star answers it. */
  settledView(row: StreamMeta, tail: Position): { read(opts: ReadOptions): Promise<ReadResult | undefined>; plan(start: PlanStart, maxEntries: number): PlanResult } {
    const st = new StreamState(row, this.configOf(row));
    if (tail.seq_num > st.tail) {
      st.tail = tail.seq_num;
      st.tailTs = tail.timestamp_ms;
    }
    return {
      read: async (opts) => {
        const seq = await this.reads.startOf(st, opts);
        // Above the frontier only the leader has the records. A time start found no settled record at
        // or after it: the first such may be unsettled, so its answer is the leader's too.
        const aboveSettled = seq >= st.settledEnd && st.settledEnd < st.tail && (seq < st.tail || opts.start.kind === 'timestamp_ms');
        return aboveSettled ? undefined : this.reads.page(st, seq, opts);
      },
      plan: (start, maxEntries) => this.reads.plan(st, start, maxEntries),
    };
  }

  checkTail(bucket: string, key: string): Position {
    return this.requireStream(bucket, key).tailPosition();
  }

  /** Stream leadership as one star shows it (spec: States): leased while a producer session is open
   *  or an append is in flight, and until LEASE_IDLE_MS after the last append; vacant after that. */
  leased(bucket: string, key: string): boolean {
    const st = this.streams.get(addr(bucket, key));
    if (!st || this.leadership.epochOf(bucket, key) === undefined) return false;
    return st.watched || st.inflightBytes > 0 || this.d.clock.nowMs() - st.lastAppendMs < (this.d.leaseIdleMs ?? LEASE_IDLE_MS);
  }

  async readTail(bucket: string, key: string): Promise<Position> {
    return (await this.streamForRead(bucket, key)).tailPosition();
  }

  // ---------------------------------------------------------------- trim, fence, retention

  async trim(bucket: string, key: string, to: { seq_num?: number; timestamp_ms?: number }): Promise<void> {
    return this.retention.trim(this.requireStream(bucket, key), to);
  }

  async fence(bucket: string, key: string, token: string): Promise<Position> {
    const st = this.requireStream(bucket, key);
    await this.withRows([st], async () => {
      if (st.evicted) throw movedAway(st);
      if (st.deleted) throw notFound(`stream ${bucket}/${key} not found`);
      const before = st.meta;
      st.meta = { ...st.meta, fencing_token: token };
      try {
        await st.gate(this.rowWrite([st], this.d.metadata.putStream(st.meta)));
      } catch (err) {
        if (st.meta.fencing_token === token) st.meta = { ...st.meta, fencing_token: before.fencing_token };
        throw err;
      }
    });
    st.emit({ kind: 'fenced', fencing_token: token });
    await st.drained();
    return st.tailPosition();
  }

  /** A segment no durable row points at: out of the footer cache now, out of the store once no read
   *  plan vended before can still name it. */
  private dropObject(key: string, st?: StreamState): void {
    this.reader.forget(key);
    this.reclaimer.drop(key, st?.meta.bucket, st?.meta.key);
  }

  /** Background, every RETENTION_SWEEP_MS: object reclaiming, the audit, sealing a quiet WAL file,
   *  reading suspect rows back, and retention. */
  private sweep(): void {
    const now = this.d.clock.nowMs();
    this.reclaimer.run();
    void this.auditor.scrub(() => this.namedSegments()).catch((err: unknown) => this.d.log_error?.('audit scrub failed', err));
    void this.auditor.run().catch((err: unknown) => this.d.log_error?.('audit pass failed', err));
    if (this.walFileBytes > 0 && now - this.walFileOpenedMs >= this.walSettleAfterMs) this.rotate();
    this.reconcile();
    this.retention.sweep(this.streams.values(), now);
    if (!this.retireScheduled) this.retireIdle();
  }

  /** Every settled segment the streams held here name (the auditor's scrub). */
  private *namedSegments(): Iterable<{ bucket: string; key: string; streamId: string; seg: SegmentMeta }> {
    for (const st of this.streams.values()) {
      for (const seg of st.meta.segments) yield { bucket: st.meta.bucket, key: st.meta.key, streamId: st.streamId, seg };
    }
    for (const [a, packed] of this.dormant) {
      if (!packedHasSegments(packed)) continue;
      const row = rowOf(a, packed);
      for (const seg of row.segments) yield { bucket: row.bucket, key: row.key, streamId: row.stream_id, seg };
    }
  }

  // ---------------------------------------------------------------- read plans and watchers

  async readPlan(bucket: string, key: string, start: PlanStart, maxEntries: number): Promise<PlanResult> {
    // A read verb: create_stream_on_read applies.
    const st = await this.streamForRead(bucket, key, start.kind === 'seq_num' ? start.value : undefined);
    return this.reads.plan(st, start, maxEntries);
  }

  watch(bucket: string, key: string, listener: (ev: StreamEvent) => void): () => void {
    const st = this.requireStream(bucket, key);
    return st.watch(listener);
  }

  // ---------------------------------------------------------------- subscribe

  async subscribe(bucket: string, key: string, start: ReadStart): Promise<Subscription> {
    const st = await this.streamForRead(bucket, key);
    if (this.subscriptions >= SUBSCRIPTIONS_PER_STAR_MAX) throw new ServiceError('resource_exhausted', 'subscriptions per star at cap');
    this.subscriptions += 1; // reserved before any await, so concurrent subscribes cannot pass the cap
    try {
      let seq = await this.reads.resolveStart(st, start);
      // A state that went dormant while the start was looked up (a slow store) is woken by no append:
      // the subscription follows the live state instead.
      const live = st.retired ? this.requireStream(bucket, key) : st;
      // "The last n records, then follow" (gRPC's tail_offset start; a subscribe has no clamp) starts
      // at the earliest retained record when fewer than n are retained: only a read's start is held
      // to the watermark by 410 (spec: Read query).
      if (start.kind === 'tail_offset' && seq < live.trimSeq) seq = live.trimSeq;
      if (seq < live.trimSeq) throw new ServiceError('trimmed', `records below ${live.trimSeq} were trimmed`);
      // A cursor past the tail pends until the stream reaches it and starts there (spec: Events, rules
      // 1 and 6: "starts at n"): records below it were not asked for and are never sent.
      return new LiveSubscription(live, seq, this.reader, () => { this.subscriptions -= 1; });
    } catch (err) {
      this.subscriptions -= 1;
      throw err;
    }
  }
}

/** Longest SettleStar waits for the settle queue (a failing object store retries forever). */
const SETTLE_WAIT_MS_MAX = 60_000;

/** Whether a config change is taken up by a new leadership: live producer sessions reconnect, and
 *  in a cluster the lease moves to a new epoch (spec: States, PATCH). */
export function needsHandoff(before: StreamConfig, after: StreamConfig): boolean {
  return HANDOFF_FIELDS.some((k) => before[k] !== after[k]);
}

/** Config changes that make live producer sessions reconnect (spec: States, PATCH). */
const HANDOFF_FIELDS: readonly (keyof StreamConfig)[] = [
  'class', 'producer_policy', 'timestamping_mode', 'timestamping_uncapped', 'throughput_max_bytes_per_second',
  'batch_max_bytes', 'batch_max_records', 'batch_max_delay_ms',
];
const STREAM_CONFIG_FIELDS: readonly (keyof StreamConfig)[] = [...HANDOFF_FIELDS, 'retention_max_age_ms', 'retention_max_bytes'];


