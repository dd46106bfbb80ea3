// The cluster's tables in PostgreSQL (made by migration 4 in postgres-store.ts): membership (stars),
// per-stream leases with epochs, and the chunks that hold each stream's committed, unsettled tail.
//
// - A lease row (bucket, key) names its holder and an epoch. Taking it is one compare-and-set: a star
//   takes a lease that has run out, or takes its own again, and the epoch rises every time. Renewing
//   keeps the epoch. Expiry is PostgreSQL's clock, so the stars' clocks never decide who leads.
// - A group commit is one statement: the leases of every stream in it are locked and checked (holder
//   and epoch), their expiry pushed out, and a chunk row written for each stream that passed. A star
//   whose lease was taken over commits nothing for that stream: the taker bumped the epoch under the
//   same row lock, so it either saw this commit's chunks when it loaded, or this commit fails.
// - Statements go through a small pool of connections of their own, apart from the metadata store's
//   one ordered connection, so a commit never queues behind a settle's row write.

import type pg from 'pg';
import { dropClient, isConnectionFailure, loadPg, OverdueAnswers, pgConnectionOptions, retryingConflicts, sendWatched, type PgDriver } from './pg-driver.ts';
import { keyFromBytes, keyToBytes } from '../format/key-bytes.ts';
import { MetadataUnavailableError } from './metadata-store.ts';

/** Connections the cluster's statements share (commits run one at a time; leases and heartbeats beside). */
const CLUSTER_POOL_CONNECTIONS_MAX = 4;

export interface StarRow {
  star_id: string;
  bridge_address: string;
  grpc_address: string;
  state: 'active' | 'draining' | 'decommissioned';
  started_unix_ms: number;
  /** How long ago the star last reported, by PostgreSQL's clock. */
  heartbeat_age_ms: number;
  /** Whether the star reached the object store when it last reported (absent: not known, taken as
   *  yes). */
  objects_ok?: boolean;
}

export interface LeaseHolder {
  holder: string;
  epoch: number;
  /** Until the lease runs out, by PostgreSQL's clock (<= 0: it has). */
  remaining_ms: number;
  /** The holder's membership row, when it has one. */
  star?: StarRow;
}

/** A vacant stream's unsettled chunks, as the sweep finds them (cluster-service.ts sweepUnsettled). */
export interface VacantUnsettled { bucket: string; key: string; stream_id: string }

export type TakeResult = { taken: true; epoch: number } | { taken: false; current: LeaseHolder };

export interface ChunkRow {
  stream_id: string;
  first_seq: number;
  end_seq: number;
  object_key: string;
  byte_offset: number;
  byte_length: number;
}

/** A chunk row as PostgreSQL returns it (bigints as text), and the columns that make it. */
interface ChunkRecord { stream_id: string; first_seq: string; end_seq: string; object_key: string; byte_offset: string; byte_length: string }
const CHUNK_COLUMNS = 'stream_id, first_seq, end_seq, object_key, byte_offset, byte_length';
const chunkRowOf = (r: ChunkRecord): ChunkRow => ({
  stream_id: r.stream_id, first_seq: Number(r.first_seq), end_seq: Number(r.end_seq), object_key: r.object_key,
  byte_offset: Number(r.byte_offset), byte_length: Number(r.byte_length),
});

/** One stream's part of a group commit. */
export interface ChunkCommit extends ChunkRow {
  bucket: string;
  key: string;
  epoch: number;
}

function unavailable(err: unknown): MetadataUnavailableError {
  if (err instanceof MetadataUnavailableError) return err;
  return new MetadataUnavailableError(`the metadata store (postgres) failed: ${(err as Error).message ?? String(err)}`, { cause: err });
}

const STAR_COLUMNS = `star_id, bridge_address, grpc_address, state, started_unix_ms, objects_ok,
  (extract(epoch FROM clock_timestamp() - heartbeat_at) * 1000)::float8 AS heartbeat_age_ms`;

/** What pg_stat_activity shows for a cluster star's commit pool (PostgreSQL keeps the first 63 bytes). */
export function clusterApplicationName(schema: string, starId: string): string {
  return `svcd-cluster-${schema}-${starId}`;
}

