// Split brain: a leader paused past its lease (SIGSTOP) while another star takes the stream over, and
// a leader whose PostgreSQL sessions are cut (pg_terminate_backend), both under load. What the old
// leader had in flight must not be acknowledged unless it committed under its epoch, and nothing it
// writes late may ever become visible: the recorded history must check out, and every acknowledged
// record reads back at its position from every star.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import pg from 'pg';
import { postgresSkipReason } from '../helpers/postgres.ts';
import { Recorder, appendFailure, checkHistory } from '../helpers/history.ts';
import { sleep, until } from '../crash/fault-kit.ts';
import { clusterForSuite, readBackRecorded, request, TEST_LEASE_TTL_MS, type TestCluster } from './kit.ts';
import { clusterApplicationName } from '../../src/storage/metadata/postgres-cluster.ts';

const skip = await postgresSkipReason();

/** One request's longest wait: a paused leader holds its callers this long before they give up. */
const REQUEST_MS_MAX = 4000;
/** The frozen-leader test's bound on a hop's answer: under the hop's own 30 s timeout, far above the
 *  stale-heartbeat check that should end it (STAR_GONE_AFTER_MS, 2 s). */
const FROZEN_HOP_ANSWER_MS_MAX = 20_000;
/** How long a takeover (stale heartbeat, lapsed lease, the stream loaded from PostgreSQL and S3) and
 *  its first acknowledged append may take before the test calls it stuck: a liveness bound. */
const TAKEOVER_WAIT_MS_MAX = 30_000;


/** Producers appending one record at a time to `stream` through the stars `via()` names, recorded. */
function produce(c: TestCluster, rec: Recorder, stream: string, producers: number, via: (p: number) => number): { stop(): Promise<void>; acked: () => { star: number; sentAt: number; at: number }[] } {
  let stopping = false;
  let n = 0;
  const acked: { star: number; sentAt: number; at: number }[] = [];
  const loops = Array.from({ length: producers }, async (_, p) => {
    while (!stopping) {
      const star = via(p);
      const bodies = [`${stream}-p${p}-${n++}`];
      const h = rec.begin('append', { stream, bodies, client: `p${p}@${star}` });
      const sentAt = Date.now();
      try {
        const a = await request(c.url(star), 'POST', `/v1/streams/sb/${stream}/records`, { records: bodies.map((body) => ({ body })) }, REQUEST_MS_MAX);
        if (a.status === 200) {
          h.end({ status: 'ok', start: a.body.start.seq_num, end: a.body.end.seq_num, tail: a.body.tail.seq_num });
          acked.push({ star, sentAt, at: Date.now() });
        } else { h.end(appendFailure(a.status, JSON.stringify(a.body))); await sleep(50); }
      } catch (err) {
        h.end(appendFailure(undefined, (err as Error).message));
        await sleep(50);
      }
    }
  });
  return { stop: async () => { stopping = true; await Promise.all(loops); }, acked: () => acked };
}

/** Reads `stream` whole from every star, recorded; then the history must check out. */
async function verify(c: TestCluster, rec: Recorder, stream: string): Promise<void> {
  await readBackRecorded(c, rec, 'sb', stream, REQUEST_MS_MAX);
  const violations = checkHistory(rec.history(), { complete: true });
  assert.deepEqual(violations, [], violations.slice(0, 20).join('\n'));
}

