// The cluster's shared tables in memory, for the seeded simulation of ClusterService
// (cluster-sim.test.ts): what PostgresCluster (src/storage/metadata/postgres-cluster.ts) answers, as
// ClusterService sees it. Membership rows with a heartbeat time, a state and objects_ok; a lease row
// per address with its holder, epoch and expiry, all by the virtual clock (the store's clock: the
// stars' and the store's are one here); and chunk rows read from the frames the simulated commit logs
// committed (Commits), each also an object in the shared object store, as a group commit's object.
//
// Each statement a star sends lands after a seeded delay of virtual time (a timer of the star's
// incarnation) and is answered after another: other stars' statements may land in between. A crashed
// star's statements never land and are never answered.
//
// Semantics kept from the SQL: take succeeds when the row is absent, has run out, or is the taker's
// own, and the epoch rises by one; renew only at the same holder and epoch (a row that ran out and
// nobody took is renewed); release only at the same holder and epoch, leaving the epoch and no holder;
// join keeps a decommissioned star so; leave sets the heartbeat far in the past.

import type { ClusterMetadata, ClusterStore, LeaseRef } from '../../src/cluster/cluster-ports.ts';
import type { BucketMeta, StreamMeta } from '../../src/storage/metadata/metadata-store.ts';
import type { ChunkRow, LeaseHolder, StarRow, TakeResult, VacantUnsettled } from '../../src/storage/metadata/postgres-cluster.ts';
import type { Commits } from './cluster-ports.ts';
import type { Incarnation, World } from './ports.ts';

const addr = (bucket: string, key: string): string => `${bucket}\u0000${key}`;
const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

export interface LeaseRow { bucket: string; key: string; holder: string; epoch: number; expiresAtMs: number }
interface StarRecord { star_id: string; state: StarRow['state']; startedMs: number; heartbeatAtMs: number; objects_ok?: boolean }

/** What a statement of one star did to the lease rows, for the simulation's checks (applied, by the
 *  store's clock). */
export type LeaseEvent =
  | { kind: 'take'; starId: string; bucket: string; key: string; epoch: number; atMs: number }
  | { kind: 'take-refused'; starId: string; bucket: string; key: string; atMs: number }
  | { kind: 'renew'; starId: string; bucket: string; key: string; epoch: number; kept: boolean; atMs: number }
  | { kind: 'release'; starId: string; bucket: string; key: string; epoch: number; released: boolean; atMs: number };

/** The shared tables: one per simulated cluster. */
export class SimClusterTables {
  readonly leases = new Map<string, LeaseRow>();
  readonly stars = new Map<string, StarRecord>();
  /** Streams whose chunks were forgotten (deleted). */
  readonly dropped = new Set<string>();
  /** Every lease statement as it landed, in order. */
  readonly events: LeaseEvent[] = [];
  /** Chunk rows made so far from the committed frames (commits.frames[i] is chunks[i]). */
  private readonly chunks: ChunkRow[] = [];

  constructor(readonly world: World, readonly commits: Commits) {}

  get nowMs(): number { return this.world.nowMs; }

  /** Writes a lease row, and its holder and epoch where the simulated guards read them (World.leases). */
  setLease(row: LeaseRow): void {
    const a = addr(row.bucket, row.key);
    this.leases.set(a, row);
    this.world.leases.set(a, { holder: row.holder, epoch: row.epoch });
  }

  /** The committed frames as chunk rows, each frame stored as an object of its own (as the commit
   *  log's group commit object holds it). */
  chunkRows(): ChunkRow[] {
    for (let i = this.chunks.length; i < this.commits.frames.length; i++) {
      const f = this.commits.frames[i];
      const objectKey = `chunks/${f.streamId}/${f.firstSeq}-${i}`;
      this.world.objects.set(objectKey, Buffer.from(f.frame));
      this.chunks.push({ stream_id: f.streamId, first_seq: f.firstSeq, end_seq: f.firstSeq + f.count, object_key: objectKey, byte_offset: 0, byte_length: f.frame.length });
    }
    return this.chunks.filter((c) => !this.dropped.has(c.stream_id));
  }

  starRow(s: StarRecord): StarRow {
    return {
      star_id: s.star_id, bridge_address: `sim-bridge-${s.star_id}`, grpc_address: `sim-grpc-${s.star_id}`, state: s.state,
      started_unix_ms: s.startedMs, heartbeat_age_ms: this.nowMs - s.heartbeatAtMs, ...(s.objects_ok === undefined ? {} : { objects_ok: s.objects_ok }),
    };
  }

  /** The unexpired lease rows naming `starId` (streams and the auditor's). */
  unexpiredOf(starId: string): LeaseRow[] {
    return [...this.leases.values()].filter((l) => l.holder === starId && l.expiresAtMs > this.nowMs);
  }
}

