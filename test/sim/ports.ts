// In-memory ports for the seeded simulation (DESIGN.md: Determinism): a virtual clock and timers, a
// log ring whose group commits the simulation decides, WAL files, a metadata store and an object
// store whose writes land only when the simulation lets them, and faults on command. A crash drops
// everything not yet durable; the ports of a crashed star go inert, so nothing it still had in
// flight can reach the stores the next star recovers from.

import { FRAME_ROTATE, contentBytes, forEachRecord, frameInfo, frameTimestamps, sealFrame } from '../../src/storage/format/record-codec.ts';
import type { Clock, Ids, LogPort, SegmentSettler, Timers, WalJanitor } from '../../src/core/ports.ts';
import { MetadataUnavailableError, streamRowsOf, type BucketMeta, type CredentialMeta, type MetadataStore, type MetaState, type StoredFormat, type StreamMeta } from '../../src/storage/metadata/metadata-store.ts';
import type { ByteRange, ObjectStore } from '../../src/storage/objects/object-store.ts';
import { settleWalBytes } from '../../src/workers/settle-task.ts';
import { WalFailure, walFailureText } from '../../src/storage/wal/log-ring.ts';
import { WAL_RECOVERY_RETRY_MS_MAX, WAL_RECOVERY_RETRY_MS_MIN } from '../../src/config/limits.ts';

/** A promise that never settles: what a crashed star's calls get. */
const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

/** The durable world: survives crashes. */
export class World {
  nowMs = 1_700_000_000_000;
  readonly walFiles = new Map<number, Buffer[]>();
  readonly objects = new Map<string, Buffer>();
  readonly meta = {
    buckets: new Map<string, BucketMeta>(),
    streams: new Map<string, StreamMeta>(),
    deleted: new Map<string, { bucket: string; key: string }>(),
    credentials: new Map<string, CredentialMeta>(),
    format: undefined as StoredFormat | undefined,
  };
  /** How many settle uploads fail before one succeeds (a storage fault the simulation injects). */
  objectPutFailures = 0;
  /** Object reads asked for, one per GET a real store would make. */
  objectGets = 0;
  /** Lease rows of a simulated cluster (test/sim/cluster-ports.ts): holder and epoch per address. */
  readonly leases = new Map<string, { holder: string; epoch: number }>();
  /** Stream row writes a lease guard refused (a stale leader's). */
  guardRefusals = 0;
}

/** A star of a simulated cluster: its id, and the epochs it believes it holds (it may be stale). */
export interface LeaseGuard {
  starId: string;
  epochOf(bucket: string, key: string): number | undefined;
}

/** One star's life: its timers, pending writes and ring, all dropped at its crash. */
export class Incarnation {
  dead = false;
  private readonly timers: { at: number; seq: number; fn: () => void; every?: number; cancelled: boolean }[] = [];
  private timerSeq = 0;
  private readonly deferred: (() => void)[] = [];
  private readonly metaQueue: { apply: () => Error | void; resolve: () => void; reject: (e: Error) => void }[] = [];
  private readonly objectQueue: { key: string; body: Buffer; resolve: () => void; reject: (e: Error) => void }[] = [];
  readonly log: SimLog;
  /** Set for a star of a simulated cluster: its stream row writes land only where the world's lease
   *  row names it at the epoch it wrote at (as the PostgreSQL store's guarded writes). */
  guard: LeaseGuard | undefined;

  constructor(readonly world: World, private readonly random: () => number, walFileNo: number) {
    this.log = new SimLog(this, walFileNo);
  }

  // ----- clock, timers, ids
  readonly clock: Clock = { nowMs: () => this.world.nowMs };
  readonly ids: Ids = {
    uuid: () => {
      const h = (n: number): string => Array.from({ length: n }, () => Math.floor(this.random() * 16).toString(16)).join('');
      return `${h(8)}-${h(4)}-4${h(3)}-8${h(3)}-${h(12)}`;
    },
  };
  readonly timerPort: Timers = {
    setTimeout: (fn, ms) => this.addTimer(fn, ms),
    setInterval: (fn, ms) => this.addTimer(fn, ms, ms),
    defer: (fn) => { if (!this.dead) this.deferred.push(fn); },
  };

