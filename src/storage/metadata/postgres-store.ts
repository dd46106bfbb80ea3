// The `postgres` metadata backend: the same rows as `local`, in PostgreSQL (the cluster's shared
// metadata store). One connection per star, so writes apply in the order the star made them, and
// each write is one SQL statement, so it applies whole or not at all.
//
// - A schema (default `svcd`) holds four tables. Keys are byte strings (storage/format/key-bytes.ts) and are
//   stored as bytea; every other field rides a JSON document in a text column (JSON.stringify
//   escapes a key's raw bytes, which jsonb would refuse).
// - One star owns a schema: it holds a session advisory lock on the schema's name for as long as its
//   connection lives, and a second star is refused at start. A killed star's connection closes with
//   its process, and the lock with it.
// - Like the local journal, the store stops writing after a failed write: the star's memory may then
//   hold a change the store does not, so only a restart (which reloads from here) is safe.

import pg from 'pg';
import { keyFromBytes, keyToBytes } from '../format/key-bytes.ts';
import { POSTGRES_CONNECT_MS_MAX, POSTGRES_STATEMENT_MS_MAX } from '../../config/limits.ts';
import { MetadataUnavailableError, type BucketMeta, type CredentialMeta, type MetadataStore, type MetaState, type StreamMeta } from './metadata-store.ts';

export interface PostgresMetadataOptions {
  /** A libpq-style connection URL: postgres://user@host:port/database */
  url: string;
  /** The schema that holds this star's tables; created when absent. */
  schema: string;
}

/** Schema names the store accepts: a plain lower-case SQL identifier, so it is never quoted wrong
 *  (the config checks the flag the same way, with a friendlier message). */
const POSTGRES_SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

export class MetadataOwnedError extends Error {}

export class PostgresMetadataStore implements MetadataStore {
  private readonly client: pg.Client;
  private readonly s: string;
  private failed: unknown;
  private connected = false;
  /** Settles once the newest statement has (statements run one at a time, in order). */
  private lastStatement: Promise<void> = Promise.resolve();

  constructor(private readonly opts: PostgresMetadataOptions) {
    if (!POSTGRES_SCHEMA_PATTERN.test(opts.schema)) throw new Error(`postgres schema ${JSON.stringify(opts.schema)} is not a plain lower-case identifier`);
    this.s = opts.schema;
    this.client = new pg.Client({
      connectionString: opts.url,
      connectionTimeoutMillis: POSTGRES_CONNECT_MS_MAX,
      statement_timeout: POSTGRES_STATEMENT_MS_MAX,
      application_name: 'svcd',
    });
    // A connection lost later fails the next write (and every one after it); without a listener the
    // client's 'error' event would end the process.
    this.client.on('error', (err) => { this.failed ??= err; });
  }

