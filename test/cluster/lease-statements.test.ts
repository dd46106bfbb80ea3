// The lease statements against a real PostgreSQL schema. A star renews its leases every second and
// lets idle streams go on its own timer, so a renewal sent just before a release can land just after
// it. A released (or run-out) lease must stay released: renewed, it would keep the stream for a whole
// TTL with no star serving it, and every other star would wait that out before taking it.
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

  test('a lease that ran out is not renewed, though nobody took it', async () => {
    const { a, sql, schema } = await open();
    const took = await a.take('s', 'k', TTL_MS);
    assert.ok(took.taken);
    await sql.query(`UPDATE ${schema}.leases SET expires_at = clock_timestamp() - interval '1 millisecond'`);
    assert.deepEqual([...await a.renew([{ bucket: 's', key: 'k', epoch: took.epoch }], TTL_MS)], []);
    // Its holder takes it again as any star would: a new epoch, so it reloads what it serves.
    const again = await a.take('s', 'k', TTL_MS);
    assert.ok(again.taken && again.epoch === took.epoch + 1);
  });
});
