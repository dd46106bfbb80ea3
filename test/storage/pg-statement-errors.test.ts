// A statement PostgreSQL refuses for its own state (cancelled by statement_timeout or an operator's
// pg_cancel_backend, out of connections, read-only during a failover) says the store is unavailable
// for a moment: the caller gets MetadataUnavailableError (503, retry), not the raw DatabaseError that
// the HTTP layer maps to 500 as a bug. Its connection stays usable. Real PostgreSQL: the read is
// held behind a lock another session takes, and that session cancels it.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { PostgresMetadataStore } from '../../src/storage/metadata/postgres-store.ts';
import { MetadataUnavailableError } from '../../src/storage/metadata/metadata-store.ts';
import { dropSchema, freshSchema, postgresSkipReason, TEST_POSTGRES_URL } from '../helpers/postgres.ts';

const pgSkip = await postgresSkipReason();

/** How long the test waits for the store's read to be seen waiting on the lock (a bound on a hang). */
const LOCK_WAIT_SEEN_MS_MAX = 30_000;

describe('a metadata statement PostgreSQL refuses for its own state', { timeout: 120_000 }, () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  test('a read cancelled on the server (57014) is MetadataUnavailableError, and the store reads again after', { skip: pgSkip }, async () => {
    const schema = freshSchema();
    cleanups.push(() => dropSchema(schema));
    const store = new PostgresMetadataStore({ url: TEST_POSTGRES_URL, schema });
    cleanups.push(() => store.close());
    await store.load();

    const locker = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    locker.on('error', () => undefined);
    await locker.connect();
    cleanups.push(() => locker.end());
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE ${schema}.buckets IN ACCESS EXCLUSIVE MODE`);

    const read = store.readBucket('b');
    read.catch(() => undefined);
    // The store's backend, waiting on the lock the locker holds, seen from a third session: inside the
    // locker's transaction pg_stat_activity would answer from the snapshot its first look took.
    const watcher = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    watcher.on('error', () => undefined);
    await watcher.connect();
    cleanups.push(() => watcher.end());
    let pid: number | undefined;
    const deadline = Date.now() + LOCK_WAIT_SEEN_MS_MAX;
    while (pid === undefined) {
      assert.ok(Date.now() < deadline, 'the read never waited on the lock');
      const res = await watcher.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`, [`%${schema}.buckets%`]);
      pid = res.rows[0]?.pid;
      if (pid === undefined) await new Promise((r) => setTimeout(r, 50));
    }
    await locker.query('SELECT pg_cancel_backend($1)', [pid]);
    await assert.rejects(read, (err: unknown) => {
      assert.ok(err instanceof MetadataUnavailableError, `expected MetadataUnavailableError, got ${String(err)}`);
      assert.equal((err.cause as { code?: string }).code, '57014');
      return true;
    });
    await locker.query('ROLLBACK');
    // The cancelled statement left its connection as it was: the next read is answered.
    assert.equal(await store.readBucket('b'), undefined);
  });
});
