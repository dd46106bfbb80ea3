// The MetadataStore contract, run against both backends: `local` (journal + snapshot in a directory)
// and `postgres` (a fresh schema in the test PostgreSQL; skipped with the reason when there is none,
// required under CI). Then what only postgres has: one star per schema, and fail-stop after a lost
// connection.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { keyFromBytes, keyToBytes } from '../../src/storage/format/key-bytes.ts';
import { LocalMetadataStore } from '../../src/storage/metadata/local-store.ts';
import { MetadataUnavailableError, type MetadataStore, type SegmentMeta, type StreamMeta, unpackStreamRows } from '../../src/storage/metadata/metadata-store.ts';
import { LeaseLostError, METADATA_SCHEMA_VERSION, PostgresMetadataStore } from '../../src/storage/metadata/postgres-store.ts';
import { PostgresCluster } from '../../src/storage/metadata/postgres-cluster.ts';
import { dropSchema, freshSchema, postgresSkipReason, TEST_POSTGRES_URL } from '../helpers/postgres.ts';
import { removeDir, tempDir } from '../helpers/server.ts';

const stream = (key: string, trim = 0, bucket = 'b'): StreamMeta => ({
  stream_id: `id-${keyToBytes(key).toString('hex')}`, bucket, key, config: { class: 'standard' }, created_at_unix_ms: 1,
  creation_token: '', fencing_token: '', trim_seq: trim, settled_end_seq: 0, settled_end_ts: 0, segments: [],
});

const seg = (key: string, first: number): SegmentMeta => ({
  object_key: `seg/${keyToBytes(key).toString('hex')}/${first}`, first_seq: first, end_seq: first + 10, min_ts: first, max_ts: first + 9,
  content_bytes: 100, size_bytes: 200, footer_offset: 150, footer_bytes: 50,
});

interface Backend {
  name: string;
  /** Why this backend's tests skip, when they do. */
  skip?: string;
  /** A store over fresh, empty state; `again` reopens the state the previous store of this test used. */
  open(again?: boolean): MetadataStore;
  cleanup(): Promise<void>;
}

function localBackend(): Backend {
  const dirs: string[] = [];
  return {
    name: 'local',
    open(again) {
      if (!again) dirs.push(tempDir());
      return new LocalMetadataStore(dirs[dirs.length - 1], 1000);
    },
    async cleanup() { for (const d of dirs) removeDir(d); },
  };
}

async function postgresBackend(): Promise<Backend> {
  const skip = await postgresSkipReason();
  const schemas: string[] = [];
  return {
    name: 'postgres',
    skip,
    open(again) {
      if (!again) schemas.push(freshSchema());
      return new PostgresMetadataStore({ url: TEST_POSTGRES_URL, schema: schemas[schemas.length - 1] });
    },
    async cleanup() { for (const s of schemas) await dropSchema(s); },
  };
}

const backends: Backend[] = [localBackend(), await postgresBackend()];