/** One star's connection to the tables (a PostgresCluster made with its star id). */
export class SimClusterStore implements ClusterStore {
  /** Statements sent, and how many were answered. */
  sent = 0;
  /** Called as each take is sent (before it lands): the simulation's check that a star stepped aside
   *  takes nothing. */
  onTakeSent: ((bucket: string, key: string) => void) | undefined;
  /** Told, before the star sees the answer, of each lease a take or renewal sent at `sentMs` gave it. */
  onGranted: ((bucket: string, key: string, epoch: number, sentMs: number) => void) | undefined;

  constructor(
    private readonly t: SimClusterTables,
    private readonly inc: Incarnation,
    readonly starId: string,
    /** Draws the delays (ms of virtual time) before a statement lands and before its answer. */
    private readonly delayMs: () => number,
  ) {}

  /** Until when this star's statements do not reach the store (a partition, a long pause): they
   *  land once it ends. */
  stalledUntilMs = 0;

  /** Runs `apply` when the statement lands and answers its result later; nothing once the star crashed. */
  private statement<T>(apply: () => T): Promise<T> {
    if (this.inc.dead) return never();
    this.sent += 1;
    return new Promise<T>((resolve, reject) => {
      this.inc.timerPort.setTimeout(() => {
        if (this.inc.dead) return;
        let out: { ok: true; v: T } | { ok: false; e: unknown };
        try { out = { ok: true, v: apply() }; } catch (e) { out = { ok: false, e }; }
        this.inc.timerPort.setTimeout(() => {
          if (this.inc.dead) return;
          if (out.ok) resolve(out.v); else reject(out.e instanceof Error ? out.e : new Error(String(out.e)));
        }, this.delayMs());
      }, Math.max(this.delayMs(), this.stalledUntilMs - this.t.nowMs));
    });
  }

  // ----- membership

  join(startedMs: number): Promise<void> {
    return this.statement(() => {
      const cur = this.t.stars.get(this.starId);
      this.t.stars.set(this.starId, {
        star_id: this.starId, state: cur?.state === 'decommissioned' ? 'decommissioned' : 'active', startedMs, heartbeatAtMs: this.t.nowMs,
        ...(cur?.objects_ok === undefined ? {} : { objects_ok: cur.objects_ok }),
      });
    });
  }

  heartbeat(objectsOk = true): Promise<void> {
    return this.statement(() => {
      const s = this.t.stars.get(this.starId);
      if (s) { s.heartbeatAtMs = this.t.nowMs; s.objects_ok = objectsOk; }
    });
  }

  setState(starId: string, state: 'draining' | 'decommissioned'): Promise<boolean> {
    return this.statement(() => {
      const s = this.t.stars.get(starId);
      if (!s) return false;
      if (s.state !== 'decommissioned') s.state = state;
      return true;
    });
  }

  leave(): Promise<void> {
    return this.statement(() => {
      const s = this.t.stars.get(this.starId);
      if (s) s.heartbeatAtMs = 0;
    });
  }

  stars(): Promise<StarRow[]> {
    return this.statement(() => [...this.t.stars.values()].sort((a, b) => (a.star_id < b.star_id ? -1 : 1)).map((s) => this.t.starRow(s)));
  }

  leaseCounts(): Promise<Map<string, number>> {
    return this.statement(() => {
      const m = new Map<string, number>();
      for (const l of this.t.leases.values()) if (l.expiresAtMs > this.t.nowMs) m.set(l.holder, (m.get(l.holder) ?? 0) + 1);
      return m;
    });
  }

  // ----- leases

  take(bucket: string, key: string, ttlMs: number): Promise<TakeResult> {
    this.onTakeSent?.(bucket, key);
    const sentMs = this.t.nowMs;
    return this.statement((): TakeResult => {
      const now = this.t.nowMs;
      const cur = this.t.leases.get(addr(bucket, key));
      if (!cur || cur.holder === this.starId || cur.expiresAtMs <= now) {
        const epoch = (cur?.epoch ?? 0) + 1;
        this.t.setLease({ bucket, key, holder: this.starId, epoch, expiresAtMs: now + ttlMs });
        this.t.events.push({ kind: 'take', starId: this.starId, bucket, key, epoch, atMs: now });
        return { taken: true, epoch };
      }
      this.t.events.push({ kind: 'take-refused', starId: this.starId, bucket, key, atMs: now });
      return { taken: false, current: this.holderNow(cur) };
    }).then((r) => {
      if (r.taken) this.onGranted?.(bucket, key, r.epoch, sentMs);
      return r;
    });
  }

  private holderNow(l: LeaseRow): LeaseHolder {
    const s = this.t.stars.get(l.holder);
    const star = s && this.t.starRow(s);
    // holderOf's join reads no objects_ok.
    if (star) delete star.objects_ok;
    return { holder: l.holder, epoch: l.epoch, remaining_ms: l.expiresAtMs - this.t.nowMs, ...(star ? { star } : {}) };
  }

