// Per-stream state on the sequencer: config, the sequenced and committed tails, the fence, the trim
// watermark, the settled chain and the committed-but-unsettled batches. An idle stream holds only
// these fields: its unsettled batches leave memory when its WAL file settles.

import { invariant } from './invariant.ts';
import type { PaceState } from './sequencer.ts';
import type { StreamMeta } from '../storage/metadata/metadata-store.ts';
import { uuidBytes } from '../storage/format/record-codec.ts';
import type { StreamEvent } from './service-api.ts';
import type { Position, StreamConfig, StreamInfo } from './types.ts';

/** A committed batch still served from memory (its WAL file has not settled yet). */
export interface MemBatch {
  readonly firstSeq: number;
  readonly count: number;
  /** The frame's bytes: a view made on each call (see HeldBatch); its length is `frameBytes`. */
  readonly frame: Buffer;
  readonly frameBytes: number;
  readonly walFileNo: number;
  readonly maxTs: number;
  readonly contentBytes: number;
}

/** A committed batch as it arrives from the WAL, the log or a takeover, before it is held. */
export interface CommittedBatch {
  firstSeq: number;
  count: number;
  frame: Buffer;
  maxTs: number;
  contentBytes: number;
}

/**
 * A held batch keeps where its frame is (the memory, an offset, a length), not a Buffer view of it:
 * a view is a 96-byte object of its own, and a held batch stays in the heap until its WAL file
 * settles (30 s by default: about 2 million batches at 70,000 appends/s). The first record's
 * timestamp, which only the ack needs, is not held either. A single-record append leaves 118 bytes
 * live instead of 224 (`HOT_PATH_ALLOC=1 HOT_PATH_LIVE=1 npx tsx bench/hot-path.ts`). It saves
 * memory, not scavenge time: the bytes a scavenge promotes did not change (`--trace-gc-nvp`; V8
 * probably allocates these long-lived objects straight into old space already, not verified).
 */
class HeldBatch implements MemBatch {
  constructor(
    readonly firstSeq: number,
    readonly count: number,
    private readonly memory: ArrayBufferLike,
    private readonly at: number,
    readonly frameBytes: number,
    readonly walFileNo: number,
    readonly maxTs: number,
    readonly contentBytes: number,
  ) {}

  get frame(): Buffer { return Buffer.from(this.memory, this.at, this.frameBytes); }
}

/** Holds a batch sequenced here (no intermediate object on the append path). */
export function holdBatch(firstSeq: number, count: number, frame: Buffer, walFileNo: number, maxTs: number, contentBytes: number): MemBatch {
  return new HeldBatch(firstSeq, count, frame.buffer, frame.byteOffset, frame.length, walFileNo, maxTs, contentBytes);
}

export function heldBatch(b: CommittedBatch, walFileNo: number): MemBatch {
  return holdBatch(b.firstSeq, b.count, b.frame, walFileNo, b.maxTs, b.contentBytes);
}

/** Woken when the committed tail moves, the stream is trimmed under a cursor, or deleted. */
export type TailWaiter = () => void;

/**
 * A subscriber waiting at the committed tail, woken on the same events as a TailWaiter. Parked ones
 * are kept in a plain array and find themselves by index, so the wait a caught-up subscriber takes
 * after every batch costs an array push, not a Set insert, a rehash and a copy of the Set at each
 * wake (at 4096 subscribers on one stream those were 4 % of the main thread).
 */
export interface TailParker {
  /** Its index in the stream's parked list, -1 when not parked; only StreamState writes it. */
  parkedAt: number;
  tailMoved(): void;
}

/** One resolved promise every idle stream's row lock starts from, and returns to once released (a
 *  lock's own promise kept afterwards cost every idle stream a Promise and its resolver). */
export const ROWS_IDLE: Promise<void> = Promise.resolve();