export class PostgresCluster {
  /** The pool statements go to, made once the driver has loaded (pg-driver.ts); replaced when one of
   *  its connections is found dead (q). */
  private pool: Promise<pg.Pool>;
  private driver: PgDriver | undefined;
  private readonly s: string;
  /** Statements waiting past POSTGRES_ANSWER_SLOW_MS for their answer, and whether the last one
   *  failed on its connection: a cluster star's metadata readiness includes both (healthy()). */
  private readonly overdue = new OverdueAnswers();
  private connectionFailed = false;
  private closed = false;
  /** Why a connection was given up while a statement waited on it (sendWatched), for that statement's error. */
  private readonly deadWhy = new WeakMap<pg.PoolClient, string>();
  /** Pool connections given an 'error' listener of their own (q). */
  private readonly guarded = new WeakSet<pg.PoolClient>();

  /** `onConnectionLost`: told when a statement finds its connection dead (not when dropConnections
   *  was asked for); the metadata store's connection, to the same server, is suspect too. */
  constructor(private readonly url: string, schema: string, private readonly starId: string, private readonly onConnectionLost?: () => void) {
    this.s = schema;
    this.pool = this.newPool();
  }

  /** The next statements go to a new pool, and the current one closes as its statements end (each
   *  given up by its answer bound if its connection is dead). */
  dropConnections(): void {
    if (this.closed) return;
    const old = this.pool;
    this.pool = this.newPool();
    void old.then((p) => p.end()).catch(() => undefined);
  }

  private newPool(): Promise<pg.Pool> {
    return loadPg().then((driver) => {
      this.driver = driver;
      // The schema names the cluster: stars of two clusters on one server may share an id. A
      // statement the driver gives up (pgConnectionOptions) ends in an error, and the pool then drops
      // its connection instead of handing it out again.
      const pool = new driver.Pool({ ...pgConnectionOptions(this.url, clusterApplicationName(this.s, this.starId)), max: CLUSTER_POOL_CONNECTIONS_MAX });
      // A dropped idle connection is replaced on next use; without a listener the error would end the process.
      pool.on('error', () => undefined);
      return pool;
    });
  }

  /** False while a statement waits long for its answer or the last one lost its connection: a
   *  cluster star's commits, leases and stream loads all run here, so it is not ready then. */
  healthy(): boolean {
    return this.overdue.count === 0 && !this.connectionFailed;
  }

  /** Runs one statement. `watched` (the default): a statement appends wait on (a lease, a commit, a
   *  stream's chunks), whose slow answer makes the star not ready; a scan in the background (the
   *  sweeps, the chunk collector, the dashboard's counts) may take its time on a large schema. */
  private async q<T extends pg.QueryResultRow>(sql: string, params: unknown[], watched = true): Promise<T[]> {
    const current = this.pool;
    const pool = await current;
    // The wait for a free connection counts: a pool whose connections all hang makes it long.
    let client: pg.PoolClient | undefined;
    const answered = watched ? this.overdue.watch() : undefined;
    const settled = (failedConnection: boolean): void => {
      answered?.();
      this.connectionFailed = failedConnection;
    };
    let broken: Error | undefined;
    try {
      client = await pool.connect();
      const c = client;
      // As pool.query would: a connection failing while it is out of the pool fails its statement (or
      // the next one), and must not be an uncaught 'error' event.
      if (!this.guarded.has(c)) { c.on('error', () => undefined); this.guarded.add(c); }
      // A statement chosen to break a deadlock goes again. One whose session is found dead destroys its
      // connection: it fails as on a lost connection, and the pool replaces the connection.
      const session = { client: c, driver: this.driver, url: this.url, applicationName: clusterApplicationName(this.s, this.starId) };
      const send = (): Promise<pg.QueryResult<T>> => sendWatched(() => c.query<T>(sql, params), session, (why) => { this.deadWhy.set(c, why); dropClient(c); });
      const rows = (await retryingConflicts(() => this.driver, send)).rows;
      settled(false);
      return rows;
    } catch (err) {
      const dead = isConnectionFailure(this.driver, err);
      settled(dead);
      // The pool destroys a connection released with an error instead of handing it out again.
      if (dead) broken = err instanceof Error ? err : new Error(String(err));
      const why = client && this.deadWhy.get(client);
      // A connection that died without a word (its answer never came) was opened to the same server
      // over the same path as its idle siblings, which would each cost the next statements the same
      // wait: the next statements go to a new pool, and the old one closes as its statements end.
      if (dead && current === this.pool && !this.closed) {
        this.dropConnections();
        this.onConnectionLost?.();
      }
      throw unavailable(why ? new Error(why, { cause: err }) : err);
    } finally {
      client?.release(broken);
    }
  }