  holderOf(bucket: string, key: string): Promise<LeaseHolder | undefined> {
    return this.statement(() => {
      const l = this.t.leases.get(addr(bucket, key));
      return l && this.holderNow(l);
    });
  }

  renew(leases: LeaseRef[], ttlMs: number): Promise<Set<number>> {
    const asked = leases.map((l) => ({ ...l }));
    const sentMs = this.t.nowMs;
    return this.statement(() => {
      const kept = new Set<number>();
      asked.forEach((h, i) => {
        const l = this.t.leases.get(addr(h.bucket, h.key));
        const ok = l !== undefined && l.holder === this.starId && l.epoch === h.epoch;
        if (ok) { l.expiresAtMs = this.t.nowMs + ttlMs; kept.add(i); }
        this.t.events.push({ kind: 'renew', starId: this.starId, bucket: h.bucket, key: h.key, epoch: h.epoch, kept: ok, atMs: this.t.nowMs });
      });
      return kept;
    }).then((kept) => {
      for (const i of kept) this.onGranted?.(asked[i].bucket, asked[i].key, asked[i].epoch, sentMs);
      return kept;
    });
  }

  release(leases: LeaseRef[]): Promise<void> {
    const asked = leases.map((l) => ({ ...l }));
    return this.statement(() => {
      for (const h of asked) {
        const l = this.t.leases.get(addr(h.bucket, h.key));
        const ok = l !== undefined && l.holder === this.starId && l.epoch === h.epoch;
        if (ok) this.t.setLease({ ...l, holder: '', expiresAtMs: this.t.nowMs });
        this.t.events.push({ kind: 'release', starId: this.starId, bucket: h.bucket, key: h.key, epoch: h.epoch, released: ok, atMs: this.t.nowMs });
      }
    });
  }

  // ----- chunks

  chunksOf(streamId: string, fromSeq: number): Promise<ChunkRow[]> {
    return this.statement(() => this.t.chunkRows().filter((c) => c.stream_id === streamId && c.end_seq > fromSeq).sort((a, b) => a.first_seq - b.first_seq));
  }

  lastChunkOf(streamId: string): Promise<ChunkRow | undefined> {
    return this.statement(() => this.t.chunkRows().filter((c) => c.stream_id === streamId).sort((a, b) => b.first_seq - a.first_seq)[0]);
  }

  vacantUnsettled(after: VacantUnsettled | undefined, limit: number): Promise<VacantUnsettled[]> {
    return this.statement(() => {
      const chunks = this.t.chunkRows();
      const out: VacantUnsettled[] = [];
      for (const row of this.t.world.meta.streams.values()) {
        if (!chunks.some((c) => c.stream_id === row.stream_id && c.end_seq > row.settled_end_seq)) continue;
        const l = this.t.leases.get(addr(row.bucket, row.key));
        if (l && l.expiresAtMs > this.t.nowMs) continue;
        out.push({ bucket: row.bucket, key: row.key, stream_id: row.stream_id });
      }
      const k = (v: VacantUnsettled): string => `${v.bucket}\u0000${v.key}\u0000${v.stream_id}`;
      return out.filter((v) => after === undefined || k(v) > k(after)).sort((a, b) => (k(a) < k(b) ? -1 : 1)).slice(0, limit);
    });
  }

  dropChunks(streamId: string): Promise<void> {
    return this.statement(() => { this.t.dropped.add(streamId); });
  }

  // Chunk objects are never collected in the simulation.
  unreferencedChunkObjects(): Promise<string[]> { return this.statement(() => []); }
  forgetChunkObjects(): Promise<void> { return this.statement(() => undefined); }
}

/** The stream and bucket rows as ClusterService reads them, over one incarnation's metadata port. */
export function simClusterMetadata(inc: Incarnation): ClusterMetadata {
  const m = inc.world.meta;
  const copy = <T>(v: T): T => structuredClone(v);
  return {
    readStream: (bucket, key) => inc.metadata.readStream(bucket, key),
    readBucket: (name) => inc.metadata.readBucket(name),
    listBucketRows: async (startAfter, limit): Promise<BucketMeta[]> =>
      [...m.buckets.values()].filter((b) => b.name > startAfter).sort((a, b) => (a.name < b.name ? -1 : 1)).slice(0, limit).map(copy),
    listStreamRows: async (bucket, startAfter, limit): Promise<StreamMeta[]> =>
      [...m.streams.values()].filter((s) => s.bucket === bucket && s.key > startAfter).sort((a, b) => (a.key < b.key ? -1 : 1)).slice(0, limit).map(copy),
    bucketHasStreams: async (bucket) => [...m.streams.values()].some((s) => s.bucket === bucket),
  };
}
