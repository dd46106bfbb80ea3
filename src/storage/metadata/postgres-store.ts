// The `postgres` metadata backend: the same rows as `local`, in PostgreSQL (the cluster's shared
// metadata store). One connection per star, so writes apply in the order the star made them, and
// each write is one SQL statement, so it applies whole or not at all.
//
// - A schema (default `svcd`) holds the tables that MIGRATIONS make, one numbered step at a time,
//   each applied once in its own transaction and recorded in schema_migrations (several stars may
//   start at once: a transaction-scoped advisory lock lets one migrate while the others wait). Keys
//   are byte strings (storage/format/key-bytes.ts) stored as bytea; every other field rides a JSON
//   document in a text column (JSON.stringify escapes a key's raw bytes, which jsonb would refuse).
// - A stream's settled segments are rows of their own (segments), not an array in the stream's
//   document: a settle inserts the new segments only, and a trim deletes those below the watermark.
// - Several stars share a schema (a cluster). A stream's row is written only by its leader: with a
//   lease guard set, each stream write applies only where this star holds the stream's lease at the
//   epoch it was given (storage/metadata/postgres-cluster.ts), so a star whose lease moved on writes
//   nothing (LeaseLostError).
// - A lost connection (every PostgreSQL restart, failover or terminated backend does it) makes the
//   store unhealthy: writes are refused at once with MetadataUnavailableError, and a new connection is
//   tried with bounded backoff until one answers. A write whose
//   connection dropped mid-statement may or may not have committed; the star reads such rows back
//   (readStream, readBucket) before it writes or acknowledges anything again.

import type pg from 'pg';
import { dropClient, isConnectionFailure, isServerTrouble, loadPg, OverdueAnswers, pgConnectionOptions, retryingConflicts, sendWatched, type PgDriver } from './pg-driver.ts';
import { keyFromBytes, keyToBytes } from '../format/key-bytes.ts';
import {
  POSTGRES_ANSWER_SLOW_MS, POSTGRES_RECONNECT_MS_MAX, POSTGRES_RECONNECT_MS_MIN,
} from '../../config/limits.ts';
import { DependencyHealth } from '../dependency-health.ts';
import {
  MetadataUnavailableError, streamRowsOf, type BucketMeta, type CredentialMeta, type MetadataStore, type MetaState, type SegmentMeta, type StoredFormat, type StreamMeta,
} from './metadata-store.ts';
import { BootError } from '../../config/boot-error.ts';

const addr = (bucket: string, key: string): string => `${bucket}\u0000${key}`;

export interface PostgresMetadataOptions {
  /** A libpq-style connection URL: postgres://user@host:port/database */
  url: string;
  /** The schema that holds this star's tables; created when absent. */
  schema: string;
  /** Up/down of the connection, with its episode log lines (a quiet one when absent). */
  health?: DependencyHealth;
  /** Guards every stream write with this star's lease (absent: unguarded, as the tests of the store use it). */
  leaseGuard?: LeaseGuard;
  /** Other statements on the same server that the star's appends wait for (a cluster star's commits
   *  and leases): the store is not healthy while they are stuck either. */
  alsoHealthy?: () => boolean;
  /** Told when this store's connection is found dead (not when dropConnection was asked for): the
   *  other connections to the same server, over the same path, are suspect too. */
  onConnectionLost?: () => void;
}

/** Schema names the store accepts: a plain lower-case SQL identifier, so it is never quoted wrong
 *  (the config checks the flag the same way, with a friendlier message). */
const POSTGRES_SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/** The schema's advisory lock is held exclusively (by an operator): no star may use it meanwhile. */
export class MetadataLockedError extends BootError {}

/** A stream write refused because this star no longer holds the stream's lease at its epoch: another
 *  star leads it now (or took it over after this one's lease ran out). */
export class LeaseLostError extends MetadataUnavailableError {
  constructor(readonly addresses: { bucket: string; key: string }[]) {
    super(`the lease of ${addresses.map((a) => `${a.bucket}/${a.key}`).join(', ')} moved to another star`);
    this.name = 'LeaseLostError';
  }
}

