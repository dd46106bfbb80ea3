// Producer sessions (gRPC AppendSession) on two real stars sharing PostgreSQL and s3rver: a session
// opened on a vacant stream makes its star the leader, as an append does (spec: States, writers make a
// leader), and a session whose stream is drained away ends retryable (UNAVAILABLE) and continues after
// a reopen, rather than NOT_FOUND, which tells a client the stream is gone; and a session's leader
// SIGKILLed: the reopen takes the stream over, and every acknowledged batch is there, on the survivor
// and on the killed star restarted on a wiped data dir.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { postgresSkipReason } from '../helpers/postgres.ts';
import { sleep } from '../crash/fault-kit.ts';
import { call as grpcCall, connect, type Clients } from '../grpc/client.ts';
import type { AppendSessionResponse__Output } from '../../src/gen/svc/v1/AppendSessionResponse.ts';
import { GrpcClient } from '../../src/client/grpc/client.ts';
import { request, startCluster, type TestCluster } from './kit.ts';

const skip = await postgresSkipReason();

const BUCKET = 'ps';
/** Short, so a stream goes vacant within the test (default 10 s). */
const LEASE_IDLE_MS = 300;
/** How long a wait for a stream's state may take before the test gives up on it. */
const WAIT_MS_MAX = 20_000;
const REQUEST_MS_MAX = 10_000;
/** How long reopens may keep being refused after the leader's SIGKILL (its lease and heartbeat must
 *  run out first; a loaded machine stretches both). A bound, not a speed. */
const TAKEOVER_WAIT_MS_MAX = 60_000;

interface Opened {
  acks: AppendSessionResponse__Output[];
  /** The session's end: OK (undefined) or its error. */
  ended: Promise<grpc.ServiceError | undefined>;
  stream: ReturnType<Clients['data']['AppendSession']>;
  acked(n: number): Promise<void>;
}