  private addTimer(fn: () => void, ms: number, every?: number): { cancel(): void } {
    const t = { at: this.world.nowMs + ms, seq: this.timerSeq++, fn, every, cancelled: this.dead };
    this.timers.push(t);
    return { cancel: () => { t.cancelled = true; } };
  }

  /** Moves the clock and runs what fell due, in time order. */
  advance(ms: number): void {
    const until = this.world.nowMs + ms;
    for (;;) {
      const due = this.timers.filter((t) => !t.cancelled && t.at <= until).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.world.nowMs = Math.max(this.world.nowMs, due.at);
      if (due.every) due.at += due.every; else due.cancelled = true;
      if (!this.dead) due.fn();
    }
    this.world.nowMs = until;
    for (let i = this.timers.length - 1; i >= 0; i--) if (this.timers[i].cancelled) this.timers.splice(i, 1);
  }

  runDeferred(): void {
    for (const fn of this.deferred.splice(0)) if (!this.dead) fn();
  }

  // ----- metadata: writes land in order, when the simulation commits them
  readonly metadata: MetadataStore = {
    load: async () => this.loadMeta(),
    putFormat: async (f) => (this.world.meta.format ??= f),
    putBucket: (b) => this.metaRows([b]),
    deleteBucket: (name) => this.metaWrite(() => {
      this.world.meta.buckets.delete(name);
      for (const [k, d] of this.world.meta.deleted) if (d.bucket === name) this.world.meta.deleted.delete(k);
    }),
    putStream: (s) => this.metaRows([s]),
    putStreams: (rows) => this.metaRows(rows),
    deleteStream: (bucket, key) => {
      const allowed = this.guardOf([{ bucket, key }]);
      return this.metaWrite(() => {
        if (!allowed[0]()) return this.refused(bucket, key);
        this.world.meta.streams.delete(`${bucket}\u0000${key}`);
        this.world.meta.deleted.set(`${bucket}\u0000${key}`, { bucket, key });
      });
    },
    putCredential: (c) => this.metaRows([c]),
    readCredential: async (keyId) => structuredClone(this.world.meta.credentials.get(keyId)),
    listCredentials: async () => [...this.world.meta.credentials.values()].map((c) => structuredClone(c)),
    readStream: async (bucket, key) => {
      const a = `${bucket}\u0000${key}`;
      const row = this.world.meta.streams.get(a);
      return { row: row && structuredClone(row), deleted: this.world.meta.deleted.has(a) };
    },
    readBucket: async (name) => {
      const row = this.world.meta.buckets.get(name);
      return row && structuredClone(row);
    },
    healthy: () => true,
    close: async () => undefined,
  };

  private loadMeta(): MetaState {
    const m = this.world.meta;
    return {
      ...structuredClone({ buckets: [...m.buckets.values()], deleted: [...m.deleted.values()], credentials: [...m.credentials.values()] }),
      streams: streamRowsOf([...m.streams.values()]),
    };
  }

  /** `apply` lands the write; an Error it returns is the write's answer (a guard refused it). */
  private metaWrite(apply: () => Error | void): Promise<void> {
    if (this.dead) return never();
    return new Promise<void>((resolve, reject) => { this.metaQueue.push({ apply, resolve, reject }); });
  }

  /** For each stream row, a check made when the write lands with the epoch the star asked at (a
   *  statement carries its epochs as parameters): true unguarded, or where the lease row names this
   *  star at that epoch. */
  private guardOf(rows: { bucket: string; key: string }[]): (() => boolean)[] {
    const g = this.guard;
    return rows.map((r) => {
      if (!g) return () => true;
      const a = `${r.bucket}\u0000${r.key}`;
      const epoch = g.epochOf(r.bucket, r.key);
      return () => {
        const l = this.world.leases.get(a);
        return epoch !== undefined && l !== undefined && l.holder === g.starId && l.epoch === epoch;
      };
    });
  }

  private refused(bucket: string, key: string): Error {
    this.world.guardRefusals += 1;
    return new MetadataUnavailableError(`lease of ${bucket}/${key} is not held at the epoch written (simulated guard)`);
  }