/** Which stream leases this star holds, and at which epoch (the cluster's leadership keeps it). */
export interface LeaseGuard {
  holder: string;
  epochOf(bucket: string, key: string): number | undefined;
}

/** Stream documents a migration that walks them reads at a time. */
const MIGRATION_STREAMS_PAGE_ROWS = 10_000;

/** The schema, one step per entry, in order; an applied step is never edited (add a new one). */
const MIGRATIONS: readonly ((client: pg.Client, s: string) => Promise<void>)[] = [
  // 1: the first layout (segments inside each stream's document).
  async (client, s) => {
    await client.query(`
      CREATE TABLE IF NOT EXISTS ${s}.buckets (name text PRIMARY KEY, doc text NOT NULL);
      CREATE TABLE IF NOT EXISTS ${s}.streams (bucket text NOT NULL, key bytea NOT NULL, doc text NOT NULL, PRIMARY KEY (bucket, key));
      CREATE TABLE IF NOT EXISTS ${s}.deleted (bucket text NOT NULL, key bytea NOT NULL, PRIMARY KEY (bucket, key));
      CREATE TABLE IF NOT EXISTS ${s}.credentials (key_id text PRIMARY KEY, doc text NOT NULL);`);
  },
  // 2: settled segments in their own table, moved out of the stream documents. In JS, not SQL: a
  // document may escape a key's raw bytes as lone surrogates, which jsonb refuses.
  async (client, s) => {
    await client.query(`CREATE TABLE ${s}.segments (
      bucket text NOT NULL, key bytea NOT NULL, first_seq bigint NOT NULL, doc text NOT NULL,
      PRIMARY KEY (bucket, key, first_seq))`);
    const rows = await client.query<{ bucket: string; key: Buffer; doc: string }>(`SELECT bucket, key, doc FROM ${s}.streams`);
    for (const r of rows.rows) {
      const doc = JSON.parse(r.doc) as StreamMeta;
      for (const seg of doc.segments ?? []) {
        await client.query(`INSERT INTO ${s}.segments (bucket, key, first_seq, doc) VALUES ($1, $2, $3, $4)`, [r.bucket, r.key, seg.first_seq, JSON.stringify(seg)]);
      }
      await client.query(`UPDATE ${s}.streams SET doc = $3 WHERE bucket = $1 AND key = $2`, [r.bucket, r.key, JSON.stringify({ ...doc, segments: [] })]);
    }
  },
  // 3: the stored-format marker (one row), written at a cluster's first start.
  async (client, s) => {
    await client.query(`CREATE TABLE ${s}.stored_format (id int PRIMARY KEY CHECK (id = 1), doc text NOT NULL)`);
  },
  // 4: the cluster (storage/metadata/postgres-cluster.ts): membership, per-stream leases with epochs,
  // and the committed chunks of each stream's unsettled tail (where in object storage its frames are).
  async (client, s) => {
    await client.query(`
      CREATE TABLE ${s}.stars (star_id text PRIMARY KEY, bridge_address text NOT NULL, grpc_address text NOT NULL,
        state text NOT NULL, started_unix_ms bigint NOT NULL, heartbeat_at timestamptz NOT NULL);
      CREATE TABLE ${s}.leases (bucket text NOT NULL, key bytea NOT NULL, holder text NOT NULL, epoch bigint NOT NULL,
        expires_at timestamptz NOT NULL, PRIMARY KEY (bucket, key));
      CREATE TABLE ${s}.chunks (stream_id text NOT NULL, first_seq bigint NOT NULL, end_seq bigint NOT NULL, epoch bigint NOT NULL,
        object_key text NOT NULL, byte_offset bigint NOT NULL, byte_length bigint NOT NULL, PRIMARY KEY (stream_id, first_seq));
      CREATE INDEX chunks_by_object ON ${s}.chunks (object_key);
      CREATE TABLE ${s}.chunk_objects (object_key text PRIMARY KEY, created_at timestamptz NOT NULL);`);
  },
  // 5: each chunk names its stream's address, so a star can find the vacant streams that hold
  // committed, unsettled chunks and settle them (cluster-service.ts sweepUnsettled). Chunks written
  // before are given theirs from the stream documents (in JS: see 2), a page of streams at a time.
  async (client, s) => {
    await client.query(`ALTER TABLE ${s}.chunks ADD COLUMN bucket text, ADD COLUMN key bytea`);
    const ids = new Set((await client.query<{ stream_id: string }>(`SELECT DISTINCT stream_id FROM ${s}.chunks`)).rows.map((r) => r.stream_id));
    // Bucket names are never empty, so ('', '') comes before every stream.
    for (let after: { bucket: string; key: Buffer } = { bucket: '', key: Buffer.alloc(0) }; ids.size > 0;) {
      const page = await client.query<{ bucket: string; key: Buffer; doc: string }>(
        `SELECT bucket, key, doc FROM ${s}.streams WHERE (bucket, key) > ($1, $2) ORDER BY bucket, key LIMIT $3`,
        [after.bucket, after.key, MIGRATION_STREAMS_PAGE_ROWS]);
      for (const r of page.rows) {
        const id = (JSON.parse(r.doc) as StreamMeta).stream_id;
        if (!ids.delete(id)) continue;
        await client.query(`UPDATE ${s}.chunks SET bucket = $2, key = $3 WHERE stream_id = $1`, [id, r.bucket, r.key]);
      }
      if (page.rows.length < MIGRATION_STREAMS_PAGE_ROWS) break;
      after = page.rows[page.rows.length - 1];
    }
    // What is left names no stream (deleted, and a star stopped before forgetting its chunks):
    // nothing reads it again, and its objects are collected once no row names them.
    await client.query(`DELETE FROM ${s}.chunks WHERE bucket IS NULL`);
    await client.query(`CREATE INDEX chunks_by_address ON ${s}.chunks (bucket, key, stream_id)`);
  },
  // 6: each star reports whether it reaches the object store, so one cut off from it alone hands its
  // streams to a star that does (cluster-service.ts stepAside).
  async (client, s) => {
    await client.query(`ALTER TABLE ${s}.stars ADD COLUMN objects_ok boolean NOT NULL DEFAULT true`);
  },
];

