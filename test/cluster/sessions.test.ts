// Producer sessions (gRPC AppendSession) on two real stars sharing PostgreSQL and s3rver: a session
// opened on a vacant stream makes its star the leader, as an append does (spec: States, writers make a
// leader), and a session whose stream is drained away ends retryable (UNAVAILABLE) and continues after
// a reopen, rather than NOT_FOUND, which tells a client the stream is gone.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { postgresSkipReason } from '../helpers/postgres.ts';
import { sleep } from '../crash/fault-kit.ts';
import { call as grpcCall, connect, type Clients } from '../grpc/client.ts';
import type { AppendSessionResponse__Output } from '../../src/gen/svc/v1/AppendSessionResponse.ts';
import { request, startCluster, type TestCluster } from './kit.ts';

const skip = await postgresSkipReason();

const BUCKET = 'ps';
/** Short, so a stream goes vacant within the test (default 10 s). */
const LEASE_IDLE_MS = 300;
/** How long a wait for a stream's state may take before the test gives up on it. */
const WAIT_MS_MAX = 20_000;
const REQUEST_MS_MAX = 10_000;

interface Opened {
  acks: AppendSessionResponse__Output[];
  /** The session's end: OK (undefined) or its error. */
  ended: Promise<grpc.ServiceError | undefined>;
  stream: ReturnType<Clients['data']['AppendSession']>;
  acked(n: number): Promise<void>;
}

function session(clients: Clients, key: string, body: string): Opened {
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
  stream.write({ batch: { records: [{ body: Buffer.from(body) }] } });
  const acked = (n: number): Promise<void> => (acks.length >= n ? Promise.resolve() : new Promise((resolve) => { waiters.push({ n, resolve }); }));
  return { acks, ended, stream, acked };
}

describe('cluster: producer sessions', { skip }, () => {
  let c: TestCluster;
  const clients: Clients[] = [];
  const byAddress = new Map<string, Clients>();
  before(async () => {
    c = await startCluster(2, ['--lease-idle-ms', String(LEASE_IDLE_MS)]);
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

  /** Who leads the stream, as the admin view says ('' when vacant). */
  const leaderOf = async (key: string): Promise<string> =>
    (await grpcCall(clients[0].admin.GetStreamDetail.bind(clients[0].admin), { bucket: BUCKET, key: Buffer.from(key) }) as { leader_star_id: string }).leader_star_id;

  /** A session opened at star `at`, following a NOT_OWNER to the leader once, as a client does. */
  async function openFollowing(at: number, key: string, body: string): Promise<Opened> {
    const s = session(clients[at], key, body);
    const first = await Promise.race([s.acked(1).then(() => undefined), s.ended]);
    if (first === undefined) return s;
    assert.equal(first.code, grpc.status.FAILED_PRECONDITION, `${first.code} ${first.details}`);
    assert.match(first.details, /^NOT_OWNER/);
    const leader = byAddress.get(String(first.metadata.get('svcd-leader-grpc')[0]));
    assert.ok(leader, `NOT_OWNER names a star of the cluster: ${first.metadata.get('svcd-leader-grpc')[0]}`);
    const again = session(leader, key, body);
    const second = await Promise.race([again.acked(1).then(() => undefined), again.ended]);
    assert.equal(second, undefined, `the leader NOT_OWNER named acks the session: ${second?.code} ${second?.details}`);
    return again;
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
  });
});