  // ------------------------------------------------------------------ membership

  async join(bridgeAddress: string, grpcAddress: string, startedMs: number): Promise<void> {
    await this.q(
      `INSERT INTO ${this.s}.stars (star_id, bridge_address, grpc_address, state, started_unix_ms, heartbeat_at)
       VALUES ($1, $2, $3, 'active', $4, clock_timestamp())
       ON CONFLICT (star_id) DO UPDATE SET bridge_address = $2, grpc_address = $3, started_unix_ms = $4, heartbeat_at = clock_timestamp(),
         state = CASE WHEN ${this.s}.stars.state = 'decommissioned' THEN 'decommissioned' ELSE 'active' END`,
      [this.starId, bridgeAddress, grpcAddress, startedMs]);
  }

  /** `objectsOk`: whether this star reaches the object store now. */
  async heartbeat(objectsOk = true): Promise<void> {
    await this.q(`UPDATE ${this.s}.stars SET heartbeat_at = clock_timestamp(), objects_ok = $2 WHERE star_id = $1`, [this.starId, objectsOk]);
  }

  /** Sets a star's membership state (Drain, Decommission); false when there is no such star. A
   *  decommissioned star stays so (join keeps it). */
  async setState(starId: string, state: 'draining' | 'decommissioned'): Promise<boolean> {
    const rows = await this.q<{ star_id: string }>(
      `UPDATE ${this.s}.stars SET state = CASE WHEN state = 'decommissioned' THEN state ELSE $2 END WHERE star_id = $1 RETURNING star_id`,
      [starId, state]);
    return rows.length > 0;
  }

  /** A star that stops on purpose leaves at once (its last heartbeat set long past), so no other star
   *  sends vacant streams to it while its heartbeat would still look fresh. */
  async leave(): Promise<void> {
    await this.q(`UPDATE ${this.s}.stars SET heartbeat_at = to_timestamp(0) WHERE star_id = $1`, [this.starId]);
  }

  async stars(): Promise<StarRow[]> {
    return this.q<StarRow>(`SELECT ${STAR_COLUMNS} FROM ${this.s}.stars ORDER BY star_id`, []);
  }

  /** Leases each star holds that have not run out. */
  async leaseCounts(): Promise<Map<string, number>> {
    const rows = await this.q<{ holder: string; n: number }>(
      `SELECT holder, count(*)::int AS n FROM ${this.s}.leases WHERE expires_at > clock_timestamp() GROUP BY holder`, [], false);
    return new Map(rows.map((r) => [r.holder, r.n]));
  }

  // ------------------------------------------------------------------ leases

  /** Takes the lease of (bucket, key) when it is free, has run out, or is this star's own; the epoch
   *  rises by one either way. Otherwise answers who holds it. */
  async take(bucket: string, key: string, ttlMs: number): Promise<TakeResult> {
    const kb = keyToBytes(key);
    const rows = await this.q<{ epoch: string }>(
      `INSERT INTO ${this.s}.leases AS l (bucket, key, holder, epoch, expires_at)
       VALUES ($1, $2, $3, 1, clock_timestamp() + $4 * interval '1 millisecond')
       ON CONFLICT (bucket, key) DO UPDATE SET holder = excluded.holder, epoch = l.epoch + 1, expires_at = excluded.expires_at
       WHERE l.holder = excluded.holder OR l.expires_at <= clock_timestamp()
       RETURNING epoch`,
      [bucket, kb, this.starId, ttlMs]);
    if (rows[0]) return { taken: true, epoch: Number(rows[0].epoch) };
    const cur = await this.holderOf(bucket, key);
    // Released between the two statements: try again from the top.
    if (!cur) return this.take(bucket, key, ttlMs);
    return { taken: false, current: cur };
  }