export class StreamState {
  meta: StreamMeta;
  config: StreamConfig;
  /** Next seq_num the sequencer will assign (>= committed tail while appends are in flight). */
  nextSeq: number;
  /** Timestamp of the last sequenced record: the floor for the next one. */
  lastSeqTs: number;
  /** Committed tail. */
  tail: number;
  tailTs: number;
  /** Row writes of this stream run one at a time, each built from the state the last one left:
   *  resolves when the newest has finished (see Star.withRows). Never rejects. */
  rowTail: Promise<void> = ROWS_IDLE;
  /** A row write of this stream failed: the store may or may not hold it (a connection lost mid-
   *  commit), so the row is read back before anything else is written or acknowledged. */
  suspect = false;
  readonly mem: MemBatch[] = [];
  inflightBytes = 0;
  /** Arrival time of the newest append (the leadership view's idle timeout runs from it). */
  lastAppendMs = 0;
  /** When a call last asked for this stream (a read, a config change): a stream in use by readers
   *  does not go dormant. */
  lastUsedMs = 0;
  /** Went dormant: the star dropped this state and keeps only the row; whoever still holds it must
   *  not write through it (Star.withRows refuses). */
  retired = false;
  /** The throughput cap's token bucket (absent until the first paced append). */
  paced: PaceState | undefined;
  /** Appends sequenced but not yet committed or failed. */
  private appendsInFlight = 0;
  /** Callers waiting for the committed tail to reach what was sequenced when they asked. */
  private drainWaiters: { target: number; resolve: () => void }[] | undefined;
  deleted = false;
  /** Dropped from this star (its lease moved, or a commit of it failed): `deleted` is set too, so every
   *  path lets go of it, but callers are told to retry (503), not that it is gone. */
  evicted = false;
  /** Being handed to a new leadership (a cluster star's reconfiguration, or a drain past its bound:
   *  Star.quiesce): new appends are refused (retry: the next leader takes them) while those sequenced
   *  already commit and are acked. */
  handingOff = false;
  /** Live subscriptions reading this stream (a leader keeps a stream with subscribers). */
  subscribers = 0;
  /** Set while a metadata change (creation, fence, reconfigure) is being made durable: appends wait
   *  for it, in call order, so none is acknowledged under a change that could still be lost. */
  metaPending: Promise<void> | undefined;
  // The sets below exist only while something waits or watches: an idle stream costs none of them
  // (at 100,000 streams every empty Set counted).
  private waiters: Set<TailWaiter> | undefined;
  /** Subscribers parked at the tail: one entry at most per live subscription, so bounded by
   *  SUBSCRIPTIONS_PER_STAR_MAX. */
  private parked: TailParker[] | undefined;
  /** Producer sessions and other watchers of fence / reconfigure / delete events. */
  private watchers: Set<(ev: StreamEvent) => void> | undefined;
  private idBytesMemo: Uint8Array | undefined;

  constructor(meta: StreamMeta, config: StreamConfig) {
    this.meta = meta;
    this.config = config;
    this.tail = meta.settled_end_seq;
    this.tailTs = meta.settled_end_ts;
    this.nextSeq = this.tail;
    this.lastSeqTs = this.tailTs;
  }

  get streamId(): string { return this.meta.stream_id; }
  /** The stream id as frames carry it, computed once. */
  get idBytes(): Uint8Array { return (this.idBytesMemo ??= uuidBytes(this.meta.stream_id)); }
  /** Last WAL file this stream was recorded in (saves a Set insert per append). */
  lastWalFileNo = -1;
  get trimSeq(): number { return this.meta.trim_seq; }
  get settledEnd(): number { return this.meta.settled_end_seq; }

  info(): StreamInfo { return streamInfoOf(this.meta, this.config); }

  tailPosition(): Position {
    // A fully trimmed stream knows no record's time (spec: Position).
    return { seq_num: this.tail, timestamp_ms: this.trimSeq >= this.tail ? 0 : this.tailTs };
  }

  /** A committed batch enters memory and the tail moves. The caller wakes waiters (after acks). */
  commitBatch(b: MemBatch): void {
    // Records commit in sequence order with no gap: a batch that does not start at the tail would be
    // served, settled and acknowledged at positions another batch holds or skips.
    invariant(b.firstSeq === this.tail && b.count > 0, () => `stream ${this.meta.stream_id}: batch ${b.firstSeq}+${b.count} committed at tail ${this.tail}`);
    this.mem.push(b);
    this.tail = b.firstSeq + b.count;
    this.tailTs = b.maxTs;
  }

  /** Gates appends behind a durable metadata write; resolves or rejects with it. */
  gate(write: Promise<void>): Promise<void> {
    const prev = this.metaPending ?? Promise.resolve();
    const next = prev.then(() => write, () => write);
    const settled = next.then(() => undefined, () => undefined);
    this.metaPending = settled;
    void settled.then(() => { if (this.metaPending === settled) this.metaPending = undefined; });
    return next;
  }

  appendStarted(): void { this.appendsInFlight += 1; }

  /** An append committed (call after commitBatch) or failed; wakes drain() callers it satisfies. */
  appendSettled(): void {
    this.appendsInFlight -= 1;
    if (!this.drainWaiters) return;
    const keep: { target: number; resolve: () => void }[] = [];
    for (const w of this.drainWaiters) {
      if (this.tail >= w.target || this.appendsInFlight === 0) w.resolve();
      else keep.push(w);
    }
    this.drainWaiters = keep.length ? keep : undefined;
  }

  /** Every append in flight failed (the WAL failed; nextSeq is back at the tail): drain() callers go on. */
  appendsFailed(): void {
    this.appendsInFlight = 0;
    const ws = this.drainWaiters ?? [];
    this.drainWaiters = undefined;
    for (const w of ws) w.resolve();
  }

