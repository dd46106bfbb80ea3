// Drain and Decommission on three real stars under load, and a rolling restart: a drained star hands
// its leases to the others (taken with the next epoch) and takes no more; a decommissioned one leaves
// the membership; the last active star cannot go. Every operation is recorded and the history checker
// must pass; every append that failed failed with a 503 a retry absorbs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import pg from 'pg';
import { postgresSkipReason } from '../helpers/postgres.ts';
import { Recorder, appendFailure, checkHistory } from '../helpers/history.ts';
import { rng as makeRng } from '../helpers/rng.ts';
import { sleep } from '../crash/fault-kit.ts';
import { call as grpcCall, connect, failure } from '../grpc/client.ts';
import { assertKnownOutcomes, clusterForSuite, knownOutcomeProducers, readBackRecorded, request, startCluster, type TestCluster } from './kit.ts';

const skip = await postgresSkipReason();

/** One request's longest wait: past it the append counts as ambiguous. */
const REQUEST_MS_MAX = 10_000;
const STREAMS = ['d0', 'd1', 'd2', 'd3', 'd4', 'd5'];
const PRODUCERS = 4;
/** How long appends may make no progress after a star comes back before the test calls it stuck. A
 *  restarted star's first forwards are cold (JIT, connections, a leader lookup), and CI runs three
 *  test files at once on two cores, so this is a liveness bound, not a speed target. A request that
 *  hangs instead is caught by `verify`: it ends without an answer, which is not a 503. */
const PROGRESS_WAIT_MS_MAX = 15_000;

interface Load {
  rec: Recorder;
  /** Stars producers may send to (a star being restarted is taken out, as a load balancer would). */
  up: boolean[];
  /** Non-200 answers, by status (0: no answer). */
  failures: Map<number, number>;
  /** Why the appends that got no answer got none. */
  reasons: string[];
  acked(): number;
  stop(): Promise<void>;
}

function produce(c: TestCluster, bucket: string, seed: number): Load {
  const rng = makeRng(seed);
  const rec = new Recorder();
  const up = c.stars.map(() => true);
  const failures = new Map<number, number>();
  const reasons: string[] = [];
  let acked = 0;
  let stopping = false;
  const t0 = performance.now();
  let n = 0;
  const loops = Array.from({ length: PRODUCERS }, async (_, p) => {
    while (!stopping) {
      const stream = STREAMS[Math.floor(rng() * STREAMS.length)];
      const alive = up.flatMap((u, i) => (u ? [i] : []));
      const star = alive[Math.floor(rng() * alive.length)];
      const bodies = [`p${p}-${n++}`];
      const h = rec.begin('append', { stream, bodies, client: `p${p}@${star}` });
      try {
        const a = await request(c.url(star), 'POST', `/v1/streams/${bucket}/${stream}/records`, { records: bodies.map((body) => ({ body })) }, REQUEST_MS_MAX);
        if (a.status === 200) {
          h.end({ status: 'ok', start: a.body.start.seq_num, end: a.body.end.seq_num, tail: a.body.tail.seq_num });
          acked += 1;
        } else {
          h.end(appendFailure(a.status, JSON.stringify(a.body)));
          failures.set(a.status, (failures.get(a.status) ?? 0) + 1);
          await sleep(50);
        }
      } catch (err) {
        h.end(appendFailure(undefined, (err as Error).message));
        failures.set(0, (failures.get(0) ?? 0) + 1);
        reasons.push(`${stream}@star-${star} at ${Math.round(performance.now() - t0)} ms: ${(err as Error).message} ${String((err as Error).cause ?? '')}`);
        await sleep(50);
      }
    }
  });
  return { rec, up, failures, reasons, acked: () => acked, stop: async () => { stopping = true; await Promise.all(loops); } };
}

/** Waits until some append is acknowledged past `ackedBefore`; fails, with what the producers met, if
 *  none is within PROGRESS_WAIT_MS_MAX. */
async function assertProgress(load: Load, ackedBefore: number, what: string): Promise<void> {
  const since = performance.now();
  while (load.acked() === ackedBefore && performance.now() - since < PROGRESS_WAIT_MS_MAX) await sleep(20);
  assert.ok(load.acked() > ackedBefore, `${what} (failures by status ${JSON.stringify([...load.failures])}; ${load.reasons.join('; ')})`);
}