  async holderOf(bucket: string, key: string): Promise<LeaseHolder | undefined> {
    const rows = await this.q<{ holder: string; epoch: string; remaining_ms: number } & Partial<StarRow>>(
      `SELECT l.holder, l.epoch, (extract(epoch FROM l.expires_at - clock_timestamp()) * 1000)::float8 AS remaining_ms,
              st.star_id, st.bridge_address, st.grpc_address, st.state, st.started_unix_ms,
              (extract(epoch FROM clock_timestamp() - st.heartbeat_at) * 1000)::float8 AS heartbeat_age_ms
       FROM ${this.s}.leases l LEFT JOIN ${this.s}.stars st ON st.star_id = l.holder
       WHERE l.bucket = $1 AND l.key = $2`,
      [bucket, keyToBytes(key)]);
    const r = rows[0];
    if (!r) return undefined;
    return {
      holder: r.holder, epoch: Number(r.epoch), remaining_ms: r.remaining_ms,
      ...(r.star_id ? {
        star: {
          star_id: r.star_id, bridge_address: r.bridge_address ?? '', grpc_address: r.grpc_address ?? '', state: r.state ?? 'active',
          started_unix_ms: Number(r.started_unix_ms ?? 0), heartbeat_age_ms: r.heartbeat_age_ms ?? Infinity,
        },
      } : {}),
    };
  }

  /** Pushes out the leases this star holds at the given epochs; answers those it still holds (the
   *  others were taken over or released, and their streams must leave this star). One that ran out
   *  and nobody took is renewed at its epoch (a stall of this star or of PostgreSQL costs nothing);
   *  a released one no longer names this star as its holder (release), so a renewal sent just
   *  before the release and landing after it does not revive it. */
  async renew(leases: { bucket: string; key: string; epoch: number }[], ttlMs: number): Promise<Set<number>> {
    if (leases.length === 0) return new Set();
    const rows = await this.q<{ i: number }>(
      `WITH w AS (SELECT * FROM unnest($2::text[], $3::bytea[], $4::bigint[]) WITH ORDINALITY AS w(bucket, key, epoch, i))
       UPDATE ${this.s}.leases l SET expires_at = clock_timestamp() + $5 * interval '1 millisecond'
       FROM w WHERE l.bucket = w.bucket AND l.key = w.key AND l.holder = $1 AND l.epoch = w.epoch
       RETURNING w.i::int AS i`,
      [this.starId, leases.map((l) => l.bucket), leases.map((l) => keyToBytes(l.key)), leases.map((l) => l.epoch), ttlMs]);
    return new Set(rows.map((r) => r.i - 1));
  }

  /** Gives a lease up at once (an idle stream, a star stopping): the next taker need not wait it out.
   *  The row keeps its epoch and names no holder, so nothing of this star's still on its way (a
   *  renewal, a group commit, a guarded row write: each matches holder and epoch) can revive it. */
  async release(leases: { bucket: string; key: string; epoch: number }[]): Promise<void> {
    if (leases.length === 0) return;
    await this.q(
      `UPDATE ${this.s}.leases l SET expires_at = clock_timestamp(), holder = ''
       FROM unnest($2::text[], $3::bytea[], $4::bigint[]) AS w(bucket, key, epoch)
       WHERE l.bucket = w.bucket AND l.key = w.key AND l.holder = $1 AND l.epoch = w.epoch`,
      [this.starId, leases.map((l) => l.bucket), leases.map((l) => keyToBytes(l.key)), leases.map((l) => l.epoch)]);
  }

  // ------------------------------------------------------------------ commits

