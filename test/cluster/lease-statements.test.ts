// The lease statements against a real PostgreSQL schema. A star renews its leases every second and
// lets idle streams go on its own timer, so a renewal (or a group commit) sent just before a release
// can land just after it. A released lease must stay released: revived, it would keep the stream for
// a whole TTL with no star serving it, and every other star would wait that out before taking it.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { PostgresCluster } from '../../src/storage/metadata/postgres-cluster.ts';
import { PostgresMetadataStore } from '../../src/storage/metadata/postgres-store.ts';
import { dropSchema, freshSchema, postgresSkipReason, TEST_POSTGRES_URL } from '../helpers/postgres.ts';

const skip = await postgresSkipReason();

/** Long, so a lease in these tests never runs out by itself. */
const TTL_MS = 60_000;

describe('lease statements', { skip }, () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => { for (const c of cleanups.reverse()) await c(); });

  async function open(): Promise<{ a: PostgresCluster; b: PostgresCluster; sql: pg.Client; schema: string }> {
    const schema = freshSchema('svcd_leases');
    const meta = new PostgresMetadataStore({ url: TEST_POSTGRES_URL, schema });
    await meta.load();
    const a = new PostgresCluster(TEST_POSTGRES_URL, schema, 'star-a');
    const b = new PostgresCluster(TEST_POSTGRES_URL, schema, 'star-b');
    const sql = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await sql.connect();
    cleanups.push(async () => { await sql.end(); await a.close(); await b.close(); await meta.close(); await dropSchema(schema); });
    return { a, b, sql, schema };
  }

  test('a held lease is renewed; a released one is not, and another star takes it at once', async () => {
    const { a, b } = await open();
    const took = await a.take('s', 'k', TTL_MS);
    assert.ok(took.taken);
    const lease = { bucket: 's', key: 'k', epoch: took.epoch };
    assert.deepEqual([...await a.renew([lease], TTL_MS)], [0], 'held: renewed');
    await a.release([lease]);
    // The renewal that was in flight when the star let the stream go lands now.
    assert.deepEqual([...await a.renew([lease], TTL_MS)], [], 'released: not renewed');
    const cur = await b.holderOf('s', 'k');
    assert.ok(cur && cur.remaining_ms <= 0, `still released (${cur?.remaining_ms} ms left)`);
    const next = await b.take('s', 'k', TTL_MS);
    assert.ok(next.taken && next.epoch === took.epoch + 1, 'another star takes it with the next epoch, without waiting');
  });

  test('a lease that ran out and nobody took is renewed at its epoch (a stalled star keeps its streams); once another star took it, not', async () => {
    const { a, b, sql, schema } = await open();
    const took = await a.take('s', 'k', TTL_MS);
    assert.ok(took.taken);
    const lease = { bucket: 's', key: 'k', epoch: took.epoch };
    await sql.query(`UPDATE ${schema}.leases SET expires_at = clock_timestamp() - interval '1 millisecond'`);
    assert.deepEqual([...await a.renew([lease], TTL_MS)], [0], 'ran out, untaken: renewed');
    await sql.query(`UPDATE ${schema}.leases SET expires_at = clock_timestamp() - interval '1 millisecond'`);
    const other = await b.take('s', 'k', TTL_MS);
    assert.ok(other.taken && other.epoch === took.epoch + 1);
    assert.deepEqual([...await a.renew([lease], TTL_MS)], [], 'taken over: not renewed');
  });

  test('a group commit landing after the release does not revive the lease either', async () => {
    const { a, b, sql, schema } = await open();
    const took = await a.take('s', 'k', TTL_MS);
    assert.ok(took.taken);
    await a.release([{ bucket: 's', key: 'k', epoch: took.epoch }]);
    const committed = await a.commit([{ bucket: 's', key: 'k', epoch: took.epoch, stream_id: 'id-k', first_seq: 0, end_seq: 1, object_key: 'o', byte_offset: 0, byte_length: 1 }], ['o'], TTL_MS);
    assert.deepEqual([...committed], [], 'refused: the star let the stream go');
    assert.equal(Number((await sql.query(`SELECT count(*) AS n FROM ${schema}.chunks`)).rows[0].n), 0);
    const next = await b.take('s', 'k', TTL_MS);
    assert.ok(next.taken, 'another star takes it at once');
  });

  test('a renewal PostgreSQL picks to break a deadlock with another statement goes again and renews', async () => {
    const { a, sql, schema } = await open();
    const t1 = await a.take('s', 'k1', TTL_MS);
    const t2 = await a.take('s', 'k2', TTL_MS);
    assert.ok(t1.taken && t2.taken);
    // Another session (this test's; it waits 10 s before looking for a deadlock, the star's session
    // 1 s, so the star's statement is the one PostgreSQL rolls back) holds k2's row, the renewal takes
    // k1's and waits for k2's, then the other session asks for k1's: a deadlock.
    const deadlockCount = async (): Promise<number> => Number((await sql.query('SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()')).rows[0].deadlocks);
    const before = await deadlockCount();
    await sql.query('BEGIN');
    await sql.query("SET LOCAL deadlock_timeout = '10s'");
    await sql.query(`UPDATE ${schema}.leases SET expires_at = expires_at WHERE key = $1`, [Buffer.from('k2')]);
    const renewing = a.renew([{ bucket: 's', key: 'k1', epoch: t1.epoch }, { bucket: 's', key: 'k2', epoch: t2.epoch }], TTL_MS);
    let renewed: Set<number> | Error | undefined;
    void renewing.then((r) => { renewed = r; }, (e: Error) => { renewed = e; });
    // Until the renewal waits on k2's row.
    for (let i = 0; i < 200; i++) {
      const w = await sql.query("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND locktype = 'transactionid'");
      if (w.rows[0].n > 0) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    await sql.query(`UPDATE ${schema}.leases SET expires_at = expires_at WHERE key = $1`, [Buffer.from('k1')]);
    await sql.query('COMMIT');
    await renewing.catch(() => undefined);
    assert.ok(!(renewed instanceof Error), `the renewal failed: ${String(renewed)}`);
    assert.deepEqual([...(renewed as Set<number>)].sort(), [0, 1], 'both leases renewed');
    // The statistics are flushed within a second or so; the deadlock must have happened, or this test
    // did not try what it claims to.
    let after = before;
    for (let i = 0; i < 40 && after === before; i++) {
      await new Promise((r) => setTimeout(r, 100));
      await sql.query('SELECT pg_stat_clear_snapshot()');
      after = await deadlockCount();
    }
    assert.ok(after > before, 'PostgreSQL broke a deadlock');
  });
});