for (const be of backends) {
  describe(`metadata store contract (${be.name})`, { skip: be.skip }, () => {
    after(() => be.cleanup());

    test('what was written is there after a reopen, deletes included', async () => {
      const a = be.open();
      await a.load();
      await a.putBucket({ name: 'b', config: { location: 'x' }, created_at_unix_ms: 1, creation_token: 'tok' });
      await Promise.all([a.putStream(stream('k1')), a.putStream(stream('k2')), a.putCredential({ key_id: 'ck_1', scope: 'svc:admin' })]);
      await a.deleteStream('b', 'k2');
      await a.close();
      const b = be.open(true);
      const s = await b.load();
      assert.deepEqual(s.buckets.map((x) => [x.name, x.creation_token, x.config]), [['b', 'tok', { location: 'x' }]]);
      assert.deepEqual(unpackStreamRows(s.streams).map((x) => x.key), ['k1']);
      assert.deepEqual(s.deleted, [{ bucket: 'b', key: 'k2' }]);
      assert.deepEqual(s.credentials, [{ key_id: 'ck_1', scope: 'svc:admin' }]);
      assert.deepEqual(await b.listCredentials(), [{ key_id: 'ck_1', scope: 'svc:admin' }]);
      await b.close();
    });

    test('writes apply in the order they were made, even when not awaited one by one', async () => {
      const a = be.open();
      await a.load();
      const writes: Promise<void>[] = [];
      for (let trim = 0; trim < 50; trim++) writes.push(a.putStream(stream('k', trim)));
      writes.push(a.deleteStream('b', 'gone'), a.putStream(stream('gone', 3)), a.deleteStream('b', 'gone'));
      await Promise.all(writes);
      await a.close();
      const b = be.open(true);
      const s = await b.load();
      assert.deepEqual(unpackStreamRows(s.streams).map((x) => [x.key, x.trim_seq]), [['k', 49]]);
      assert.deepEqual(s.deleted, [{ bucket: 'b', key: 'gone' }]);
      await b.close();
    });

    test('several streams move in one write; the newest row of an address wins; a re-created address is no longer deleted', async () => {
      const a = be.open();
      await a.load();
      await a.deleteStream('b', 'k2');
      await a.putStreams([stream('k1', 1), stream('k2', 2), stream('k1', 5), stream('k3', 3, 'c')]);
      await a.close();
      const b = be.open(true);
      const s = await b.load();
      const rows = unpackStreamRows(s.streams).map((x) => [x.bucket, x.key, x.trim_seq]).sort();
      assert.deepEqual(rows, [['b', 'k1', 5], ['b', 'k2', 2], ['c', 'k3', 3]]);
      assert.deepEqual(s.deleted, []);
      await b.close();
    });

    test('keys are byte strings: bytes that are not UTF-8 come back exactly, one byte apart is another key', async () => {
      const raw = keyFromBytes(Buffer.from([0xff, 0x00, 0x2f, 0xc3]));
      const near = keyFromBytes(Buffer.from([0xff, 0x00, 0x2f, 0xc4]));
      const a = be.open();
      await a.load();
      await a.putStreams([stream(raw, 1), stream(near, 2)]);
      await a.deleteStream('b', near);
      await a.close();
      const b = be.open(true);
      const s = await b.load();
      assert.equal(unpackStreamRows(s.streams).length, 1);
      assert.deepEqual(keyToBytes(unpackStreamRows(s.streams)[0].key), Buffer.from([0xff, 0x00, 0x2f, 0xc3]));
      assert.equal(unpackStreamRows(s.streams)[0].trim_seq, 1);
      assert.deepEqual(s.deleted.map((d) => keyToBytes(d.key)), [Buffer.from([0xff, 0x00, 0x2f, 0xc4])]);
      await b.close();
    });

    test('settled segments: new ones are added, those below the first kept one are gone, after a reopen and a read-back too', async () => {
      const raw = keyFromBytes(Buffer.from([0xfe, 0x41]));
      const a = be.open();
      await a.load();
      const settled = (key: string, ...firsts: number[]): StreamMeta => ({
        ...stream(key, firsts[0] ?? 0), settled_end_seq: (firsts[firsts.length - 1] ?? 0) + 10, segments: firsts.map((f) => seg(key, f)),
      });
      await a.putStreams([settled('k', 0, 10), settled(raw, 0)]);
      await a.putStreams([settled('k', 10, 20, 30)]); // 0 trimmed away, 20 and 30 settled
      await a.putStream(settled(raw, 0, 10));
      await a.putStream(settled(raw, 10)); // 0 aged out
      assert.deepEqual((await a.readStream('b', 'k')).row?.segments.map((x) => x.first_seq), [10, 20, 30]);
      await a.putStream(settled('k', 10, 20, 30, 40));
      await a.close();
      const b = be.open(true);
      const st = await b.load();
      const byKey = new Map(unpackStreamRows(st.streams).map((x) => [x.key, x]));
      assert.deepEqual(byKey.get('k')?.segments, [10, 20, 30, 40].map((f) => seg('k', f)));
      assert.deepEqual(byKey.get(raw)?.segments, [seg(raw, 10)]);
      await b.deleteStream('b', 'k');
      await b.putStream(settled('k')); // made again: none of the old segments come back
      await b.close();
      const c = be.open(true);
      assert.deepEqual(unpackStreamRows((await c.load()).streams).find((x) => x.key === 'k')?.segments, []);
      await c.close();
    });

    test('a credential is read by its key id', async () => {
      const a = be.open();
      await a.load();
      await a.putCredential({ key_id: 'ck_1', scope: 'svc:admin' });
      await a.putCredential({ key_id: 'ck_2', scope: 'svc:read:b' });
      assert.deepEqual(await a.readCredential('ck_2'), { key_id: 'ck_2', scope: 'svc:read:b' });
      assert.equal(await a.readCredential('ck_3'), undefined);
      await a.close();
    });

    test('deleting a bucket forgets its deleted addresses, after a reopen too', async () => {
      const a = be.open();
      await a.load();
      await a.putBucket({ name: 'b', config: {}, created_at_unix_ms: 1, creation_token: '' });
      await a.putBucket({ name: 'other', config: {}, created_at_unix_ms: 1, creation_token: '' });
      await a.putStream(stream('k1'));
      await a.deleteStream('b', 'k1');
      await a.deleteStream('other', 'k9');
      await a.deleteBucket('b');
      await a.close();
      const b = be.open(true);
      const s = await b.load();
      assert.deepEqual(s.buckets.map((x) => x.name), ['other']);
      assert.deepEqual(s.deleted, [{ bucket: 'other', key: 'k9' }]);
      await b.close();
    });
  });
}

