// Where a star that does not serve a stream sends its caller. A drained star sends an append for a
// stream it never led to the star that leads it, not to the stream's hashed home. The home does not take a lease another live star holds, so a hop sent there
// came back 503 ("stream is led by star-0") on every retry for as long as the star stayed drained,
// and its gRPC NOT_OWNER named the home (found by a black-box cluster audit: a load balancer in
// front of a drained star failed every append of such streams). And a star the store names as a
// stream's holder, though it let the stream go, takes the stream again rather than sending the caller
// to the home, which would send it back (the same audit saw gRPC callers go back and forth for 10 s
// after a frozen leader thawed).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { TEST_POSTGRES_URL, postgresSkipReason } from '../helpers/postgres.ts';
import { sleep } from '../crash/fault-kit.ts';
import { call as grpcCall, connect } from '../grpc/client.ts';
import { homeScore } from '../../src/cluster/cluster-service.ts';
import { STAR_HEARTBEAT_MS } from '../../src/config/limits.ts';
import { request, startCluster } from './kit.ts';

const skip = await postgresSkipReason();
const REQUEST_MS_MAX = 10_000;
/** Long enough that the stream stays leased by star-0 through the test without appends. */
const LEASE_IDLE_MS = 120_000;

/** A key whose home is star-0 while star-2 is away, and star-2 once star-1 is drained. */
function keyLedAwayFromItsHome(bucket: string): string {
  for (let i = 0; ; i++) {
    const key = `k${i}`;
    const [s0, s1, s2] = [0, 1, 2].map((n) => homeScore(`star-${n}`, bucket, key));
    if (s0 > s1 && s2 > s0) return key;
  }
}

/** The bodies of records 0..end-1, paged: a page stops at the settled frontier (the first record
 *  may have settled while the others are still in memory). */
async function bodiesUpTo(url: string, bucket: string, key: string, end: number): Promise<string[]> {
  const bodies: string[] = [];
  for (let seq = 0; seq < end;) {
    const read = await request(url, 'GET', `/v1/streams/${bucket}/${key}/records?seq_num=${seq}`, undefined, REQUEST_MS_MAX);
    const records = (read.body as { records: { seq_num: number; body: string }[] }).records;
    assert.ok(records.length > 0, JSON.stringify(read.body));
    bodies.push(...records.map((r) => r.body));
    seq = records[records.length - 1].seq_num + 1;
  }
  return bodies;
}

describe('a drained star hops to the leader', { skip, timeout: 180_000 }, () => {
  test('an append through a drained star for a stream led off its home is answered 200 by the leader, over HTTP; gRPC names the leader', async () => {
    const c = await startCluster(3, ['--lease-idle-ms', String(LEASE_IDLE_MS)]);
    const bucket = 'dh';
    const key = keyLedAwayFromItsHome(bucket);
    try {
      // star-2 away: the stream's home is star-0, which takes its lease and keeps it.
      await c.stars[2].stop();
      assert.equal((await request(c.url(0), 'POST', `/v1/buckets/${bucket}`, {}, REQUEST_MS_MAX)).status, 201);
      assert.equal((await request(c.url(0), 'POST', `/v1/streams/${bucket}/${key}`, {}, REQUEST_MS_MAX)).status, 201);
      const first = await request(c.url(0), 'POST', `/v1/streams/${bucket}/${key}/records`, { records: [{ body: 'one' }] }, REQUEST_MS_MAX);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      await c.restart(2);
      const at0 = connect(await c.grpcPort(0));
      const at1 = connect(await c.grpcPort(1));
      try {
        // Drain star-1 (asked at star-0); by a few heartbeats every star knows star-2 is back.
        await grpcCall(at0.admin.Drain.bind(at0.admin), { star_id: 'star-1' });
        await sleep(4 * STAR_HEARTBEAT_MS);
        const detail = await grpcCall(at0.admin.GetStreamDetail.bind(at0.admin), { bucket, key: Buffer.from(key) }) as { leader_star_id: string };
        assert.equal(detail.leader_star_id, 'star-0', 'the stream is led by star-0, away from its home star-2');

        for (const body of ['two', 'three']) {
          const a = await request(c.url(1), 'POST', `/v1/streams/${bucket}/${key}/records`, { records: [{ body }] }, REQUEST_MS_MAX);
          assert.equal(a.status, 200, `through the drained star: ${a.status} ${JSON.stringify(a.body)}`);
        }
        const err = await new Promise<{ details: string; metadata: { get(k: string): unknown[] } }>((resolve, reject) => {
          at1.data.Append({ bucket, key: Buffer.from(key), records: [{ body: Buffer.from('four') }] }, (e: unknown, res: unknown) => (e ? resolve(e as never) : reject(new Error(`answered ${JSON.stringify(res)}`))));
        });
        assert.match(err.details, /led by star star-0\b/, err.details);
        assert.deepEqual(await bodiesUpTo(c.url(0), bucket, key, 3), ['one', 'two', 'three']);
      } finally {
        at0.close();
        at1.close();
      }
    } finally {
      await c.close();
    }
  });
});

describe('a star named holder of a stream it let go', { skip, timeout: 180_000 }, () => {
  test('takes the stream again instead of sending the caller to its home, which would send it back', async () => {
    const c = await startCluster(3, ['--lease-idle-ms', String(LEASE_IDLE_MS)]);
    const sql = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await sql.connect();
    const bucket = 'own';
    // A key whose home is star-2, so star-1 is not its home.
    let key = '';
    for (let i = 0; !key; i++) {
      const k = `k${i}`;
      const [s0, s1, s2] = [0, 1, 2].map((n) => homeScore(`star-${n}`, bucket, k));
      if (s2 > s0 && s2 > s1) key = k;
    }
    try {
      assert.equal((await request(c.url(2), 'POST', `/v1/buckets/${bucket}`, {}, REQUEST_MS_MAX)).status, 201);
      assert.equal((await request(c.url(2), 'POST', `/v1/streams/${bucket}/${key}`, {}, REQUEST_MS_MAX)).status, 201);
      assert.equal((await request(c.url(2), 'POST', `/v1/streams/${bucket}/${key}/records`, { records: [{ body: 'one' }] }, REQUEST_MS_MAX)).status, 200);
      // The store now names star-1 as the holder, unexpired, at a new epoch; star-1 has never loaded
      // the stream (as after a renewal that landed once it had let it go), and star-2 loses it at its
      // next renewal.
      await sql.query(`UPDATE ${c.schema}.leases SET holder = 'star-1', epoch = epoch + 1, expires_at = clock_timestamp() + interval '60 seconds' WHERE bucket = $1 AND key = $2`, [bucket, Buffer.from(key)]);
      await sleep(4 * STAR_HEARTBEAT_MS);
      const at1 = connect(await c.grpcPort(1));
      try {
        const acked = await grpcCall(at1.data.Append.bind(at1.data), { bucket, key: Buffer.from(key), records: [{ body: Buffer.from('two') }] }) as { end: { seq_num: string | number } };
        assert.equal(Number(acked.end.seq_num), 2, 'appended after the first record, by star-1 itself (no NOT_OWNER naming the home)');
      } finally {
        at1.close();
      }
      const a = await request(c.url(1), 'POST', `/v1/streams/${bucket}/${key}/records`, { records: [{ body: 'three' }] }, REQUEST_MS_MAX);
      assert.equal(a.status, 200, JSON.stringify(a.body));
      assert.deepEqual(await bodiesUpTo(c.url(0), bucket, key, 3), ['one', 'two', 'three']);
    } finally {
      await sql.end();
      await c.close();
    }
  });
});