  /** Rows are copied when the star asks, as a real store serializes them then: the star's later
   *  changes to the same objects must not leak into what lands. */
  private metaRows(rows: (BucketMeta | StreamMeta | CredentialMeta)[]): Promise<void> {
    const frozen = structuredClone(rows);
    const allowed = this.guardOf(frozen.map((r) => ('stream_id' in r ? r as StreamMeta : { bucket: '', key: '' })));
    return this.metaWrite(() => {
      let refusal: Error | undefined;
      for (const [i, row] of frozen.entries()) {
        if ('stream_id' in row) {
          const s = row as StreamMeta;
          // As the PostgreSQL store: the rows allowed are written, and the write answers the refusal.
          if (!allowed[i]()) { refusal = this.refused(s.bucket, s.key); continue; }
          this.world.meta.streams.set(`${s.bucket}\u0000${s.key}`, s);
          this.world.meta.deleted.delete(`${s.bucket}\u0000${s.key}`);
        } else if ('key_id' in row) {
          this.world.meta.credentials.set(row.key_id, row as CredentialMeta);
        } else {
          this.world.meta.buckets.set((row as BucketMeta).name, row as BucketMeta);
        }
      }
      return refusal;
    });
  }

  /** Makes the first `n` queued metadata writes durable (in order) and answers them. */
  commitMeta(n = Infinity): number {
    let done = 0;
    while (done < n && this.metaQueue.length > 0 && !this.dead) {
      const w = this.metaQueue.shift()!;
      const refusal = w.apply();
      if (refusal) w.reject(refusal); else w.resolve();
      done++;
    }
    return done;
  }

  /** The next queued metadata write fails: `landed` applies it first (a connection lost after the
   *  commit: the store holds what the star was told failed), `lost` drops it. */
  failMeta(how: 'landed' | 'lost'): boolean {
    const w = this.metaQueue.shift();
    if (!w || this.dead) return false;
    if (how === 'landed') w.apply();
    w.reject(new MetadataUnavailableError(`simulated metadata fault (${how})`));
    return true;
  }

  get metaPending(): number { return this.metaQueue.length; }

  /** Lets everything queued land at once: the group commit, every metadata write, every upload,
   *  and the deferred work (the clock does not move). */
  landQueued(): void {
    this.log.flush();
    this.commitMeta();
    this.completeObjectPuts();
    this.runDeferred();
  }

  // ----- objects: puts land when the simulation completes them; some fail on command
  readonly objects: ObjectStore = {
    put: (key, body) => {
      if (this.dead) return never();
      return new Promise<void>((resolve, reject) => { this.objectQueue.push({ key, body: Buffer.from(body), resolve, reject }); });
    },
    get: async (key, range?: ByteRange) => {
      this.world.objectGets += 1;
      const o = this.world.objects.get(key);
      if (!o) throw Object.assign(new Error(`object ${key} not found`), { code: 'ENOENT' });
      return range ? Buffer.from(o.subarray(range.offset, range.offset + range.length)) : Buffer.from(o);
    },
    list: async (prefix, limit = Infinity) => [...this.world.objects.keys()].filter((k) => k.startsWith(prefix)).sort().slice(0, limit),
    delete: async (key) => { if (!this.dead) this.world.objects.delete(key); },
    deleteMany: async (keys) => {
      if (this.dead) return [];
      for (const key of keys) this.world.objects.delete(key);
      return [...keys];
    },
  };

  completeObjectPuts(): number {
    let done = 0;
    for (const p of this.objectQueue.splice(0)) {
      if (this.dead) break;
      if (this.world.objectPutFailures > 0) {
        this.world.objectPutFailures -= 1;
        p.reject(new Error(`simulated object store fault on ${p.key}`));
      } else {
        this.world.objects.set(p.key, p.body);
        p.resolve();
      }
      done++;
    }
    return done;
  }

  readonly settler: SegmentSettler = {
    settle: async (fileNo, streams) => {
      const frames = this.world.walFiles.get(fileNo);
      if (!frames) throw new Error(`WAL file ${fileNo} is gone`);
      return settleWalBytes(Buffer.concat(frames), streams, this.objects);
    },
  };

  readonly wal: WalJanitor = {
    removeFile: (fileNo) => { if (!this.dead) this.world.walFiles.delete(fileNo); },
  };

  crash(): void {
    this.dead = true;
    this.log.crash();
    this.timers.length = 0;
    this.deferred.length = 0;
    this.metaQueue.length = 0; // never answered: lost with the process
    this.objectQueue.length = 0;
  }