async function verify(c: TestCluster, load: Load, bucket: string): Promise<void> {
  for (const s of STREAMS) await readBackRecorded(c, load.rec, bucket, s, REQUEST_MS_MAX);
  const violations = checkHistory(load.rec.history(), { complete: true });
  assert.deepEqual(violations, [], violations.slice(0, 20).join('\n'));
  const other = [...load.failures].filter(([status]) => status !== 503);
  assert.deepEqual(other, [], `every failed append was a 503 (${JSON.stringify([...load.failures])}; ${load.reasons.join('; ')})`);
}

describe('drain, decommission and a rolling restart', { skip, timeout: 240_000 }, () => {
  const suite = clusterForSuite();
  let c: TestCluster;
  let sql: pg.Client;
  before(() => { ({ c, sql } = suite); });

  /** Unexpired leases star `i` holds. */
  const leasesOf = async (i: number): Promise<number> => Number((await sql.query<{ n: string }>(
    `SELECT count(*) AS n FROM ${c.schema}.leases WHERE holder = $1 AND expires_at > clock_timestamp()`, [`star-${i}`])).rows[0].n);

  async function setUp(bucket: string): Promise<void> {
    assert.equal((await request(c.url(0), 'POST', `/v1/buckets/${bucket}`, {}, REQUEST_MS_MAX)).status, 201);
    for (const s of STREAMS) assert.equal((await request(c.url(1), 'POST', `/v1/streams/${bucket}/${s}`, {}, REQUEST_MS_MAX)).status, 201);
  }

  test('a drained star hands its leases over and takes no more; a decommissioned one leaves; the last active star cannot go', async () => {
    await setUp('dr');
    const load = produce(c, 'dr', 7);
    const at0 = connect(await c.grpcPort(0));
    const at2 = connect(await c.grpcPort(2));
    try {
      await sleep(1000);
      assert.ok(await leasesOf(1) > 0, 'star-1 leads some streams before the drain');
      // Drain star-1, asked at star-0: it answers once star-1 holds no lease.
      const drained = await grpcCall(at0.admin.Drain.bind(at0.admin), { star_id: 'star-1' }) as { leases_moved: number | string };
      assert.ok(Number(drained.leases_moved) > 0, 'it handed leases over');
      assert.equal(await leasesOf(1), 0);
      const stars = await grpcCall(at2.admin.ListStars.bind(at2.admin), {}) as { stars: { star_id: string; state: string }[] };
      assert.equal(stars.stars.find((s) => s.star_id === 'star-1')?.state, 'STAR_STATE_DRAINING');
      await assertProgress(load, load.acked(), 'appends go on, through the drained star too');
      await sleep(1000);
      assert.equal(await leasesOf(1), 0, 'a draining star takes no lease');

      // Decommission star-2, asked at itself: it leaves the membership and leads nothing.
      await grpcCall(at2.admin.Decommission.bind(at2.admin), { star_id: '' });
      assert.equal(await leasesOf(2), 0);
      const left = await grpcCall(at0.admin.ListStars.bind(at0.admin), {}) as { stars: { star_id: string }[] };
      assert.deepEqual(left.stars.map((s) => s.star_id).sort(), ['star-0', 'star-1']);

      // star-0 is the last active star: it cannot be drained or decommissioned.
      for (const verb of ['Drain', 'Decommission'] as const) {
        const err = await failure(at0.admin[verb].bind(at0.admin), { star_id: '' });
        assert.equal(err.code, grpc.status.FAILED_PRECONDITION, `${verb}: ${err.details}`);
        assert.match(err.details, /last active star/);
      }
      await sleep(500);
    } finally {
      await load.stop();
      at0.close();
      at2.close();
    }
    assert.ok(await leasesOf(1) === 0 && await leasesOf(2) === 0, 'only star-0 leads');
    await verify(c, load, 'dr');
    // Restarted, the drained star is active again; the decommissioned one stays out.
    for (const i of [1, 2]) {
      await c.stars[i].stop();
      await c.restart(i);
    }
    const at1 = connect(await c.grpcPort(1));
    try {
      const stars = await grpcCall(at1.admin.ListStars.bind(at1.admin), {}) as { stars: { star_id: string; state: string }[] };
      assert.deepEqual(stars.stars.map((s) => `${s.star_id} ${s.state}`).sort(), ['star-0 STAR_STATE_ACTIVE', 'star-1 STAR_STATE_ACTIVE']);
    } finally {
      at1.close();
    }
  });

  test('a drain that finds a stream never quiet hands it over at its bound, quiesced first: every ack holds and no append answered 503 is in the stream', async () => {
    // The stream's leader takes appends from producers that never pause, so it is never quiet (a
    // cluster star acks only once a chunk is in S3: some append is always in flight). After
    // DRAIN_HANDOFF_MS_MAX the drain hands it over anyway: those already sequenced commit and are
    // acknowledged first, new ones are refused (503, never appended). Producers talk to the leader
    // itself, so a 503 is its own refusal and every outcome is known.
    assert.equal((await request(c.url(0), 'POST', '/v1/streams/dr/busy', {}, REQUEST_MS_MAX)).status, 201);
    assert.equal((await request(c.url(0), 'POST', '/v1/streams/dr/busy/records', { records: [{ body: 'first' }] }, REQUEST_MS_MAX)).status, 200);
    const holder = (await sql.query<{ holder: string }>(`SELECT holder FROM ${c.schema}.leases WHERE bucket = 'dr' AND key = $1`, [Buffer.from('busy')])).rows[0].holder;
    const leader = Number(holder.replace('star-', ''));
    const other = leader === 0 ? 1 : 0; // star-2 was decommissioned above
    const load = knownOutcomeProducers(c.url(leader), 'dr', 'busy', 8, REQUEST_MS_MAX);
    load.acked.set('first', 0);
    const admin = connect(await c.grpcPort(other));
    try {
      await sleep(300);
      await grpcCall(admin.admin.Drain.bind(admin.admin), { star_id: holder });
    } finally {
      await load.stop();
      admin.close();
    }
    assert.match(c.stars[leader].output(), /stream\(s\) still busy after \d+ ms: quiesced/, 'the drain reached its bound with the stream busy');
    await assertKnownOutcomes(c.url(other), 'dr', 'busy', load.acked, load.refused, REQUEST_MS_MAX);
  });
});

