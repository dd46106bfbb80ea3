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

/** A simulated log ring: frames queue as the star appends them and become durable only when the
 *  simulation flushes; what a flush does with each frame is the subclass's (a WAL file, a commit). */
export abstract class SimRing implements LogPort {
  readonly capacityBytes = 4 * 1024 * 1024;
  private head = 0;
  private published = 0;
  private durable = 0;
  private signal = 0;
  private readonly queued: { end: number; bytes: Buffer }[] = [];
  private waiters: (() => void)[] = [];
  private dead = false;

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

  publish(): void { this.published = this.head; }
  durableOffset(): number { return this.durable; }
  durableSignal(): number { return this.signal; }
  failed(): boolean { return false; }
  failureCause(): string { return ''; }
  discardUndurable(): void { /* the simulated log never fails as a whole */ }

  waitDurable(seen: number): Promise<unknown> {
    if (this.dead) return never();
    if (this.signal !== seen) return Promise.resolve();
    return new Promise<void>((resolve) => { this.waiters.push(resolve); });
  }

  /** One group commit: `write` sees every published frame in order, then the durable offset moves. */
  protected commitPublished(write: (end: number, bytes: Buffer) => void): number {
    if (this.dead || this.published === this.durable) return 0;
    let n = 0;
    while (this.queued.length > 0 && this.queued[0].end <= this.published) {
      const f = this.queued.shift()!;
      write(f.end, f.bytes);
      n++;
    }
    this.durable = this.published;
    this.signal++;
    for (const w of this.waiters.splice(0)) w();
    return n;
  }

  /** Bytes appended past the durable offset (this.head - durable while queued frames wait). */
  get unflushed(): number { return this.published - this.durable; }
  /** Appended bytes not yet durable: what a reload must never let commit (cluster-ports.ts). */
  protected get undurableEnd(): number | undefined { return this.head > this.durable ? this.head : undefined; }

  crash(): void {
    this.dead = true;
    this.waiters = [];
    this.queued.length = 0;
  }
}

/** The log ring and flusher of a star alone: a flush writes the published frames to the current WAL
 *  file; a ROTATE frame seals the file and opens the next. */
export class SimLog extends SimRing {
  constructor(private readonly inc: Incarnation, private fileNo: number) { super(); }

  protected keep(frame: Uint8Array): Buffer { return Buffer.from(frame); }
  currentFileNo(): number { return this.fileNo; }

  flush(): number {
    return this.commitPublished((_end, bytes) => {
      if (bytes[8] === FRAME_ROTATE) { this.fileNo += 1; return; }
      sealFrame(bytes, 0, bytes.length); // the flusher's crc32c, which settling and recovery check
      let file = this.inc.world.walFiles.get(this.fileNo);
      if (!file) this.inc.world.walFiles.set(this.fileNo, (file = []));
      file.push(bytes);
    });
  }
}