describe('split brain', { skip, timeout: 240_000 }, () => {
  const suite = clusterForSuite();
  let c: TestCluster;
  let sql: pg.Client;
  before(async () => {
    ({ c, sql } = suite);
    assert.equal((await request(c.url(0), 'POST', '/v1/buckets/sb', {}, REQUEST_MS_MAX)).status, 201);
  });

  const leaderOf = async (stream: string): Promise<{ idx: number; epoch: number }> => {
    const r = await sql.query<{ holder: string; epoch: string }>(`SELECT holder, epoch FROM ${c.schema}.leases WHERE bucket = 'sb' AND key = $1`, [Buffer.from(stream)]);
    return { idx: Number(r.rows[0].holder.replace('star-', '')), epoch: Number(r.rows[0].epoch) };
  };

  test('a leader paused past its lease (SIGSTOP): another star takes over, and the paused one acknowledges nothing it did not commit under its epoch', async () => {
    assert.equal((await request(c.url(0), 'POST', '/v1/streams/sb/paused', {}, REQUEST_MS_MAX)).status, 201);
    const first = await leaderOf('paused');
    const other = (first.idx + 1) % 3;
    const rec = new Recorder();
    // Half the producers write to the leader directly (they will be in flight when it stops), half
    // through another star.
    const load = produce(c, rec, 'paused', 6, (p) => (p % 2 === 0 ? first.idx : other));
    await sleep(1000);
    const leader = c.stars[first.idx];
    leader.proc.kill('SIGSTOP');
    const stoppedAt = Date.now();
    // At least past the lease (twice over), and on until the new leader has acknowledged an append:
    // a loaded machine may take longer to see the heartbeat go stale, take the lease and load the stream.
    await sleep(TEST_LEASE_TTL_MS * 2 + 2500);
    // Sent after the pause began: an answer the old leader gave just before it stopped does not count.
    await until('an append acknowledged by the new leader while the old one is paused',
      () => load.acked().some((a) => a.star !== first.idx && a.sentAt > stoppedAt), TAKEOVER_WAIT_MS_MAX);
    leader.proc.kill('SIGCONT');
    const contAt = Date.now();
    await sleep(2000);
    await load.stop();
    const now = await leaderOf('paused');
    assert.notEqual(now.idx, first.idx, 'the lease moved while the leader was paused');
    assert.ok(now.epoch > first.epoch, 'with a higher epoch');
    assert.ok(load.acked().some((a) => a.star !== first.idx && a.sentAt > stoppedAt && a.at < contAt), 'appends were acknowledged by the new leader meanwhile');
    await verify(c, rec, 'paused');
  });

  test('a frozen leader does not hold the callers of other stars: a hop to it ends once its heartbeat goes stale, and the retry is served by the next leader', async () => {
    assert.equal((await request(c.url(0), 'POST', '/v1/streams/sb/frozen', {}, REQUEST_MS_MAX)).status, 201);
    assert.equal((await request(c.url(0), 'POST', '/v1/streams/sb/frozen/records', { records: [{ body: 'f0' }] }, REQUEST_MS_MAX)).status, 200);
    const first = await leaderOf('frozen');
    const other = (first.idx + 1) % 3;
    const leader = c.stars[first.idx];
    leader.proc.kill('SIGSTOP');
    try {
      // Sent at once, while the frozen star's lease still runs: it hops there. Its answer must come
      // while the leader stays frozen (a hop's own timeout, PROXY_HEAD_MS_MAX, is 30 s).
      const tail = await request(c.url(other), 'GET', '/v1/streams/sb/frozen/records/tail', undefined, FROZEN_HOP_ANSWER_MS_MAX);
      assert.ok(tail.status === 503 || tail.status === 200, `${tail.status} ${JSON.stringify(tail.body)}`);
      let a = await request(c.url(other), 'POST', '/v1/streams/sb/frozen/records', { records: [{ body: 'f1' }] }, FROZEN_HOP_ANSWER_MS_MAX);
      const retryUntil = Date.now() + TAKEOVER_WAIT_MS_MAX;
      while (a.status === 503 && Date.now() < retryUntil) {
        await sleep(100);
        a = await request(c.url(other), 'POST', '/v1/streams/sb/frozen/records', { records: [{ body: 'f1' }] }, FROZEN_HOP_ANSWER_MS_MAX);
      }
      assert.equal(a.status, 200, JSON.stringify(a.body));
      assert.equal(a.body.start.seq_num, 1, 'the next leader continues after the acknowledged record');
    } finally {
      leader.proc.kill('SIGCONT');
    }
  });

  test('a leader whose PostgreSQL sessions are terminated under load: nothing acknowledged is lost or reordered', async () => {
    assert.equal((await request(c.url(1), 'POST', '/v1/streams/sb/cut', {}, REQUEST_MS_MAX)).status, 201);
    const first = await leaderOf('cut');
    const rec = new Recorder();
    const load = produce(c, rec, 'cut', 4, (p) => (first.idx + p) % 3);
    let cut = 0;
    for (let k = 0; k < 3; k++) {
      await sleep(700);
      // The leader as of now (a cut may have moved the lease), and every session of its commit pool.
      const leader = (await leaderOf('cut')).idx;
      // Named by schema and star id, so another test's cluster on the same server is left alone.
      const r = await sql.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, [clusterApplicationName(c.schema, `star-${leader}`)]);
      cut += r.rowCount ?? 0;
    }
    assert.ok(cut >= 1, 'the leader had sessions to cut');
    const ackedAfterCuts = load.acked().length;
    await until('appends acknowledged after the last cut', () => load.acked().length > ackedAfterCuts + 10, TAKEOVER_WAIT_MS_MAX);
    await load.stop();
    await verify(c, rec, 'cut');
  });
});