function session(clients: Clients, key: string, body: string, match?: number): Opened {
  const stream = clients.data.AppendSession();
  const acks: AppendSessionResponse__Output[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const ended = new Promise<grpc.ServiceError | undefined>((resolve) => {
    stream.on('data', (a: AppendSessionResponse__Output) => {
      acks.push(a);
      for (const w of waiters.filter((x) => acks.length >= x.n)) w.resolve();
    });
    stream.once('error', (e: grpc.ServiceError) => resolve(e));
    stream.once('end', () => resolve(undefined));
  });
  stream.write({ open: { bucket: BUCKET, key: Buffer.from(key) } });
  stream.write({ batch: { records: [{ body: Buffer.from(body) }], ...(match !== undefined ? { match_seq_num: match } : {}) } });
  const acked = (n: number): Promise<void> => (acks.length >= n ? Promise.resolve() : new Promise((resolve) => { waiters.push({ n, resolve }); }));
  return { acks, ended, stream, acked };
}

describe('cluster: producer sessions', { skip }, () => {
  let c: TestCluster;
  const clients: Clients[] = [];
  const byAddress = new Map<string, Clients>();
  before(async () => {
    // A leader lets a stream go only once it has settled: settling soon keeps the waits for vacancy short.
    c = await startCluster(2, ['--lease-idle-ms', String(LEASE_IDLE_MS), '--wal-settle-after-ms', '1000']);
    for (let i = 0; i < 2; i++) {
      const port = await c.grpcPort(i);
      clients.push(connect(port));
      byAddress.set(`127.0.0.1:${port}`, clients[i]);
    }
    assert.equal((await request(c.url(0), 'POST', `/v1/buckets/${BUCKET}`, { create_stream_on_append: true }, REQUEST_MS_MAX)).status, 201);
  });
  after(async () => {
    for (const cl of clients) cl.close();
    await c?.close();
  });

  /** Restarts star i (a drained one comes back active; `fresh`: on a wiped data dir) and reconnects to it. */
  async function restartStar(i: number, fresh = false): Promise<void> {
    if (c.stars[i].proc.exitCode === null && c.stars[i].proc.signalCode === null) await c.stars[i].kill();
    clients[i].close();
    await c.restart(i, fresh);
    const port = await c.grpcPort(i);
    clients[i] = connect(port);
    byAddress.set(`127.0.0.1:${port}`, clients[i]);
  }

  /** Who leads the stream, as the admin view says ('' when vacant). */
  const leaderOf = async (key: string): Promise<string> =>
    (await grpcCall(clients[0].admin.GetStreamDetail.bind(clients[0].admin), { bucket: BUCKET, key: Buffer.from(key) }) as { leader_star_id: string }).leader_star_id;

  /** A session opened at star `at`, following NOT_OWNER to the star it names, as a client does. Two
   *  stars whose membership views differ for a moment may name each other (NOT_OWNER is convergible),
   *  so the following goes on until an ack, for at most WAIT_MS_MAX; every refusal must be NOT_OWNER. */
  async function openFollowing(at: number, key: string, body: string): Promise<Opened> {
    const deadline = Date.now() + WAIT_MS_MAX;
    let target = clients[at];
    for (;;) {
      const s = session(target, key, body);
      const end = await Promise.race([s.acked(1).then(() => undefined), s.ended]);
      if (end === undefined) return s;
      assert.equal(end.code, grpc.status.FAILED_PRECONDITION, `${end.code} ${end.details}`);
      assert.match(end.details, /^NOT_OWNER/);
      const leader = byAddress.get(String(end.metadata.get('svcd-leader-grpc')[0]));
      assert.ok(leader, `NOT_OWNER names a star of the cluster: ${end.metadata.get('svcd-leader-grpc')[0]}`);
      assert.ok(Date.now() < deadline, `the star NOT_OWNER named acks the session: ${end.details}`);
      target = leader;
      await sleep(100);
    }
  }

  async function untilVacant(key: string): Promise<void> {
    const deadline = Date.now() + WAIT_MS_MAX;
    while ((await leaderOf(key)) !== '') {
      assert.ok(Date.now() < deadline, `${key} went vacant`);
      await sleep(100);
    }
  }

  test('a session opened on a vacant stream takes its lease and appends, at either star', async () => {
    for (const at of [0, 1]) {
      const key = `vacant-${at}`;
      assert.equal((await request(c.url(0), 'POST', `/v1/streams/${BUCKET}/${key}/records`, { records: [{ body: 'first' }] }, REQUEST_MS_MAX)).status, 200);
      await untilVacant(key);
      const s = await openFollowing(at, key, 'by session');
      assert.equal(Number(s.acks[0].start?.seq_num), 1, 'the session appends after the record before it');
      assert.notEqual(await leaderOf(key), '', 'the session made a leader');
      s.stream.end();
      assert.equal(await s.ended, undefined, 'the session ends OK once the client is done');
    }
  });

  test('the TypeScript client follows NOT_OWNER: its producer and reads asked at the other star land on the leader', async () => {
    for (const key of ['client-a', 'client-b', 'client-c', 'client-d']) {
      assert.equal((await request(c.url(0), 'POST', `/v1/streams/${BUCKET}/${key}/records`, { records: [{ body: 'r0' }] }, REQUEST_MS_MAX)).status, 200);
      const leader = await leaderOf(key);
      const other = leader === 'star-0' ? 1 : 0;
      const g = new GrpcClient({ address: `127.0.0.1:${await c.grpcPort(other)}` });
      try {
        const a = { bucket: BUCKET, key };
        // No match_seq_num: only a definite refusal may be sent again, and NOT_OWNER is one.
        const p = g.producer(a, { lingerMs: 0, retry: { backoffMsMin: 20, backoffMsMax: 200 } });
        const acks = [];
        for (let i = 1; i <= 20; i++) acks.push((await p.submit({ body: `r${i}` })).ack());
        await p.close();
        assert.deepEqual((await Promise.all(acks)).map((x) => x.seq_num), Array.from({ length: 20 }, (_, i) => i + 1));
        // Its home leads it, or nobody once it went idle; the star the client asked does not.
        assert.notEqual(await leaderOf(key), `star-${other}`, 'the stream stayed with its leader');
        assert.deepEqual((await g.readRange(a, 0, 100)).map((r) => Buffer.from(r.body).toString()), Array.from({ length: 21 }, (_, i) => `r${i}`));
        assert.equal((await g.checkTail(a)).seq_num, 21);
      } finally {
        g.close();
      }
    }
  });

  test('a drain ends the drained star\'s session with UNAVAILABLE (not NOT_FOUND); a reopen continues the stream', async () => {
    const key = 'drained';
    const s = await openFollowing(0, key, 'before');
    const leader = await leaderOf(key);
    const leaderIdx = Number(leader.replace('star-', ''));
    const other = 1 - leaderIdx;
    const drained = await grpcCall(clients[other].admin.Drain.bind(clients[other].admin), { star_id: leader }) as { leases_moved: number | string };
    assert.ok(Number(drained.leases_moved) >= 1, 'the drain moved the session\'s lease');
    const end = await s.ended;
    assert.equal(end?.code, grpc.status.UNAVAILABLE, `a moved stream is retryable: ${end?.code} ${end?.details}`);
    const again = await openFollowing(other, key, 'after');
    assert.equal(Number(again.acks[0].start?.seq_num), 1, 'the reopened session continues the stream');
    again.stream.end();
    assert.equal(await again.ended, undefined);
    // A page stops at the settled frontier (spec: Read query), so the stream is read page by page.
    const bodies: string[] = [];
    for (let seq = 0; ;) {
      const page = (await request(c.url(other), 'GET', `/v1/streams/${BUCKET}/${key}/records?seq_num=${seq}`, undefined, REQUEST_MS_MAX)).body as { records: { body: string }[]; tail: { seq_num: number } };
      bodies.push(...page.records.map((r) => r.body));
      seq += page.records.length;
      if (seq >= page.tail.seq_num) break;
    }
    assert.deepEqual(bodies, ['before', 'after']);
    await restartStar(leaderIdx); // active again, for the tests after this one
  });

  /** Every record of the stream, read page by page from star `at` (a page stops at the settled frontier). */
  async function readAll(at: number, key: string): Promise<string[]> {
    const bodies: string[] = [];
    for (let seq = 0; ;) {
      const r = await request(c.url(at), 'GET', `/v1/streams/${BUCKET}/${key}/records?seq_num=${seq}`, undefined, REQUEST_MS_MAX);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const page = r.body as { records: { body: string }[]; tail: { seq_num: number } };
      bodies.push(...page.records.map((x) => x.body));
      seq += page.records.length;
      if (seq >= page.tail.seq_num) return bodies;
    }
  }

  test('a session\'s leader SIGKILLed: a reopen at the survivor takes the stream over; every acked batch survives, also on the killed star restarted wiped', async () => {
    const key = 'killed';
    const s = await openFollowing(0, key, 'b0');
    const acked = ['b0'];
    for (let i = 1; i < 10; i++) s.stream.write({ batch: { records: [{ body: Buffer.from(`b${i}`) }], match_seq_num: i } });
    await s.acked(10);
    for (let i = 1; i < 10; i++) acked.push(`b${i}`);
    const leaderIdx = Number((await leaderOf(key)).replace('star-', ''));
    const survivor = 1 - leaderIdx;
    await c.stars[leaderIdx].kill();
    // Until the lease runs out and the dead star's heartbeat goes stale the survivor may refuse or
    // name the dead star; match_seq_num keeps every retry from appending twice.
    const deadline = Date.now() + TAKEOVER_WAIT_MS_MAX;
    for (;;) {
      assert.ok(Date.now() < deadline, 'a reopen at the survivor was acked');
      const again = session(clients[survivor], key, 'b10', 10);
      const end = await Promise.race([again.acked(1).then(() => undefined), again.ended]);
      if (end === undefined) {
        again.stream.end();
        assert.equal(await again.ended, undefined);
        break;
      }
      assert.ok([grpc.status.UNAVAILABLE, grpc.status.FAILED_PRECONDITION].includes(end.code), `a retryable refusal while the leader is dead: ${end.code} ${end.details}`);
      await sleep(250);
    }
    acked.push('b10');
    assert.deepEqual(await readAll(survivor, key), acked, 'the survivor serves every acked batch, once, in order');
    await restartStar(leaderIdx, true);
    assert.deepEqual(await readAll(leaderIdx, key), acked, 'so does the killed star, back on a wiped data dir');
  });
});