/** The schema version this build writes: a star refuses a schema that a newer build migrated further. */
export const METADATA_SCHEMA_VERSION = MIGRATIONS.length;

export class PostgresMetadataStore implements MetadataStore {
  private client: pg.Client | undefined;
  /** The driver, loaded by the first connect (a client exists only after it). */
  private driver: PgDriver | undefined;
  private readonly s: string;
  /** False from a lost connection until a new one answers. */
  private up = false;
  /** The statement under way, once its answer is overdue: the store is down until it comes. */
  private readonly overdue = new OverdueAnswers((late) => {
    if (late) this.health.failed(`a statement has had no answer for ${POSTGRES_ANSWER_SLOW_MS} ms`);
    else if (this.up) this.health.succeeded();
  });
  private closed = false;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private reconnectDelayMs = POSTGRES_RECONNECT_MS_MIN;
  /** Settles once the newest statement has (statements run one at a time, in order). */
  private lastStatement: Promise<void> = Promise.resolve();
  readonly health: DependencyHealth;
  /** Why a connection was given up while a statement waited on it (sendWatched), for that statement's error. */
  private readonly deadWhy = new WeakMap<pg.Client, string>();
  /** Per stream address: the end of the segments known written, so a settle sends only new ones. */
  private readonly segmentsStoredEnd = new Map<string, number>();

  constructor(private readonly opts: PostgresMetadataOptions) {
    if (!POSTGRES_SCHEMA_PATTERN.test(opts.schema)) throw new Error(`postgres schema ${JSON.stringify(opts.schema)} is not a plain lower-case identifier`);
    this.s = opts.schema;
    this.health = opts.health ?? new DependencyHealth('metadata store (postgres)', undefined);
  }