const pgSkip = backends[1].skip;
/** Fresh schemas each opened by this many stores at once. */
const FRESH_SCHEMA_ROUNDS = 10;
const FRESH_SCHEMA_STORES = 4;

describe('postgres metadata: stores share a schema, reconnect after a lost connection', { skip: pgSkip }, () => {
  const schemas: string[] = [];
  let admin: pg.Client;
  before(async () => {
    admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await admin.connect();
  });
  after(async () => {
    await admin.end();
    for (const s of schemas) await dropSchema(s);
  });

  test('stores share a schema (a cluster); a guarded stream write lands only under the lease at its epoch', async () => {
    const schema = freshSchema();
    schemas.push(schema);
    const first = new PostgresMetadataStore({ url: TEST_POSTGRES_URL, schema });
    await first.load();
    const epochs = new Map<string, number>();
    const guarded = new PostgresMetadataStore({ url: TEST_POSTGRES_URL, schema, leaseGuard: { holder: 'star-a', epochOf: (_b, k) => epochs.get(k) } });
    await guarded.load(); // a second store on the same schema opens
    await assert.rejects(guarded.putStream(stream('g1')), LeaseLostError, 'no lease: refused');
    assert.equal((await first.readStream('b', 'g1')).row, undefined, 'nothing written');
    const leases = new PostgresCluster(TEST_POSTGRES_URL, schema, 'star-a');
    const took = await leases.take('b', 'g1', 5000);
    assert.ok(took.taken);
    epochs.set('g1', took.epoch);
    await guarded.putStream(stream('g1'));
    assert.equal((await first.readStream('b', 'g1')).row?.key, 'g1', 'written under the lease');
    // Another star takes the lease over (it ran out): the epoch rises and the old holder's write fails.
    const other = new PostgresCluster(TEST_POSTGRES_URL, schema, 'star-b');
    await admin.query(`UPDATE ${schema}.leases SET expires_at = clock_timestamp() - interval '1 second'`);
    const taken = await other.take('b', 'g1', 5000);
    assert.ok(taken.taken && taken.epoch === took.epoch + 1);
    await assert.rejects(guarded.putStream({ ...stream('g1'), trim_seq: 5 }), LeaseLostError);
    assert.equal((await first.readStream('b', 'g1')).row?.trim_seq, 0, 'the stale leader wrote nothing');
    await assert.rejects(guarded.deleteStream('b', 'g1'), LeaseLostError);
    await leases.close();
    await other.close();
    await guarded.close();
    await first.close();
  });

  test('stars started together on a fresh schema all open it: the schema and its migrations table are made under the migration lock', async () => {
    // Before, IF NOT EXISTS ran outside the lock, and two stars making the schema at once collided
    // (a duplicate key in pg_type refused one of three, about one start in ten).
    for (let round = 0; round < FRESH_SCHEMA_ROUNDS; round++) {
      const schema = freshSchema();
      schemas.push(schema);
      const stores = Array.from({ length: FRESH_SCHEMA_STORES }, () => new PostgresMetadataStore({ url: TEST_POSTGRES_URL, schema }));
      try {
        const opened = await Promise.allSettled(stores.map((st) => st.load()));
        const refused = opened.flatMap((o) => (o.status === 'rejected' ? [String(o.reason)] : []));
        assert.deepEqual(refused, [], `round ${round}: stores refused`);
      } finally {
        for (const st of stores) await st.close();
      }
    }
  });

  test('after its connection is lost, the store refuses writes, reconnects by itself, and writes again', async () => {
    const schema = freshSchema();
    schemas.push(schema);
    const store = new PostgresMetadataStore({ url: TEST_POSTGRES_URL, schema });
    await store.load();
    await store.putStream(stream('before'));
    // The store's backend is the one whose last statement named this schema: end it from outside.
    const killed = await admin.query(
      `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = 'svcd' AND query LIKE $1`,
      [`%${schema}.%`],
    );
    assert.equal(killed.rows.length, 1, 'the store\'s connection was found');
    await assert.rejects(store.putStream(stream('lost')), MetadataUnavailableError);
    assert.equal(store.healthy(), false, 'unhealthy while the connection is gone');
    assert.equal(store.health.up, false);
    for (let i = 0; i < 200 && !store.healthy(); i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(store.healthy(), true, 'a new connection was made');
    assert.equal(store.health.up, true);
    assert.ok(store.health.errors >= 1);
    await store.putStream(stream('after'));
    assert.equal((await store.readStream('b', 'after')).row?.key, 'after');
    await store.close();
    const again = new PostgresMetadataStore({ url: TEST_POSTGRES_URL, schema });
    const s = await again.load();
    assert.deepEqual(unpackStreamRows(s.streams).map((x) => x.key).sort(), ['after', 'before']);
    await again.close();
  });

  test('a schema of the first layout is migrated: segments move to their own table, byte keys included, and each step is recorded once', async () => {
    const schema = freshSchema();
    schemas.push(schema);
    const raw = keyFromBytes(Buffer.from([0xff, 0x01]));
    // The layout a star of the first release made: no schema_migrations, segments inside the doc.
    await admin.query(`CREATE SCHEMA ${schema};
      CREATE TABLE ${schema}.buckets (name text PRIMARY KEY, doc text NOT NULL);
      CREATE TABLE ${schema}.streams (bucket text NOT NULL, key bytea NOT NULL, doc text NOT NULL, PRIMARY KEY (bucket, key));
      CREATE TABLE ${schema}.deleted (bucket text NOT NULL, key bytea NOT NULL, PRIMARY KEY (bucket, key));
      CREATE TABLE ${schema}.credentials (key_id text PRIMARY KEY, doc text NOT NULL);`);
    const old = { ...stream(raw), settled_end_seq: 20, segments: [seg(raw, 0), seg(raw, 10)] };
    await admin.query(`INSERT INTO ${schema}.streams (bucket, key, doc) VALUES ('b', $1, $2)`, [keyToBytes(raw), JSON.stringify(old)]);
    const store = new PostgresMetadataStore({ url: TEST_POSTGRES_URL, schema });
    const st = await store.load();
    assert.deepEqual(unpackStreamRows(st.streams), [old]);
    await store.putStream({ ...old, settled_end_seq: 30, segments: [seg(raw, 10), seg(raw, 20)] });
    await store.close();
    const docs = await admin.query<{ doc: string }>(`SELECT doc FROM ${schema}.streams`);
    assert.deepEqual(JSON.parse(docs.rows[0].doc).segments, [], 'the document no longer carries them');
    const segs = await admin.query<{ first_seq: string }>(`SELECT first_seq FROM ${schema}.segments ORDER BY first_seq`);
    assert.deepEqual(segs.rows.map((r) => Number(r.first_seq)), [10, 20]);
    const versions = await admin.query<{ version: number }>(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`);
    assert.deepEqual(versions.rows.map((r) => r.version), Array.from({ length: METADATA_SCHEMA_VERSION }, (_, i) => i + 1));
    const again = new PostgresMetadataStore({ url: TEST_POSTGRES_URL, schema });
    assert.deepEqual(unpackStreamRows((await again.load()).streams)[0].segments, [seg(raw, 10), seg(raw, 20)]);
    await again.close();
  });

  test('chunks written before they named their stream are given its address, and those of no stream are forgotten', async () => {
    const schema = freshSchema();
    schemas.push(schema);
    const raw = keyFromBytes(Buffer.from([0xff, 0x02]));
    const first = new PostgresMetadataStore({ url: TEST_POSTGRES_URL, schema });
    await first.load();
    await first.putStream(stream(raw));
    await first.close();
    // Back to version 4's layout: chunks without an address (and stars without objects_ok, 6).
    await admin.query(`DROP INDEX ${schema}.chunks_by_address; ALTER TABLE ${schema}.chunks DROP COLUMN bucket, DROP COLUMN key;
      ALTER TABLE ${schema}.stars DROP COLUMN objects_ok; DELETE FROM ${schema}.schema_migrations WHERE version > 4`);
    const insert = `INSERT INTO ${schema}.chunks (stream_id, first_seq, end_seq, epoch, object_key, byte_offset, byte_length) VALUES ($1, $2, $3, 1, 'o', 0, 1)`;
    await admin.query(insert, [stream(raw).stream_id, 0, 1]);
    await admin.query(insert, [stream(raw).stream_id, 1, 2]);
    await admin.query(insert, ['no-such-stream', 0, 1]);
    const store = new PostgresMetadataStore({ url: TEST_POSTGRES_URL, schema });
    await store.load();
    await store.close();
    const rows = await admin.query<{ stream_id: string; bucket: string; key: Buffer }>(`SELECT stream_id, bucket, key FROM ${schema}.chunks ORDER BY first_seq`);
    assert.deepEqual(rows.rows.map((r) => [r.stream_id, r.bucket, keyFromBytes(r.key)]), [[stream(raw).stream_id, 'b', raw], [stream(raw).stream_id, 'b', raw]]);
  });

  test('a schema a newer build migrated further is refused, not written', async () => {
    const schema = freshSchema();
    schemas.push(schema);
    const first = new PostgresMetadataStore({ url: TEST_POSTGRES_URL, schema });
    await first.load();
    await first.close();
    await admin.query(`INSERT INTO ${schema}.schema_migrations (version, applied_unix_ms) VALUES ($1, 0)`, [METADATA_SCHEMA_VERSION + 1]);
    const store = new PostgresMetadataStore({ url: TEST_POSTGRES_URL, schema });
    await assert.rejects(store.load(), /newer than this build/);
    await store.close();
  });
});
