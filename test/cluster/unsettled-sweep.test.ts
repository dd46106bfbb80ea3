// A vacant stream keeps no committed, unsettled chunks for long, on real stars sharing PostgreSQL and
// s3rver. Such chunks are read back from object storage by every read of the stream, and their objects
// are never collected, so they must not wait for the stream's next write:
// - an idle leader lets a stream go only once what it holds of it has settled;
// - chunks a leader left behind (SIGKILLed before it settled them) are settled by the survivor with
//   no write to the stream (cluster-service.ts sweepUnsettled);
// - chunks naming a stream that is gone (deleted, and its star stopped before forgetting them) are
//   forgotten, so their objects can be collected.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { sleep } from '../crash/fault-kit.ts';
import { postgresSkipReason, TEST_POSTGRES_URL } from '../helpers/postgres.ts';
import { request, startCluster, type TestCluster } from './kit.ts';

const skip = await postgresSkipReason();

const BUCKET = 'sw';
/** Short, so streams go vacant within the test (default 10 s). */
const LEASE_IDLE_MS = 300;
const REQUEST_MS_MAX = 10_000;
/** How long a wait for the cluster to settle or let go may take before the test gives up (a loaded
 *  machine stretches leases, heartbeats and sweeps). A bound, not a speed. */
const WAIT_MS_MAX = 60_000;
const POLL_MS = 50;

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + WAIT_MS_MAX;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    assert.ok(Date.now() < deadline, `gave up waiting: ${what}`);
    await sleep(POLL_MS);
  }
}

async function append(c: TestCluster, star: number, key: string, bodies: string[]): Promise<void> {
  const a = await request(c.url(star), 'POST', `/v1/streams/${BUCKET}/${key}/records`, { records: bodies.map((body) => ({ body })) }, REQUEST_MS_MAX);
  assert.equal(a.status, 200, JSON.stringify(a.body));
}

async function create(c: TestCluster, key: string): Promise<void> {
  const r = await request(c.url(0), 'POST', `/v1/streams/${BUCKET}/${key}`, {}, REQUEST_MS_MAX);
  assert.equal(r.status, 201, JSON.stringify(r.body));
}

async function readAll(c: TestCluster, star: number, key: string): Promise<string[]> {
  const r = await request(c.url(star), 'GET', `/v1/streams/${BUCKET}/${key}/records?seq_num=0`, undefined, REQUEST_MS_MAX);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.records.map((x: { body: string }) => x.body);
}

function suite(extraArgs: string[]): { readonly c: TestCluster; readonly sql: pg.Client } {
  let c: TestCluster | undefined;
  let sql: pg.Client | undefined;
  before(async () => {
    c = await startCluster(2, ['--lease-idle-ms', String(LEASE_IDLE_MS), ...extraArgs]);
    sql = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await sql.connect();
    assert.equal((await request(c.url(0), 'POST', `/v1/buckets/${BUCKET}`, {}, REQUEST_MS_MAX)).status, 201);
  });
  after(async () => {
    await sql?.end();
    await c?.close();
  });
  return {
    get c() { assert.ok(c); return c; },
    get sql() { assert.ok(sql); return sql; },
  };
}

describe('cluster: an idle leader lets a stream go only once it has settled', { skip }, () => {
  // Settling 2 s after a generation opens: longer than the idle timeout, so a leader that let go at
  // the idle timeout alone would leave the chunks behind.
  // A long lease, so only a release (never a renewal late on a loaded machine) makes it vacant.
  const s = suite(['--wal-settle-after-ms', '2000', '--lease-ttl-ms', '60000']);

  test('when its lease is seen released, the stream has no chunk left, and its records are in a segment', async () => {
    const { c, sql } = s;
    const key = 'idle';
    const bodies = ['a', 'b', 'c'];
    await create(c, key);
    await append(c, 0, key, bodies);
    const seen = await until('the stream to go vacant', async () => {
      // One statement, so both are read from the same snapshot.
      const r = await sql.query<{ vacant: boolean | null; chunks: string }>(
        `SELECT (SELECT expires_at <= clock_timestamp() FROM ${c.schema}.leases WHERE bucket = $1 AND key = $2) AS vacant,
                (SELECT count(*) FROM ${c.schema}.chunks WHERE bucket = $1 AND key = $2) AS chunks`, [BUCKET, Buffer.from(key)]);
      return r.rows[0].vacant ? r.rows[0] : undefined;
    });
    assert.equal(Number(seen.chunks), 0, 'the lease was released with committed chunks still unsettled');
    const segs = await sql.query(`SELECT first_seq FROM ${c.schema}.segments WHERE bucket = $1 AND key = $2`, [BUCKET, Buffer.from(key)]);
    assert.equal(segs.rowCount, 1);
    for (const star of [0, 1]) assert.deepEqual(await readAll(c, star, key), bodies, `read at star ${star}`);
  });
});

