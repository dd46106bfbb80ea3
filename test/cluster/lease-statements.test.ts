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
});