  /** One group commit: a chunk row per stream whose lease this star still holds at its epoch (the
   *  leases are pushed out too). Answers the indexes of the streams committed; the others' leases
   *  moved, or their chunk would overlap one already committed (an invariant kept by the database
   *  too: no sequence number is ever committed twice). All or nothing on a failure (one statement).
   *  It records chunks only if it inserted every one of its objects' `chunk_objects` rows itself:
   *  that is what lets commitOutcome fence it off, should its answer be lost. */
  async commit(chunks: ChunkCommit[], objectKeys: string[], ttlMs: number): Promise<Set<number>> {
    const rows = await this.q<{ i: number }>(
      `WITH w AS (SELECT * FROM unnest($2::text[], $3::bytea[], $4::bigint[], $5::text[], $6::bigint[], $7::bigint[], $8::text[], $9::bigint[], $10::bigint[])
                  WITH ORDINALITY AS w(bucket, key, epoch, stream_id, first_seq, end_seq, object_key, byte_offset, byte_length, i)),
            ok AS (UPDATE ${this.s}.leases l SET expires_at = greatest(l.expires_at, clock_timestamp() + $11 * interval '1 millisecond')
                   FROM w WHERE l.bucket = w.bucket AND l.key = w.key AND l.holder = $1 AND l.epoch = w.epoch
                     AND NOT EXISTS (SELECT 1 FROM ${this.s}.chunks k WHERE k.stream_id = w.stream_id AND k.end_seq > w.first_seq)
                   RETURNING w.*),
            -- The objects' rows are taken after the lease rows are locked (the join reads all of ok
            -- first): a statement waiting for a lease row holds none of them, and a fence takes them.
            locked AS (SELECT count(*) AS n FROM ok),
            objs AS (INSERT INTO ${this.s}.chunk_objects (object_key, created_at) SELECT k, clock_timestamp() FROM unnest($12::text[]) AS k, locked
                     ON CONFLICT DO NOTHING RETURNING 1),
            mine AS (SELECT count(*) = cardinality($12::text[]) AS whole FROM objs),
            ins AS (INSERT INTO ${this.s}.chunks (stream_id, first_seq, end_seq, epoch, object_key, byte_offset, byte_length, bucket, key)
                    SELECT stream_id, first_seq, end_seq, epoch, object_key, byte_offset, byte_length, bucket, key FROM ok
                    WHERE (SELECT whole FROM mine))
       SELECT i::int AS i FROM ok WHERE (SELECT whole FROM mine)`,
      [
        this.starId, chunks.map((c) => c.bucket), chunks.map((c) => keyToBytes(c.key)), chunks.map((c) => c.epoch),
        chunks.map((c) => c.stream_id), chunks.map((c) => c.first_seq), chunks.map((c) => c.end_seq), chunks.map((c) => c.object_key),
        chunks.map((c) => c.byte_offset), chunks.map((c) => c.byte_length), ttlMs, objectKeys,
      ]);
    return new Set(rows.map((r) => r.i - 1));
  }

  /** After a commit whose answer was lost: whether its statement committed, and which chunks it
   *  recorded (as `stream_id:first_seq`). The statement may still be on its way (in a socket buffer)
   *  or running on the server (waiting for a lease row's lock) when its connection is given up, and
   *  commit after a plain look found nothing. So it is fenced first: its objects' `chunk_objects`
   *  rows are inserted here. PostgreSQL makes that insert wait for a statement that inserted them and
   *  has not ended; one that has not inserted them yet finds them taken and records no chunk (commit).
   *  Rows this insert did not add were the statement's, committed (or this fence's own, from an
   *  earlier try whose answer was lost: the chunks then tell, and their absence is ambiguous).
   *  Nothing outlives the fence: the server cancels a statement past POSTGRES_STATEMENT_MS_MAX, long
   *  before the chunk collector forgets a fenced object's row (CHUNK_OBJECT_GRACE_MS). */
  async commitOutcome(objectKeys: string[]): Promise<{ committed: boolean; chunks: Set<string> }> {
    const fenced = await this.q<{ n: number }>(
      `WITH f AS (INSERT INTO ${this.s}.chunk_objects (object_key, created_at) SELECT k, clock_timestamp() FROM unnest($1::text[]) AS k
                  ON CONFLICT DO NOTHING RETURNING 1)
       SELECT count(*)::int AS n FROM f`, [objectKeys]);
    // Any row added here means the statement had not inserted its own, and now never will.
    if (fenced[0].n > 0) return { committed: false, chunks: new Set() };
    // A statement of its own, so its snapshot sees what the fence waited for.
    const rows = await this.q<{ chunks: string[] | null }>(
      `SELECT array_agg(stream_id || ':' || first_seq) AS chunks FROM ${this.s}.chunks WHERE object_key = ANY($1::text[])`, [objectKeys]);
    return { committed: true, chunks: new Set(rows[0].chunks ?? []) };
  }