describe('cluster: the unsettled chunks of a vacant stream are settled with no write to it', { skip }, () => {
  // Nothing settles by time: only what a star adopts on taking a lease settles at once.
  const s = suite(['--wal-settle-after-ms', '3600000']);

  test('a SIGKILLed leader left chunks; the survivor settles them, and every acked record is read back', async () => {
    const { c, sql } = s;
    const holderOf = async (key: string): Promise<string | undefined> =>
      (await sql.query<{ holder: string }>(`SELECT holder FROM ${c.schema}.leases WHERE bucket = $1 AND key = $2`, [BUCKET, Buffer.from(key)])).rows[0]?.holder;
    // Streams until a few are led by star 1 (each goes to the star its address hashes to).
    const want = new Map<string, string[]>();
    const onVictim: string[] = [];
    for (let i = 0; onVictim.length < 3; i++) {
      assert.ok(i < 64, 'no stream hashed to star 1');
      const key = `k${i}`;
      const bodies = [`${key}-0`, `${key}-1`];
      await create(c, key);
      await append(c, 0, key, bodies);
      await append(c, 1, key, [`${key}-2`]);
      want.set(key, [...bodies, `${key}-2`]);
      if (await holderOf(key) === 'star-1') onVictim.push(key);
    }
    const chunksOf = async (keys: string[]): Promise<number> => Number((await sql.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${c.schema}.chunks WHERE bucket = $1 AND key = ANY($2::bytea[])`, [BUCKET, keys.map((k) => Buffer.from(k))])).rows[0].n);
    assert.ok(await chunksOf(onVictim) > 0, 'the victim holds unsettled chunks when it is killed');
    await c.stars[1].kill();

    // Nothing is written to these streams again: only the survivor's sweep can settle them.
    await until('the survivor to settle the dead leader\'s streams', async () => (await chunksOf(onVictim)) === 0 ? true : undefined);
    for (const key of onVictim) {
      const segs = await sql.query(`SELECT first_seq FROM ${c.schema}.segments WHERE bucket = $1 AND key = $2`, [BUCKET, Buffer.from(key)]);
      assert.ok((segs.rowCount ?? 0) > 0, `${key} has a segment`);
    }
    for (const [key, bodies] of want) assert.deepEqual(await readAll(c, 0, key), bodies, `${key} at the survivor`);
    await c.restart(1, true); // wiped: its records can only come from the shared store
    for (const key of onVictim) assert.deepEqual(await readAll(c, 1, key), want.get(key), `${key} at the restarted star`);
  });

  test('chunks naming a stream that is gone are forgotten', async () => {
    const { c, sql } = s;
    // A deleted stream's chunks, as a star stopped between the delete and forgetting them leaves them.
    const key = 'gone';
    await create(c, key);
    await append(c, 0, key, ['x']);
    const id = (await request(c.url(0), 'GET', `/v1/streams/${BUCKET}/${key}`, undefined, REQUEST_MS_MAX)).body.stream_id as string;
    assert.equal((await request(c.url(0), 'DELETE', `/v1/streams/${BUCKET}/${key}`, undefined, REQUEST_MS_MAX)).status, 204);
    const obj = await sql.query<{ object_key: string }>(`SELECT object_key FROM ${c.schema}.chunk_objects LIMIT 1`);
    assert.equal(obj.rowCount, 1);
    await sql.query(
      `INSERT INTO ${c.schema}.chunks (stream_id, first_seq, end_seq, epoch, object_key, byte_offset, byte_length, bucket, key) VALUES ($1, 0, 1, 1, $2, 0, 1, $3, $4)`,
      [id, obj.rows[0].object_key, BUCKET, Buffer.from(key)]);
    await until('the gone stream\'s chunks to be forgotten', async () => {
      const r = await sql.query(`SELECT 1 FROM ${c.schema}.chunks WHERE stream_id = $1`, [id]);
      return r.rowCount === 0 ? true : undefined;
    });
    assert.equal((await request(c.url(0), 'GET', `/v1/streams/${BUCKET}/${key}`, undefined, REQUEST_MS_MAX)).status, 404);
  });
});