  /** A new connection. */
  private async connect(): Promise<pg.Client> {
    const driver = this.driver ??= await loadPg();
    const client = new driver.Client(pgConnectionOptions(this.opts.url, 'svcd'));
    // Without a listener the client's 'error' event would end the process.
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('the connection ended')));
    try {
      await client.connect();
      // Every star holds the schema's advisory lock shared; an operator who takes it exclusively
      // (maintenance, a restore) keeps every star out until it lets go: they retry meanwhile.
      const shared = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock_shared(hashtext($1)) AS ok', [`svcd:${this.s}`]);
      if (!shared.rows[0]?.ok) throw new MetadataLockedError(`metadata: postgres schema ${this.s} is locked exclusively (advisory lock svcd:${this.s}); waiting for it to be released`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    return client;
  }

  /** A statement's session on `client` was found dead (sendWatched): the connection is given up now
   *  (the statement fails as on a lost connection, outcome unknown). */
  private giveUp(client: pg.Client, why: string): void {
    if (client !== this.client) return;
    this.deadWhy.set(client, why);
    this.lost(client, new Error(why));
  }

  /** Drops the connection and makes a new one: another connection to the same server was found dead
   *  without a word (a cluster statement's answer never came), so this one may be too, and a
   *  statement waiting on it would wait out POSTGRES_ANSWER_MS_MAX as well. */
  dropConnection(why: string): void {
    if (this.client) this.lost(this.client, new Error(why), false);
  }

  /** The current connection broke: refuse writes and start reconnecting. */
  private lost(client: pg.Client, err: unknown, tell = true): void {
    if (client !== this.client || this.closed) return;
    if (tell) this.opts.onConnectionLost?.();
    this.client = undefined;
    this.up = false;
    dropClient(client);
    this.health.failed(`connection lost: ${(err as Error).message ?? String(err)}`);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.reconnectTimer || this.closed) return;
    const delayMs = this.reconnectDelayMs;
    this.reconnectDelayMs = Math.min(this.reconnectDelayMs * 2, POSTGRES_RECONNECT_MS_MAX);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.connect().then((client) => {
        if (this.closed) { void client.end().catch(() => undefined); return; }
        this.client = client;
        this.up = true;
        this.reconnectDelayMs = POSTGRES_RECONNECT_MS_MIN;
        this.health.succeeded();
      }, (err: unknown) => {
        this.health.failed((err as Error).message ?? String(err));
        this.scheduleReconnect();
      });
    }, delayMs);
    this.reconnectTimer.unref?.();
  }

  /** Applies the migrations this schema has not had yet, each in its own transaction. */
  private async migrate(client: pg.Client): Promise<void> {
    const s = this.s;
    await client.query('BEGIN');
    try {
      // One star migrates at a time; the others wait here, then find nothing left to do. The schema
      // and the migrations table are made under the lock too: IF NOT EXISTS is not safe against a
      // second star doing the same at once (a duplicate key in pg_type refused one of three stars
      // started together on a fresh schema).
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`svcd-migrate:${s}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${s}.schema_migrations (version int PRIMARY KEY, applied_unix_ms bigint NOT NULL)`);
      const done = await client.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${s}.schema_migrations`);
      const from = done.rows[0]?.v ?? 0;
      if (from > MIGRATIONS.length) {
        throw new BootError(`metadata: postgres schema ${s} is at version ${from}, newer than this build's ${MIGRATIONS.length}; upgrade svcd`);
      }
      for (let v = from + 1; v <= MIGRATIONS.length; v++) {
        await MIGRATIONS[v - 1](client, s);
        await client.query(`INSERT INTO ${s}.schema_migrations (version, applied_unix_ms) VALUES ($1, $2)`, [v, Date.now()]);
      }
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }

  /** Whether a failed load() may pass if tried again shortly (waitAtBoot): PostgreSQL did not answer,
   *  is starting up or shutting down, is out of connections or answered for its state (isServerTrouble),
   *  or another holds the schema's advisory lock. Not for an answer that stays no: credentials (class
   *  28), a missing database (3D000), a schema newer than this build. */
  loadFailureIsTemporary(err: unknown): boolean {
    if (err instanceof MetadataLockedError) return true;
    if (err instanceof BootError) return false;
    return isConnectionFailure(this.driver, err) || isServerTrouble(this.driver, err);
  }

  async load(): Promise<MetaState> {
    const client = await this.connect();
    this.client = client;
    this.up = true;
    try {
      return await this.loadWith(client);
    } catch (err) {
      // A load tried again opens a new connection: this one is not left open beside it.
      this.client = undefined;
      this.up = false;
      dropClient(client);
      throw err;
    }
  }

  private async loadWith(client: pg.Client): Promise<MetaState> {
    const s = this.s;
    await this.migrate(client);
    const buckets = await client.query<{ doc: string }>(`SELECT doc FROM ${s}.buckets ORDER BY name`);
    // A cluster reads each stream when it takes its lease (readStream), not all of them at start.
    const none = { rows: [] };
    const perEntity = this.opts.leaseGuard !== undefined;
    const streams = perEntity ? none : await client.query<{ doc: string }>(`SELECT doc FROM ${s}.streams ORDER BY bucket, key`);
    const segments = perEntity ? none : await client.query<{ bucket: string; key: Buffer; doc: string }>(`SELECT bucket, key, doc FROM ${s}.segments ORDER BY bucket, key, first_seq`);
    const deleted = perEntity ? none : await client.query<{ bucket: string; key: Buffer }>(`SELECT bucket, key FROM ${s}.deleted ORDER BY bucket, key`);
    const credentials = await client.query<{ doc: string }>(`SELECT doc FROM ${s}.credentials ORDER BY key_id`);
    const format = await client.query<{ doc: string }>(`SELECT doc FROM ${s}.stored_format WHERE id = 1`);
    const rows = streams.rows.map((r) => JSON.parse(r.doc) as StreamMeta);
    const byAddr = new Map(rows.map((r) => [addr(r.bucket, r.key), r]));
    for (const r of segments.rows) byAddr.get(addr(r.bucket, keyFromBytes(r.key)))?.segments.push(JSON.parse(r.doc) as SegmentMeta);
    this.segmentsStoredEnd.clear();
    for (const r of rows) this.noteSegmentsStored(r);
    return {
      ...(format.rows[0] ? { format: JSON.parse(format.rows[0].doc) as StoredFormat } : {}),
      buckets: buckets.rows.map((r) => JSON.parse(r.doc) as BucketMeta),
      streams: streamRowsOf(rows),
      deleted: deleted.rows.map((r) => ({ bucket: r.bucket, key: keyFromBytes(r.key) })),
      credentials: credentials.rows.map((r) => JSON.parse(r.doc) as CredentialMeta),
    };
  }

  /** After a write of `row` landed: its segments up to the last one's end are stored. */
  private noteSegmentsStored(row: StreamMeta): void {
    const last = row.segments[row.segments.length - 1];
    this.segmentsStoredEnd.set(addr(row.bucket, row.key), last ? last.end_seq : 0);
  }

  /** Runs one statement once every earlier one has finished: one at a time on the one connection.
   *  Refused at once while the store is down. A statement without an answer for
   *  POSTGRES_ANSWER_SLOW_MS marks the store down until it has one (statements queue behind it, so
   *  appends are refused rather than left to hang), and the driver gives it up, with its connection,
   *  at POSTGRES_ANSWER_MS_MAX. A lost connection, or a statement refused for the server's state
   *  (isServerTrouble: cancelled, out of resources, read-only), is MetadataUnavailableError (503), a
   *  reader's too. */
  private serial<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<T>> {
    const run = this.lastStatement.then(() => {
      const client = this.client;
      if (!this.up || !client) throw new MetadataUnavailableError('the metadata store (postgres) is unavailable; reconnecting');
      const answered = this.overdue.watch();
      // A statement chosen to break a deadlock goes again, still in its place in the order.
      const send = (): Promise<pg.QueryResult<T>> => sendWatched(() => client.query<T>(sql, params), { client, driver: this.driver, url: this.opts.url, applicationName: 'svcd' }, (why) => this.giveUp(client, why));
      return retryingConflicts(() => this.driver, send).then((res) => {
        answered();
        return res;
      }, (err: unknown) => {
        // A broken connection also ends in 'error' or 'end', but maybe later.
        const gone = isConnectionFailure(this.driver, err);
        if (gone) this.lost(client, err);
        answered();
        if (gone || isServerTrouble(this.driver, err)) {
          const why = this.deadWhy.get(client) ?? (err as Error).message ?? String(err);
          throw new MetadataUnavailableError(`the metadata store (postgres) failed: ${why}`, { cause: err });
        }
        throw err;
      });
    });
    this.lastStatement = run.then(() => undefined, () => undefined);
    return run;
  }

  /** Runs one write statement, in order behind every earlier one. */
  private async write(sql: string, params: unknown[]): Promise<void> {
    try {
      await this.serial(sql, params);
    } catch (err) {
      if (err instanceof MetadataUnavailableError) throw err;
      throw new MetadataUnavailableError(`metadata write failed: ${(err as Error).message}`, { cause: err });
    }
  }

  async readStream(bucket: string, key: string): Promise<{ row?: StreamMeta; deleted: boolean }> {
    const kb = keyToBytes(key);
    const res = await this.serial<{ doc: string | null; deleted: boolean; segs: string[] | null }>(
      `SELECT (SELECT doc FROM ${this.s}.streams WHERE bucket = $1 AND key = $2) AS doc,
              EXISTS (SELECT 1 FROM ${this.s}.deleted WHERE bucket = $1 AND key = $2) AS deleted,
              ARRAY(SELECT doc FROM ${this.s}.segments WHERE bucket = $1 AND key = $2 ORDER BY first_seq) AS segs`,
      [bucket, kb],
    );
    const r = res.rows[0];
    if (!r?.doc) return { deleted: r?.deleted ?? false };
    const row = JSON.parse(r.doc) as StreamMeta;
    row.segments = (r.segs ?? []).map((d) => JSON.parse(d) as SegmentMeta);
    this.noteSegmentsStored(row);
    return { row, deleted: r.deleted };
  }

  async readBucket(name: string): Promise<BucketMeta | undefined> {
    const res = await this.serial<{ doc: string }>(`SELECT doc FROM ${this.s}.buckets WHERE name = $1`, [name]);
    return res.rows[0] ? JSON.parse(res.rows[0].doc) as BucketMeta : undefined;
  }

  async putFormat(f: StoredFormat): Promise<StoredFormat> {
    await this.write(`INSERT INTO ${this.s}.stored_format (id, doc) VALUES (1, $1) ON CONFLICT (id) DO NOTHING`, [JSON.stringify(f)]);
    const res = await this.serial<{ doc: string }>(`SELECT doc FROM ${this.s}.stored_format WHERE id = 1`);
    return JSON.parse(res.rows[0].doc) as StoredFormat;
  }

  putBucket(b: BucketMeta): Promise<void> {
    return this.write(
      `INSERT INTO ${this.s}.buckets (name, doc) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET doc = excluded.doc`,
      [b.name, JSON.stringify(b)],
    );
  }

  /** A bucket made again under the same name starts with no deleted addresses. */
  deleteBucket(name: string): Promise<void> {
    return this.write(
      `WITH gone AS (DELETE FROM ${this.s}.buckets WHERE name = $1) DELETE FROM ${this.s}.deleted WHERE bucket = $1`,
      [name],
    );
  }

  putStream(s: StreamMeta): Promise<void> { return this.putStreams([s]); }

  /** Every row in one statement: a settled WAL file's streams move together or not at all. Only
   *  the segments this store has not written yet are sent (a settle adds one per stream); those
   *  below a row's first segment are gone (trimmed, or aged out) and are deleted. */
  putStreams(rows: StreamMeta[]): Promise<void> {
    // One row per address (the newest): a statement may not upsert the same row twice.
    const byAddr = new Map<string, StreamMeta>();
    for (const r of rows) byAddr.set(addr(r.bucket, r.key), r);
    rows = [...byAddr.values()];
    if (rows.length === 0) return Promise.resolve();
    const segBucket: string[] = [];
    const segKey: Buffer[] = [];
    const segFirst: number[] = [];
    const segDoc: string[] = [];
    for (const r of rows) {
      const storedEnd = this.segmentsStoredEnd.get(addr(r.bucket, r.key)) ?? 0;
      const kb = keyToBytes(r.key);
      for (const seg of r.segments) {
        if (seg.end_seq <= storedEnd) continue;
        segBucket.push(r.bucket); segKey.push(kb); segFirst.push(seg.first_seq); segDoc.push(JSON.stringify(seg));
      }
    }
    const s = this.s;
    const epochs = this.epochsOf(rows);
    // Guarded (a cluster): only the rows whose lease this star holds at its epoch are written, and the
    // statement answers how many were; unguarded, every row is. Settled chunks (postgres-cluster.ts)
    // leave with the settle that covers them.
    const write = this.guardedWrite(rows,
      `WITH rows AS (SELECT * FROM unnest($1::text[], $2::bytea[], $3::text[], $4::bigint[], $9::bigint[], $10::text[], $11::bigint[])
                     AS r(bucket, key, doc, low, epoch, stream_id, settled_end)),
            ok AS (${this.guardSql('rows', '$12')}),
            upserted AS (INSERT INTO ${s}.streams (bucket, key, doc) SELECT bucket, key, doc FROM ok
                         ON CONFLICT (bucket, key) DO UPDATE SET doc = excluded.doc),
            dropped AS (DELETE FROM ${s}.segments g USING ok WHERE g.bucket = ok.bucket AND g.key = ok.key AND g.first_seq < ok.low),
            added AS (INSERT INTO ${s}.segments (bucket, key, first_seq, doc)
                      SELECT a.* FROM unnest($5::text[], $6::bytea[], $7::bigint[], $8::text[]) AS a(bucket, key, first_seq, doc)
                      WHERE EXISTS (SELECT 1 FROM ok WHERE ok.bucket = a.bucket AND ok.key = a.key) ON CONFLICT DO NOTHING),
            chunks_settled AS (DELETE FROM ${s}.chunks c USING ok WHERE c.stream_id = ok.stream_id AND c.end_seq <= ok.settled_end),
            undeleted AS (DELETE FROM ${s}.deleted d USING ok WHERE d.bucket = ok.bucket AND d.key = ok.key)
       SELECT count(*)::int AS n FROM ok`,
      [
        rows.map((r) => r.bucket), rows.map((r) => keyToBytes(r.key)), rows.map((r) => JSON.stringify({ ...r, segments: [] })),
        rows.map((r) => r.segments[0]?.first_seq ?? r.settled_end_seq),
        segBucket, segKey, segFirst, segDoc,
        epochs, rows.map((r) => r.stream_id), rows.map((r) => r.settled_end_seq), this.opts.leaseGuard?.holder ?? '',
      ],
    );
    return write.then(
      () => { for (const r of rows) this.noteSegmentsStored(r); },
      (err: unknown) => {
        // The outcome is unknown: send every segment next time (the insert skips those it has).
        for (const r of rows) this.segmentsStoredEnd.delete(addr(r.bucket, r.key));
        throw err;
      },
    );
  }

  deleteStream(bucket: string, key: string): Promise<void> {
    this.segmentsStoredEnd.delete(addr(bucket, key));
    const s = this.s;
    return this.guardedWrite([{ bucket, key }],
      `WITH rows AS (SELECT * FROM unnest($1::text[], $2::bytea[], $3::bigint[]) AS r(bucket, key, epoch)),
            ok AS (${this.guardSql('rows', '$4')}),
            gone AS (DELETE FROM ${s}.streams t USING ok WHERE t.bucket = ok.bucket AND t.key = ok.key),
            segs AS (DELETE FROM ${s}.segments g USING ok WHERE g.bucket = ok.bucket AND g.key = ok.key),
            marked AS (INSERT INTO ${s}.deleted (bucket, key) SELECT bucket, key FROM ok ON CONFLICT DO NOTHING)
       SELECT count(*)::int AS n FROM ok`,
      [[bucket], [keyToBytes(key)], this.epochsOf([{ bucket, key }]), this.opts.leaseGuard?.holder ?? ''],
    );
  }

  /** Each row's lease epoch as this star holds it (-1: not held, so a guarded write refuses it). */
  private epochsOf(rows: { bucket: string; key: string }[]): number[] {
    const g = this.opts.leaseGuard;
    return rows.map((r) => (g ? g.epochOf(r.bucket, r.key) ?? -1 : 0));
  }

  /** The rows of CTE `rows` this star may write: all of them unguarded; guarded, those whose lease row
   *  names this star (`holderParam`) at the row's epoch. Locks those lease rows, so a taker waits for
   *  this statement, and its new epoch fences every later one. */
  private guardSql(rows: string, holderParam: string): string {
    // (Unguarded, the holder parameter is still named, so both forms take the same parameters.)
    if (!this.opts.leaseGuard) return `SELECT * FROM ${rows} WHERE ${holderParam}::text IS NOT NULL`;
    return `SELECT ${rows}.* FROM ${rows} JOIN ${this.s}.leases l
              ON l.bucket = ${rows}.bucket AND l.key = ${rows}.key AND l.holder = ${holderParam} AND l.epoch = ${rows}.epoch
            FOR UPDATE OF l`;
  }

  /** A write whose statement answers `n`, the rows it was allowed to write: fewer than asked means a
   *  lease moved, and LeaseLostError names the streams (the rows that were allowed are written). */
  private async guardedWrite(rows: { bucket: string; key: string }[], sql: string, params: unknown[]): Promise<void> {
    let res: pg.QueryResult<{ n: number }>;
    try {
      res = await this.serial<{ n: number }>(sql, params);
    } catch (err) {
      if (err instanceof MetadataUnavailableError) throw err;
      throw new MetadataUnavailableError(`metadata write failed: ${(err as Error).message}`, { cause: err });
    }
    if ((res.rows[0]?.n ?? 0) < rows.length) throw new LeaseLostError(rows);
  }

  putCredential(c: CredentialMeta): Promise<void> {
    return this.write(
      `INSERT INTO ${this.s}.credentials (key_id, doc) VALUES ($1, $2) ON CONFLICT (key_id) DO UPDATE SET doc = excluded.doc`,
      [c.key_id, JSON.stringify(c)],
    );
  }

  async readCredential(keyId: string): Promise<CredentialMeta | undefined> {
    const res = await this.serial<{ doc: string }>(`SELECT doc FROM ${this.s}.credentials WHERE key_id = $1`, [keyId]);
    return res.rows[0] ? JSON.parse(res.rows[0].doc) as CredentialMeta : undefined;
  }

  async listCredentials(): Promise<CredentialMeta[]> {
    const res = await this.serial<{ doc: string }>(`SELECT doc FROM ${this.s}.credentials ORDER BY key_id`);
    return res.rows.map((r) => JSON.parse(r.doc) as CredentialMeta);
  }

  /** A page of bucket rows after `startAfter`, by name (a cluster lists from the store, not memory). */
  async listBucketRows(startAfter: string, limit: number): Promise<BucketMeta[]> {
    const res = await this.serial<{ doc: string }>(`SELECT doc FROM ${this.s}.buckets WHERE name > $1 ORDER BY name LIMIT $2`, [startAfter, limit]);
    return res.rows.map((r) => JSON.parse(r.doc) as BucketMeta);
  }

  /** A page of a bucket's stream rows after `startAfter`, in the order of the keys' bytes (segments
   *  not included). */
  async listStreamRows(bucket: string, startAfter: string, limit: number): Promise<StreamMeta[]> {
    const res = await this.serial<{ doc: string }>(
      `SELECT doc FROM ${this.s}.streams WHERE bucket = $1 AND key > $2 ORDER BY key LIMIT $3`, [bucket, keyToBytes(startAfter), limit]);
    return res.rows.map((r) => JSON.parse(r.doc) as StreamMeta);
  }

  async bucketHasStreams(bucket: string): Promise<boolean> {
    const res = await this.serial<{ any: boolean }>(`SELECT EXISTS (SELECT 1 FROM ${this.s}.streams WHERE bucket = $1) AS any`, [bucket]);
    return res.rows[0]?.any ?? false;
  }

  healthy(): boolean { return this.up && this.overdue.count === 0 && (this.opts.alsoHealthy?.() ?? true); }

  /** Waits for queued writes, then closes the connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    await this.lastStatement;
    const client = this.client;
    this.client = undefined;
    this.up = false;
    await client?.end().catch(() => undefined);
  }
}