  /** A stream's committed chunks from `fromSeq` on, in order. */
  async chunksOf(streamId: string, fromSeq: number): Promise<ChunkRow[]> {
    const rows = await this.q<ChunkRecord>(`SELECT ${CHUNK_COLUMNS} FROM ${this.s}.chunks WHERE stream_id = $1 AND end_seq > $2 ORDER BY first_seq`, [streamId, fromSeq]);
    return rows.map(chunkRowOf);
  }

  /** A stream's newest chunk: where its committed tail ends (undefined: it has none). */
  async lastChunkOf(streamId: string): Promise<ChunkRow | undefined> {
    const rows = await this.q<ChunkRecord>(`SELECT ${CHUNK_COLUMNS} FROM ${this.s}.chunks WHERE stream_id = $1 ORDER BY first_seq DESC LIMIT 1`, [streamId]);
    return rows.length > 0 ? chunkRowOf(rows[0]) : undefined;
  }

  /** Up to `limit` streams after `after` (in address order) that hold committed, unsettled chunks and
   *  whose lease has run out: nobody will settle them until some star leads them again. The chunks
   *  table holds only unsettled tails, and the walk follows its (bucket, key, stream_id) index. */
  async vacantUnsettled(after: VacantUnsettled | undefined, limit: number): Promise<VacantUnsettled[]> {
    const rows = await this.q<{ bucket: string; key: Buffer; stream_id: string }>(
      `SELECT DISTINCT c.bucket, c.key, c.stream_id FROM ${this.s}.chunks c
       WHERE c.bucket IS NOT NULL AND (c.bucket, c.key, c.stream_id) > ($1, $2, $3)
         AND NOT EXISTS (SELECT 1 FROM ${this.s}.leases l WHERE l.bucket = c.bucket AND l.key = c.key AND l.expires_at > now())
       ORDER BY c.bucket, c.key, c.stream_id LIMIT $4`, [after?.bucket ?? '', keyToBytes(after?.key ?? ''), after?.stream_id ?? '', limit], false);
    return rows.map((r) => ({ bucket: r.bucket, key: keyFromBytes(r.key), stream_id: r.stream_id }));
  }

  /** Forgets a deleted stream's chunks (its objects are then collected like settled ones). */
  async dropChunks(streamId: string): Promise<void> {
    await this.q(`DELETE FROM ${this.s}.chunks WHERE stream_id = $1`, [streamId], false);
  }

  /** Chunk objects older than `graceMs` that no chunk row points at any more (all settled or their
   *  stream deleted). The caller deletes them from the object store, then forgets them here
   *  (cluster/chunk-gc.ts). */
  async unreferencedChunkObjects(graceMs: number, limit: number): Promise<string[]> {
    const rows = await this.q<{ object_key: string }>(
      `SELECT object_key FROM ${this.s}.chunk_objects c
       WHERE c.created_at < clock_timestamp() - $1 * interval '1 millisecond'
         AND NOT EXISTS (SELECT 1 FROM ${this.s}.chunks k WHERE k.object_key = c.object_key)
       LIMIT $2`, [graceMs, limit], false);
    return rows.map((r) => r.object_key);
  }

  /** Forgets chunk objects the object store no longer holds. */
  async forgetChunkObjects(keys: string[]): Promise<void> {
    if (keys.length > 0) await this.q(`DELETE FROM ${this.s}.chunk_objects WHERE object_key = ANY($1::text[])`, [keys], false);
  }

  async close(): Promise<void> {
    this.closed = true;
    await (await this.pool).end().catch(() => undefined);
  }
}
