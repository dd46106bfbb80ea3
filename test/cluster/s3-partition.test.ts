// One star cut off from the object store while the others reach it (chaos audit L4). Each star
// reaches s3rver through a TCP relay of its own, and the test cuts the leader's alone: its group
// commits fail, so before, its streams answered 503 to every append for as long as the cut lasted,
// on every star (the others hop to the leader). Now, once its store has been down for
// OBJECTS_DOWN_HANDOFF_MS while another star reports reaching it, the leader hands its streams over
// and takes no lease: the other star loads them from what is committed and acknowledges appends again,
// including those sent to the cut-off star, which hops them there. Every acknowledged append reads
// back at its position, and no refused one is in the stream.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { dropSchema, freshSchema, postgresSkipReason, TEST_POSTGRES_URL } from '../helpers/postgres.ts';
import { removeDir, startServer, tempDir, type RunningServer } from '../helpers/server.ts';
import { startS3, type TestS3 } from '../helpers/s3.ts';
import { TcpRelay } from '../helpers/tcp-relay.ts';
import { until } from '../crash/fault-kit.ts';
import { produce, readBack, request, TEST_LEASE_TTL_MS } from './kit.ts';

const skip = await postgresSkipReason();

/** One request's longest wait (a bound, not a speed). */
const REQUEST_MS_MAX = 20_000;
/** How long appends may take to be acknowledged again after the cut (a bound, not a speed: the
 *  hand-over waits OBJECTS_DOWN_HANDOFF_MS, then a lease moves). */
const RECOVERY_WAIT_MS_MAX = 60_000;

describe('one star cut off from the object store (chaos audit L4)', { skip, timeout: 180_000 }, () => {
  let schema: string;
  let s3: TestS3;
  let sql: pg.Client;
  const relays: TcpRelay[] = [];
  const stars: RunningServer[] = [];
  const dirs: string[] = [];
  before(async () => {
    schema = freshSchema('svcd_s3part');
    s3 = await startS3('svcd-test');
    for (let i = 0; i < 2; i++) {
      const relay = new TcpRelay(Number(new URL(s3.endpoint).port));
      await relay.start();
      relays.push(relay);
      dirs.push(tempDir(`svcd-s3part-${i}-`));
      stars.push(await startServer({
        dataDir: dirs[i], env: s3.env, args: [
          '--metadata', 'postgres', '--postgres-url', TEST_POSTGRES_URL, '--postgres-schema', schema,
          '--object-store', 's3', '--s3-bucket', s3.bucket, '--s3-endpoint', `http://127.0.0.1:${relay.port}`, '--s3-force-path-style',
          '--s3-prefix', `${schema}/`, '--star-id', `star-${i}`, '--lease-ttl-ms', String(TEST_LEASE_TTL_MS), '--grpc-listen', '127.0.0.1:0',
        ],
      }));
    }
    sql = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await sql.connect();
  });
  after(async () => {
    await sql?.end();
    for (const s of stars) await s.kill();
    for (const r of relays) r.close();
    await s3?.close();
    if (schema) await dropSchema(schema);
    for (const d of dirs) removeDir(d);
  });

  const holderOf = async (key: string): Promise<string | undefined> =>
    (await sql.query<{ holder: string }>(`SELECT holder FROM ${schema}.leases WHERE bucket = 'part' AND key = $1 AND expires_at > clock_timestamp()`, [Buffer.from(key)])).rows[0]?.holder;

  test('the leader hands its streams to the star that reaches the store; appends sent to either star are acknowledged again during the cut', async () => {
    const url = (i: number): string => stars[i].baseUrl;
    assert.equal((await request(url(0), 'POST', '/v1/buckets/part', {}, REQUEST_MS_MAX)).status, 201);
    assert.equal((await request(url(0), 'POST', '/v1/streams/part/s', {}, REQUEST_MS_MAX)).status, 201);
    const L = (await holderOf('s')) === 'star-1' ? 1 : 0;
    const F = 1 - L;
    // One producer on each star: the follower's appends hop to the leader.
    const onLeader = produce(() => url(L), '/v1/streams/part/s', REQUEST_MS_MAX, 'l');
    const onFollower = produce(() => url(F), '/v1/streams/part/s', REQUEST_MS_MAX, 'f');
    const ackedCount = (): number => onLeader.acked.size + onFollower.acked.size;
    try {
      await until('appends acknowledged', () => onLeader.acked.size >= 10 && onFollower.acked.size >= 10);
      await relays[L].cut('refuse');
      await until('a group commit to fail against the leader\'s cut S3', () => [...onLeader.refused.values(), ...onFollower.refused.values()].some((e) => /the commit failed/.test(e)));
      const leaderAcked = onLeader.acked.size;
      const followerAcked = onFollower.acked.size;
      // The cut lasts: appends on both stars are acknowledged again by the star that reaches S3.
      await until('appends sent to either star acknowledged again while the leader\'s S3 is cut',
        () => onLeader.acked.size >= leaderAcked + 10 && onFollower.acked.size >= followerAcked + 10, RECOVERY_WAIT_MS_MAX);
      assert.equal(await holderOf('s'), `star-${F}`, 'the star that reaches the store leads the stream');
    } finally {
      await relays[L].restore();
      await onLeader.stop();
      await onFollower.stop();
    }
    assert.deepEqual([...onLeader.anomalies, ...onFollower.anomalies], []);
    assert.deepEqual([...onLeader.unknown, ...onFollower.unknown], [], 'every append was answered');

    for (const i of [L, F]) {
      const seqOf = await readBack(url(i), '/v1/streams/part/s', REQUEST_MS_MAX);
      for (const p of [onLeader, onFollower]) {
        for (const [body, seq] of p.acked) assert.equal(seqOf.get(body), seq, `acknowledged ${body} at ${seq}`);
        assert.deepEqual([...p.refused.keys()].filter((b) => seqOf.has(b)), [], 'refused appends are not in the stream');
      }
      assert.equal(seqOf.size, ackedCount(), 'nothing but the acknowledged appends');
    }
  });
});