  async load(): Promise<MetaState> {
    await this.client.connect();
    this.connected = true;
    const s = this.s;
    const owned = await this.client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [`svcd:${s}`]);
    if (!owned.rows[0]?.ok) throw new MetadataOwnedError(`metadata: postgres schema ${s} is in use by another star`);
    await this.client.query(`
      CREATE SCHEMA IF NOT EXISTS ${s};
      CREATE TABLE IF NOT EXISTS ${s}.buckets (name text PRIMARY KEY, doc text NOT NULL);
      CREATE TABLE IF NOT EXISTS ${s}.streams (bucket text NOT NULL, key bytea NOT NULL, doc text NOT NULL, PRIMARY KEY (bucket, key));
      CREATE TABLE IF NOT EXISTS ${s}.deleted (bucket text NOT NULL, key bytea NOT NULL, PRIMARY KEY (bucket, key));
      CREATE TABLE IF NOT EXISTS ${s}.credentials (key_id text PRIMARY KEY, doc text NOT NULL);
    `);
    const buckets = await this.client.query<{ doc: string }>(`SELECT doc FROM ${s}.buckets ORDER BY name`);
    const streams = await this.client.query<{ doc: string }>(`SELECT doc FROM ${s}.streams ORDER BY bucket, key`);
    const deleted = await this.client.query<{ bucket: string; key: Buffer }>(`SELECT bucket, key FROM ${s}.deleted ORDER BY bucket, key`);
    const credentials = await this.client.query<{ doc: string }>(`SELECT doc FROM ${s}.credentials ORDER BY key_id`);
    return {
      buckets: buckets.rows.map((r) => JSON.parse(r.doc) as BucketMeta),
      streams: streams.rows.map((r) => JSON.parse(r.doc) as StreamMeta),
      deleted: deleted.rows.map((r) => ({ bucket: r.bucket, key: keyFromBytes(r.key) })),
      credentials: credentials.rows.map((r) => JSON.parse(r.doc) as CredentialMeta),
    };
  }

  /** Runs one statement once every earlier one has finished: one at a time on the one connection. */
  private serial<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<T>> {
    const run = this.lastStatement.then(() => this.client.query<T>(sql, params));
    this.lastStatement = run.then(() => undefined, () => undefined);
    return run;
  }

  /** Runs one write statement, in order behind every earlier one. */
  private async write(sql: string, params: unknown[]): Promise<void> {
    if (this.failed !== undefined) throw new MetadataUnavailableError(`metadata store failed earlier: ${String(this.failed)}`);
    try {
      await this.serial(sql, params);
    } catch (err) {
      this.failed ??= err;
      throw new MetadataUnavailableError(`metadata write failed: ${(err as Error).message}`, { cause: err });
    }
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

  /** Every row in one statement: a settled WAL file's streams move together or not at all. */
  putStreams(rows: StreamMeta[]): Promise<void> {
    // One row per address (the newest): a statement may not upsert the same row twice.
    const byAddr = new Map<string, StreamMeta>();
    for (const r of rows) byAddr.set(`${r.bucket}\u0000${r.key}`, r);
    rows = [...byAddr.values()];
    if (rows.length === 0) return Promise.resolve();
    return this.write(
      `WITH rows AS (SELECT * FROM unnest($1::text[], $2::bytea[], $3::text[]) AS r(bucket, key, doc)),
            upserted AS (INSERT INTO ${this.s}.streams (bucket, key, doc) SELECT bucket, key, doc FROM rows
                         ON CONFLICT (bucket, key) DO UPDATE SET doc = excluded.doc)
       DELETE FROM ${this.s}.deleted d USING rows WHERE d.bucket = rows.bucket AND d.key = rows.key`,
      [rows.map((r) => r.bucket), rows.map((r) => keyToBytes(r.key)), rows.map((r) => JSON.stringify(r))],
    );
  }

  deleteStream(bucket: string, key: string): Promise<void> {
    return this.write(
      `WITH gone AS (DELETE FROM ${this.s}.streams WHERE bucket = $1 AND key = $2)
       INSERT INTO ${this.s}.deleted (bucket, key) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
      [bucket, keyToBytes(key)],
    );
  }

  putCredential(c: CredentialMeta): Promise<void> {
    return this.write(
      `INSERT INTO ${this.s}.credentials (key_id, doc) VALUES ($1, $2) ON CONFLICT (key_id) DO UPDATE SET doc = excluded.doc`,
      [c.key_id, JSON.stringify(c)],
    );
  }

  async listCredentials(): Promise<CredentialMeta[]> {
    const res = await this.serial<{ doc: string }>(`SELECT doc FROM ${this.s}.credentials ORDER BY key_id`);
    return res.rows.map((r) => JSON.parse(r.doc) as CredentialMeta);
  }

  healthy(): boolean { return this.failed === undefined; }

  /** Waits for queued writes, then closes the connection (which releases the schema's lock). */
  async close(): Promise<void> {
    if (!this.connected) return;
    this.connected = false;
    await this.lastStatement;
    await this.client.end();
  }
}
