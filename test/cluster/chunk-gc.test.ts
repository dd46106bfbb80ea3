// Chunk objects are collected against a real PostgreSQL schema and a file-system object store: one
// run keeps taking batches until nothing old and unreferenced is left (a batch per interval fell
// behind a star under sustained appends), an object still named by a chunk or inside its grace stays,
// and one the store would not delete keeps its row, so the next run deletes it.
import assert from 'node:assert/strict';
import { mkdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { collectChunkObjects } from '../../src/cluster/chunk-gc.ts';
import { CHUNK_GC_BATCH_MAX, CHUNK_OBJECT_GRACE_MS } from '../../src/config/limits.ts';
import { PostgresCluster } from '../../src/storage/metadata/postgres-cluster.ts';
import { PostgresMetadataStore } from '../../src/storage/metadata/postgres-store.ts';
import { FsObjectStore } from '../../src/storage/objects/fs-store.ts';
import { dropSchema, freshSchema, postgresSkipReason, TEST_POSTGRES_URL } from '../helpers/postgres.ts';
import { removeDir, tempDir } from '../helpers/server.ts';

const skip = await postgresSkipReason();
const clock = { nowMs: () => Date.now() };
/** More than two batches' worth, so one run must take several. */
const OLD_OBJECTS = CHUNK_GC_BATCH_MAX * 2 + 88;

describe('chunk object collection', { skip }, () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  after(async () => { for (const c of cleanups.reverse()) await c(); });

  test('deletes every old unreferenced object in one run, keeps the rest, and retries what the store refused', async () => {
    const schema = freshSchema('svcd_chunkgc');
    const meta = new PostgresMetadataStore({ url: TEST_POSTGRES_URL, schema });
    await meta.load(); // creates the tables
    const cluster = new PostgresCluster(TEST_POSTGRES_URL, schema, 'star-t');
    const sql = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await sql.connect();
    const dir = tempDir('svcd-chunkgc-');
    const objects = new FsObjectStore(dir);
    cleanups.push(async () => { await sql.end(); await cluster.close(); await meta.close(); await dropSchema(schema); removeDir(dir); });

    const old = new Date(Date.now() - CHUNK_OBJECT_GRACE_MS * 2);
    const add = async (key: string, createdAt: Date): Promise<void> => {
      await objects.put(key, Buffer.from(key));
      await sql.query(`INSERT INTO ${schema}.chunk_objects (object_key, created_at) VALUES ($1, $2)`, [key, createdAt]);
    };
    for (let i = 0; i < OLD_OBJECTS; i++) await add(`chunks/old-${i}`, old);
    await add('chunks/named', old);
    await sql.query(`INSERT INTO ${schema}.chunks (stream_id, first_seq, end_seq, epoch, object_key, byte_offset, byte_length) VALUES ('s', 0, 1, 1, 'chunks/named', 0, 5)`);
    await add('chunks/fresh', new Date());
    const rows = async (): Promise<string[]> => (await sql.query<{ object_key: string }>(`SELECT object_key FROM ${schema}.chunk_objects ORDER BY object_key`)).rows.map((r) => r.object_key);
    const present = async (key: string): Promise<boolean> => objects.get(key).then(() => true, () => false);

    assert.equal(await collectChunkObjects(cluster, (keys) => objects.deleteMany(keys), clock), OLD_OBJECTS);
    assert.deepEqual(await rows(), ['chunks/fresh', 'chunks/named']);
    assert.deepEqual([await present('chunks/old-0'), await present(`chunks/old-${OLD_OBJECTS - 1}`), await present('chunks/named'), await present('chunks/fresh')], [false, false, true, true]);

    // A key the store cannot delete (a directory sits at its path): its row stays for the next run.
    await sql.query(`INSERT INTO ${schema}.chunk_objects (object_key, created_at) VALUES ('chunks/stuck', $1)`, [old]);
    mkdirSync(join(dir, 'chunks', 'stuck', 'inside'), { recursive: true });
    await add('chunks/later', old);
    assert.equal(await collectChunkObjects(cluster, (keys) => objects.deleteMany(keys), clock), 1);
    assert.deepEqual(await rows(), ['chunks/fresh', 'chunks/named', 'chunks/stuck']);
    rmdirSync(join(dir, 'chunks', 'stuck', 'inside'));
    rmdirSync(join(dir, 'chunks', 'stuck'));
    assert.equal(await collectChunkObjects(cluster, (keys) => objects.deleteMany(keys), clock), 1);
    assert.deepEqual(await rows(), ['chunks/fresh', 'chunks/named']);
  });
});