  /** What a restarted star recovers: every durable frame of every WAL file, in file order. */
  static recover(world: World): { frames: Parameters<import('../../src/core/star.ts').Star['open']>[1] extends Iterable<infer T> ? T[] : never; files: number[]; nextFileNo: number } {
    const files = [...world.walFiles.keys()].sort((a, b) => a - b);
    const frames: ReturnType<typeof Incarnation.recover>['frames'] = [];
    for (const fileNo of files) {
      for (const f of world.walFiles.get(fileNo)!) {
        const info = frameInfo(f);
        if (info.kind !== 1) continue;
        let content = 0;
        forEachRecord(f, 0, 0, (r) => { content += contentBytes(r); return true; });
        frames.push({ fileNo, streamId: info.streamId, firstSeq: info.firstSeq, count: info.recordCount, frame: f, timestamps: frameTimestamps(f), contentBytes: content });
      }
    }
    return { frames, files, nextFileNo: (files[files.length - 1] ?? 0) + 1 };
  }
}

/** Why a simulated WAL write fails: the codes the real flusher reports most (log-ring.ts). */
const SIM_WAL_FAILURES = [WalFailure.ENOSPC, WalFailure.EIO] as const;
/** Restore probes a failed WAL makes at most before one fits (each failed one backs off, as the
 *  real flusher's recoverFrom: WAL_RECOVERY_RETRY_MS_MIN doubling up to WAL_RECOVERY_RETRY_MS_MAX). */
const SIM_WAL_PROBES_FAILED_MAX = 5;

/** A simulated log ring: frames queue as the star appends them and become durable only when the
 *  simulation flushes; what a flush does with each frame is the subclass's (a WAL file, a commit).
 *  On the simulation's word a group commit fails as the real flusher's does (flusher-worker.ts):
 *  part of what is pending is published, the failure is flagged, the sequencer's discardUndurable()
 *  drops the rest, and the log recovers after some virtual time. Unless told to, it never fails. */
export abstract class SimRing implements LogPort {
  readonly capacityBytes = 4 * 1024 * 1024;
  private head = 0;
  private published = 0;
  private durable = 0;
  private signal = 0;
  private readonly queued: { end: number; bytes: Buffer }[] = [];
  /** Heads as published past the durable offset, in order: where a flusher pass may have ended (it
   *  drains up to the head it reads, so a group commit never splits what one publish made visible). */
  private marks: number[] = [];
  private waiters: (() => void)[] = [];
  private dead = false;
  /** While the WAL cannot be written: why (a WalFailure code), whether the sequencer asked for the
   *  discard yet (recovery waits for it, as recoverFrom does), and how long recovery then takes. */
  private failure: { code: number; discarded: boolean; recoverAfterMs: number } | undefined;
  /** A failing group commit that runs inside the next durableOffset() read, after the value is taken:
   *  the flusher thread syncing, publishing and failing between the sequencer's read of the durable
   *  offset and its look at the failure flag (code review 41, F1). */
  private failOnRead: ((answered: number) => void) | undefined;
  /** The flusher before code review 41's F4 fix published a ROTATE durable only at the end of its
   *  pass, so a write failing on the next file discarded it (and the sealed file never settled).
   *  Only for checking that the simulation catches that flusher: never true in a committed test. */
  private readonly rotatePublishedAtPassEnd = false;
  private note = '';

  /** The frame as the flush will see it: a copy (a WAL file) or a view of the star's own bytes. */
  protected abstract keep(frame: Uint8Array): Buffer;
  abstract currentFileNo(): number;

  tryAppend(frame: Uint8Array): number {
    if (this.dead) return -1;
    if (this.head - this.durable + frame.length > this.capacityBytes) return -1;
    this.head += frame.length;
    this.queued.push({ end: this.head, bytes: this.keep(frame) });
    return this.head;
  }

  publish(): void {
    if (this.head > this.published) this.marks.push(this.head);
    this.published = this.head;
  }

  durableOffset(): number {
    const durable = this.durable;
    const race = this.failOnRead;
    this.failOnRead = undefined;
    race?.(durable);
    return durable;
  }

  durableSignal(): number { return this.signal; }
  /** How the last failure struck, in a few words, for a simulation's trace. */
  get failureNote(): string { return this.note; }
  failed(): boolean { return this.failure !== undefined; }
  failureCause(): string { return this.failure ? walFailureText(this.failure.code) : ''; }