  /** Resolves when every append sequenced before the call has committed or failed. Later appends do
   *  not hold it up, so a steady stream of producers cannot starve a fence or a trim. */
  drained(): Promise<void> {
    if (this.appendsInFlight === 0 || this.tail >= this.nextSeq) return Promise.resolve();
    const target = this.nextSeq;
    return new Promise((resolve) => { (this.drainWaiters ??= []).push({ target, resolve }); });
  }

  addWaiter(w: TailWaiter): void { (this.waiters ??= new Set()).add(w); }

  /** Parks `p` until the next wake(); a no-op if it is parked already (an SSE pump's heartbeat
   *  turn parks its subscription again, and the list must not grow by one entry per heartbeat). */
  park(p: TailParker): void {
    if (p.parkedAt >= 0) return;
    const list = (this.parked ??= []);
    p.parkedAt = list.length;
    list.push(p);
  }

  /** Takes `p` out of the parked list (its slot is filled by the last entry); a no-op if not parked. */
  unpark(p: TailParker): void {
    const list = this.parked;
    const at = p.parkedAt;
    if (!list || at < 0) return;
    p.parkedAt = -1;
    const last = list.pop()!;
    if (last !== p) { list[at] = last; last.parkedAt = at; }
    if (list.length === 0) this.parked = undefined;
  }

  removeWaiter(w: TailWaiter): void {
    this.waiters?.delete(w);
    if (this.waiters?.size === 0) this.waiters = undefined;
  }

  watch(listener: (ev: StreamEvent) => void): () => void {
    (this.watchers ??= new Set()).add(listener);
    return () => {
      this.watchers?.delete(listener);
      if (this.watchers?.size === 0) this.watchers = undefined;
    };
  }

  get watched(): boolean { return this.watchers !== undefined; }

  /** Nothing of the stream lives only here: no batch waiting to settle, nothing in flight or being
   *  written, nobody watching, waiting or subscribed. Such a state may be dropped and made again
   *  from its row alone (Star: dormant streams). */
  restsInRow(): boolean {
    return this.mem.length === 0 && this.inflightBytes === 0 && this.appendsInFlight === 0 && this.drainWaiters === undefined
      && this.subscribers === 0 && this.watchers === undefined && this.waiters === undefined && !this.parked?.length && this.metaPending === undefined
      && this.rowTail === ROWS_IDLE && !this.suspect && !this.deleted && !this.evicted;
  }

  emit(ev: StreamEvent): void {
    if (this.watchers) for (const w of [...this.watchers]) w(ev);
  }

  wake(): void {
    const parked = this.parked;
    if (parked) {
      // Every index is cleared before any callback runs: a callback may close (unpark) another
      // parked subscriber, or park one again in a fresh list.
      this.parked = undefined;
      for (const p of parked) p.parkedAt = -1;
      for (const p of parked) p.tailMoved();
    }
    if (!this.waiters) return;
    const ws = [...this.waiters];
    this.waiters = undefined;
    for (const w of ws) w();
  }

  /** Index of the in-memory batch holding `seq`, or -1. */
  memIndexOf(seq: number): number {
    const m = this.mem;
    let lo = 0;
    let hi = m.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const b = m[mid];
      if (seq < b.firstSeq) hi = mid - 1;
      else if (seq >= b.firstSeq + b.count) lo = mid + 1;
      else return mid;
    }
    return -1;
  }

  /** Index of the settled segment holding `seq`, or -1. */
  segmentIndexOf(seq: number): number {
    const s = this.meta.segments;
    let lo = 0;
    let hi = s.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (seq < s[mid].first_seq) hi = mid - 1;
      else if (seq >= s[mid].end_seq) lo = mid + 1;
      else return mid;
    }
    return -1;
  }

  /** Settled batches leave memory once the row recording their segments is durable. Returns the
   *  bytes freed. */
  dropSettled(endSeq: number): number {
    // One splice, not a shift per batch: a file of single-record appends holds ~500k batches, and
    // shifting them one by one is quadratic (it stalled the event loop for seconds).
    let freed = 0;
    let k = 0;
    while (k < this.mem.length && this.mem[k].firstSeq + this.mem[k].count <= endSeq) freed += this.mem[k++].frameBytes;
    this.mem.splice(0, k);
    return freed;
  }

  /** Bytes of committed batches still held in memory (not yet settled). */
  memBytes(): number {
    let n = 0;
    for (const b of this.mem) n += b.frameBytes;
    return n;
  }
}

/** A stream as the API shows it, from its row and config (a live or a dormant stream alike). */
export function streamInfoOf(meta: Pick<StreamMeta, 'stream_id' | 'bucket' | 'key' | 'created_at_unix_ms'>, config: StreamConfig): StreamInfo {
  return { stream_id: meta.stream_id, bucket: meta.bucket, key: meta.key, ...config, created_at_unix_ms: meta.created_at_unix_ms };
}