describe('a rolling restart', { skip, timeout: 240_000 }, () => {
  let c: TestCluster;
  before(async () => { c = await startCluster(3); });
  after(async () => { await c?.close(); });

  test('each star in turn is drained, stopped and started again under load: nothing is lost, only 503s fail', async () => {
    assert.equal((await request(c.url(0), 'POST', '/v1/buckets/rr', {}, REQUEST_MS_MAX)).status, 201);
    for (const s of STREAMS) assert.equal((await request(c.url(1), 'POST', `/v1/streams/rr/${s}`, {}, REQUEST_MS_MAX)).status, 201);
    const load = produce(c, 'rr', 11);
    try {
      await sleep(800);
      for (let i = 0; i < 3; i++) {
        const next = (i + 1) % 3;
        const admin = connect(await c.grpcPort(next));
        try {
          await grpcCall(admin.admin.Drain.bind(admin.admin), { star_id: `star-${i}` });
          load.up[i] = false; // out of the load balancer, then stopped
          await c.stars[i].stop();
          // A star that stopped on purpose leaves the live membership at once, not when its heartbeat ages.
          const stars = await grpcCall(admin.admin.ListStars.bind(admin.admin), {}) as { stars: { star_id: string }[] };
          assert.ok(!stars.stars.some((st) => st.star_id === `star-${i}`), `star-${i} left: ${JSON.stringify(stars.stars)}`);
        } finally {
          admin.close();
        }
        await c.restart(i);
        load.up[i] = true;
        const before = load.acked();
        await assertProgress(load, before, `appends go on after star-${i} came back`);
        await sleep(800);
      }
    } finally {
      await load.stop();
    }
    await verify(c, load, 'rr');
  });
});