  /** The sequencer has failed every append not yet durable. As the real flusher does once asked,
   *  everything appended is dropped, never to be written (the real one also cuts its file back to the
   *  synced frames; here a frame reaches its file only once synced), and the durable offset moves
   *  past it without a signal. Recovery starts now. Nothing to do unless the WAL failed. */
  discardUndurable(): void {
    if (this.dead || !this.failure || this.failure.discarded) return;
    this.failure.discarded = true;
    this.queued.length = 0;
    this.marks = [];
    this.published = this.head;
    this.durable = this.head;
    this.recoverIn(this.failure.recoverAfterMs);
  }

  /** Arranges recover() after `ms` of virtual time; without a clock (the base), the simulation calls
   *  recover() itself. */
  protected recoverIn(_ms: number): void { /* no clock here */ }

  /** The WAL can be written again (a restore probe fitted): the failure clears and the signal wakes
   *  the sequencer, which resumes on currentFileNo(). Only once the discard was asked. */
  recover(): boolean {
    if (this.dead || !this.failure?.discarded) return false;
    this.failure = undefined;
    this.bump();
    return true;
  }

  waitDurable(seen: number): Promise<unknown> {
    if (this.dead) return never();
    if (this.signal !== seen) return Promise.resolve();
    return new Promise<void>((resolve) => { this.waiters.push(resolve); });
  }

  private bump(): void {
    this.signal++;
    for (const w of this.waiters.splice(0)) w();
  }

  /** One group commit: `write` sees every published frame in order, then the durable offset moves.
   *  Nothing while the WAL is failing (the flusher is busy recovering). */
  protected commitPublished(write: (end: number, bytes: Buffer) => void): number {
    if (this.dead || this.failure || this.published === this.durable) return 0;
    return this.commitTo(this.published, write);
  }

  /** Writes the queued frames ending at or before `end` and publishes `end` durable. */
  private commitTo(end: number, write: (end: number, bytes: Buffer) => void): number {
    let n = 0;
    while (this.queued.length > 0 && this.queued[0].end <= end) {
      const f = this.queued.shift()!;
      write(f.end, f.bytes);
      n++;
    }
    this.durable = end;
    this.marks = this.marks.filter((m) => m > end);
    this.bump();
    return n;
  }

  /** A group commit that meets a failing disk, as drain() in flusher-worker.ts meets it. The passes
   *  before the failing one complete (each up to a head once published). In the failing pass the
   *  flusher publishes at every ROTATE: the frames before it once they are synced and their file
   *  trimmed, then the ROTATE itself once the next file is open. So `random` picks the failing call
   *  (a frame's write, a ROTATE's seal or its next file's open, or the pass's last sync), and what
   *  was published before that call stays durable; every other frame of the pass is left for the
   *  discard. Then the failure is flagged and the signal bumped (after the publish, as the real one).
   *  False when there was nothing to fail or the WAL is already failing. */
  protected failPublished(random: () => number, write: (end: number, bytes: Buffer) => void, readAnswered?: number): boolean {
    if (this.dead || this.failure || this.failOnRead || this.published === this.durable) return false;
    // The failing pass has something to write (the flusher drains only when the head moved).
    const starts = [this.durable, ...this.marks.slice(0, -1)];
    const start = starts[Math.floor(random() * starts.length)];
    if (start > this.durable) this.commitTo(start, write);
    const pass = this.queued.filter((f) => f.end <= this.published);
    const at = Math.floor(random() * (pass.length + 1)); // pass.length: the final fdatasync
    let publishedEnd = start;
    /** A ROTATE whose next file opened but which the failing pass never published (the pre-F4
     *  flusher): the flusher reports the next file all the same. */
    let openedOnly: { end: number; bytes: Buffer } | undefined;
    let frameStart = start;
    for (let i = 0; i < at; i++) {
      const f = pass[i];
      if (f.bytes[8] === FRAME_ROTATE) {
        if (this.rotatePublishedAtPassEnd) { publishedEnd = frameStart; openedOnly = f; } else publishedEnd = f.end;
      }
      frameStart = f.end;
    }
    // A ROTATE failing to open the next file was sealed and published up to its start first (its
    // seal's own write or sync may fail as well, before that publish).
    if (at < pass.length && pass[at].bytes[8] === FRAME_ROTATE && random() < 0.5) { publishedEnd = frameStart; openedOnly = undefined; }
    if (publishedEnd > this.durable) this.commitTo(publishedEnd, write);
    if (openedOnly) write(openedOnly.end, openedOnly.bytes);
    const probesFailed = Math.floor(random() * (SIM_WAL_PROBES_FAILED_MAX + 1));
    let recoverAfterMs = 1; // restoreFile's zero-fill and probe fit at once: the next millisecond
    for (let i = 0; i < probesFailed; i++) recoverAfterMs += Math.min(WAL_RECOVERY_RETRY_MS_MIN * 2 ** i, WAL_RECOVERY_RETRY_MS_MAX);
    this.failure = { code: SIM_WAL_FAILURES[Math.floor(random() * SIM_WAL_FAILURES.length)], discarded: false, recoverAfterMs };
    this.note = `${readAnswered === undefined ? '' : `while the sequencer read the durable offset (answered ${readAnswered}): `}passes completed to ${start}; `
      + `the next (to ${this.published}) failed at its frame ${at} of ${pass.length}, durable to ${this.durable}${openedOnly ? ', a ROTATE opened but not published' : ''}; `
      + `file ${this.currentFileNo()}; recovery ${recoverAfterMs} ms after the discard`;
    this.bump();
    return true;
  }

