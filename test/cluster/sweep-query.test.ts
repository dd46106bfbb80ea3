// The unsettled sweep's query against a real PostgreSQL schema: it finds the streams holding chunks
// whose lease has run out (never those leased now), each stream id once, in address order, and pages
// from a cursor, so a run that stops goes on where it stopped and no stream is starved by a fixed
// first page (raw byte keys included).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { PostgresCluster } from '../../src/storage/metadata/postgres-cluster.ts';
import { PostgresMetadataStore } from '../../src/storage/metadata/postgres-store.ts';
import { keyFromBytes, keyToBytes } from '../../src/storage/format/key-bytes.ts';
import { dropSchema, freshSchema, postgresSkipReason, TEST_POSTGRES_URL } from '../helpers/postgres.ts';

const skip = await postgresSkipReason();

describe('the unsettled sweep\'s query', { skip }, () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => { for (const c of cleanups.reverse()) await c(); });

  test('vacant streams with chunks, each id once, in address order, paged from a cursor; leased ones never', async () => {
    const schema = freshSchema('svcd_sweepq');
    const meta = new PostgresMetadataStore({ url: TEST_POSTGRES_URL, schema });
    await meta.load();
    const cluster = new PostgresCluster(TEST_POSTGRES_URL, schema, 'star-t');
    const sql = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await sql.connect();
    cleanups.push(async () => { await sql.end(); await cluster.close(); await meta.close(); await dropSchema(schema); });

    const raw = keyFromBytes(Buffer.from([0xff, 0x00, 0x01]));
    const keys = ['a', 'b', 'c', 'd', 'e', raw];
    const lease = async (key: string, live: boolean): Promise<void> => {
      await sql.query(`INSERT INTO ${schema}.leases (bucket, key, holder, epoch, expires_at) VALUES ('s', $1, 'x', 1, now() + $2 * interval '1 second')`,
        [keyToBytes(key), live ? 60 : -1]);
    };
    const chunk = async (key: string, id: string, first: number): Promise<void> => {
      await sql.query(`INSERT INTO ${schema}.chunks (stream_id, first_seq, end_seq, epoch, object_key, byte_offset, byte_length, bucket, key)
        VALUES ($1, $2, $3, 1, 'o', 0, 1, 's', $4)`, [id, first, first + 1, keyToBytes(key)]);
    };
    const idOf = (k: string): string => `id-${keys.indexOf(k)}`;
    for (const k of keys) {
      await lease(k, k === 'c'); // c is led now
      await chunk(k, idOf(k), 0);
      await chunk(k, idOf(k), 1); // two chunks of one stream: one row
    }
    await chunk('d', 'id-d-old', 0); // a deleted stream's chunks at the same address
    const all = await cluster.vacantUnsettled(undefined, 100);
    assert.deepEqual(all.map((v) => [v.key, v.stream_id]), [['a', 'id-0'], ['b', 'id-1'], ['d', 'id-3'], ['d', 'id-d-old'], ['e', 'id-4'], [raw, 'id-5']]);
    // Paged from the cursor at every size (a page may end between two stream ids at one address),
    // every vacant stream comes exactly once.
    for (const size of [1, 2, 3, 4]) {
      const seen: string[] = [];
      let cursor: Awaited<ReturnType<typeof cluster.vacantUnsettled>>[number] | undefined;
      for (let i = 0; i < 20; i++) {
        const page = await cluster.vacantUnsettled(cursor, size);
        seen.push(...page.map((v) => v.stream_id));
        if (page.length < size) break;
        cursor = page[page.length - 1];
      }
      assert.deepEqual(seen, all.map((v) => v.stream_id), `pages of ${size}`);
    }
  });
});