  /** As failPublished, but inside the sequencer's next read of the durable offset. First a pass up to
   *  some published head short of the last completes, or none does; either way the signal moves and
   *  the sequencer wakes to read (it takes a lap after any bump), leaving at least one publish for
   *  the failing commit. False when nothing is published past the durable offset. */
  protected failPublishedOnNextRead(random: () => number, write: (end: number, bytes: Buffer) => void): boolean {
    if (this.dead || this.failure || this.failOnRead || this.marks.length === 0) return false;
    const firsts = [this.durable, ...this.marks.slice(0, -1)];
    this.commitTo(firsts[Math.floor(random() * firsts.length)], write);
    this.failOnRead = (answered) => { this.failPublished(random, write, answered); };
    return true;
  }

  /** Bytes appended past the durable offset (this.head - durable while queued frames wait). */
  get unflushed(): number { return this.published - this.durable; }
  /** Appended bytes not yet durable: what a reload must never let commit (cluster-ports.ts). */
  protected get undurableEnd(): number | undefined { return this.head > this.durable ? this.head : undefined; }

  crash(): void {
    this.dead = true;
    this.waiters = [];
    this.queued.length = 0;
    this.failOnRead = undefined;
  }
}

/** The log ring and flusher of a star alone: a flush writes the published frames to the current WAL
 *  file; a ROTATE frame seals the file and opens the next. */
export class SimLog extends SimRing {
  constructor(private readonly inc: Incarnation, private fileNo: number) { super(); }

  protected keep(frame: Uint8Array): Buffer { return Buffer.from(frame); }
  currentFileNo(): number { return this.fileNo; }

  /** What the flusher does with a frame: a ROTATE seals the file and opens the next; any other frame
   *  is sealed and written to the current file (durable once the group commit publishes it). */
  private readonly write = (_end: number, bytes: Buffer): void => {
    if (bytes[8] === FRAME_ROTATE) { this.fileNo += 1; return; }
    sealFrame(bytes, 0, bytes.length); // the flusher's crc32c, which settling and recovery check
    let file = this.inc.world.walFiles.get(this.fileNo);
    if (!file) this.inc.world.walFiles.set(this.fileNo, (file = []));
    file.push(bytes);
  };

  flush(): number {
    return this.commitPublished(this.write);
  }

  /** A group commit fails now (see SimRing.failPublished); `random` decides how. */
  failFlush(random: () => number): boolean {
    return this.failPublished(random, this.write);
  }

  /** A group commit fails inside the sequencer's next read of the durable offset (F1's window). */
  failFlushOnNextRead(random: () => number): boolean {
    return this.failPublishedOnNextRead(random, this.write);
  }

  /** Recovery is a timer of this incarnation: it comes as virtual time passes, and never after a crash. */
  protected override recoverIn(ms: number): void {
    this.inc.timerPort.setTimeout(() => { this.recover(); }, ms);
  }
}
