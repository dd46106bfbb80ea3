// A cluster of three real stars on one PostgreSQL schema and one s3rver bucket: any star serves any
// request (the bridge hops to the leader), leases move when a leader dies, and nothing acknowledged is
// lost even when the dead star's data dir is never seen again; an SSE subscriber reconnects with its
// cursor to any star after its leader dies.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import pg from 'pg';
import { postgresSkipReason } from '../helpers/postgres.ts';
import { call, ok, sleep } from '../crash/fault-kit.ts';
import * as grpc from '@grpc/grpc-js';
import { call as grpcCall, connect, failure } from '../grpc/client.ts';
import { ListObjectsCommand, S3Client } from '@aws-sdk/client-s3';
import { assertKnownOutcomes, clusterForSuite, knownOutcomeProducers, TEST_EXPRESS_BUCKET, type TestCluster } from './kit.ts';

/** A sweep interval past any test's length: the sweep never runs in this file. */
const UNSETTLED_SWEEP_OFF_MS = 3_600_000;
/** Producers appending to one stream while it is handed to a new leadership this many times. */
const HANDOFF_PRODUCERS = 8;
const HANDOFF_PATCHES = 10;
/** One append's longest wait in that test (a bound on a hang, not a speed). */
const HANDOFF_REQUEST_MS_MAX = 30_000;
const skip = await postgresSkipReason();

interface Ack { start: { seq_num: number }; end: { seq_num: number } }

/** Reads a whole stream from star `url`, page by page. */
async function readAll(url: string, bucket: string, key: string): Promise<{ seq_num: number; body: string }[]> {
  const out: { seq_num: number; body: string }[] = [];
  for (;;) {
    const page = await ok(url, 'GET', `/v1/streams/${bucket}/${key}/records?seq_num=${out.length}`) as { records: { seq_num: number; body: string }[]; tail: { seq_num: number } };
    out.push(...page.records);
    if (page.records.length === 0 || out.length >= page.tail.seq_num) return out;
  }
}

/** How long the test waits for records it expects before it gives up. */
const DELIVERY_WAIT_MS_MAX = 30_000;

/** One SSE connection: the records it delivered, the last event id, and whether it ended. */
interface Sub { bodies: string[]; lastId: string; ended: Promise<void>; close(): void; refused?: string }

function subscribe(url: string, path: string, lastId?: string): Sub {
  const ctl = new AbortController();
  const sub: Sub = { bodies: [], lastId: lastId ?? '', ended: Promise.resolve(), close: () => ctl.abort() };
  sub.ended = (async () => {
    try {
      const res = await fetch(url + path, { headers: lastId ? { 'last-event-id': lastId } : {}, signal: ctl.signal });
      if (res.status !== 200) { sub.refused = `${res.status} ${await res.text()}`; return; }
      const decoder = new TextDecoder();
      let buf = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const frame = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const id = /^id: (.*)$/m.exec(frame)?.[1];
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (id !== undefined && data !== undefined && !/^event:/m.test(frame)) {
            const batch = JSON.parse(data) as { records: { body: string }[] };
            sub.bodies.push(...batch.records.map((r) => r.body));
            sub.lastId = id;
          }
        }
      }
    } catch { /* aborted, or the star went away: the stream simply ends */ }
  })();
  return sub;
}

async function until(cond: () => boolean, what: string, sub?: Sub): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    assert.equal(sub?.refused, undefined, `the subscription was refused: ${what}`);
    assert.ok(Date.now() - t0 < DELIVERY_WAIT_MS_MAX, `timed out waiting: ${what}`);
    await sleep(50);
  }
}

describe('a cluster of three stars', { skip }, () => {
  // No unsettled sweep during these tests: the express test asserts that reads of a vacant stream
  // take no lease, and the sweep would lead that stream (to settle it) the moment its lease ran out.
  // The sweep has tests of its own (unsettled-sweep.test.ts).
  const suite = clusterForSuite(['--unsettled-sweep-ms', String(UNSETTLED_SWEEP_OFF_MS)]);
  let c: TestCluster;
  let sql: pg.Client;
  before(() => { ({ c, sql } = suite); });

  test('any star serves any stream: the bridge hops to the leader, and one leader sequences', async () => {
    await ok(c.url(0), 'POST', '/v1/buckets/cb', {});
    await ok(c.url(1), 'POST', '/v1/streams/cb/s1', {});
    const acks: Ack[] = [];
    for (let i = 0; i < 9; i++) acks.push(await ok(c.url(i % 3), 'POST', '/v1/streams/cb/s1/records', { records: [{ body: `r${i}` }] }) as Ack);
    assert.deepEqual(acks.map((a) => a.start.seq_num), [0, 1, 2, 3, 4, 5, 6, 7, 8], 'dense positions in call order');
    for (let i = 0; i < 3; i++) {
      const recs = await readAll(c.url(i), 'cb', 's1');
      assert.deepEqual(recs.map((r) => r.body), acks.map((_, j) => `r${j}`), `star ${i} reads the same records`);
      const tail = await ok(c.url(i), 'GET', '/v1/streams/cb/s1/records/tail') as { seq_num: number };
      assert.equal(tail.seq_num, 9);
    }
    // A HEAD carries its GET's Content-Length (RFC 9110 8.6), also where it was relayed to the leader.
    const holder = (await sql.query<{ holder: string }>(`SELECT holder FROM ${c.schema}.leases WHERE bucket = 'cb' AND key = $1`, [Buffer.from('s1')])).rows[0].holder;
    const hopFrom = (Number(holder.replace('star-', '')) + 1) % 3;
    for (const path of ['/v1/streams/cb/s1/records?seq_num=0', '/v1/streams/cb/s1/records/tail']) {
      const got = await fetch(c.url(hopFrom) + path);
      const length = Number(got.headers.get('content-length'));
      assert.equal(length, (await got.arrayBuffer()).byteLength);
      assert.ok(length > 0);
      const head = await fetch(c.url(hopFrom) + path, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(Number(head.headers.get('content-length')), length, `HEAD ${path} from a star that hops`);
    }
    // An event stream relayed from the leader opens once (the leader's own opening comment is not repeated).
    const ac = new AbortController();
    const relayed = await fetch(c.url(hopFrom) + '/v1/streams/cb/s1/records/subscribe?seq_num=0', { signal: ac.signal });
    const reader = (relayed.body as ReadableStream<Uint8Array>).getReader();
    let opened = '';
    while (!opened.includes('\ndata: ')) {
      const { value, done } = await reader.read();
      if (done) break;
      opened += Buffer.from(value).toString();
    }
    ac.abort();
    assert.equal(opened.split(': open\n\n').length - 1, 1, JSON.stringify(opened.slice(0, 80)));
    assert.ok(opened.startsWith(': open\n\nid: '), JSON.stringify(opened.slice(0, 80)));
    const leases = await sql.query<{ holder: string; epoch: string }>(`SELECT holder, epoch FROM ${c.schema}.leases WHERE bucket = 'cb' AND key = $1`, [Buffer.from('s1')]);
    assert.equal(leases.rows.length, 1, 'one lease row for the stream');
    const listed = await ok(c.url(2), 'GET', '/v1/streams/cb') as { streams: { key: string }[] };
    assert.deepEqual(listed.streams.map((s) => s.key), ['s1'], 'any star lists from the shared store');
    // A deleted stream's committed chunks are forgotten with it.
    await ok(c.url(0), 'POST', '/v1/streams/cb/gone', {});
    const gone = await ok(c.url(0), 'POST', '/v1/streams/cb/gone/records', { records: [{ body: 'x' }] }) as Ack;
    assert.equal(gone.start.seq_num, 0);
    const id = (await ok(c.url(1), 'GET', '/v1/streams/cb/gone') as { stream_id: string }).stream_id;
    assert.equal((await sql.query(`SELECT 1 FROM ${c.schema}.chunks WHERE stream_id = $1`, [id])).rows.length, 1);
    assert.equal((await call(c.url(2), 'DELETE', '/v1/streams/cb/gone')).status, 204);
    assert.equal((await sql.query(`SELECT 1 FROM ${c.schema}.chunks WHERE stream_id = $1`, [id])).rows.length, 0);
  });

  test('one star at a time is the cluster\'s auditor, under its own lease', async () => {
    const auditor = async (): Promise<{ holder: string; live: boolean }[]> => (await sql.query<{ holder: string; live: boolean }>(
      `SELECT holder, expires_at > clock_timestamp() AS live FROM ${c.schema}.leases WHERE bucket = ''`)).rows;
    let rows = await auditor();
    for (let i = 0; i < 50 && !(rows.length === 1 && rows[0].live); i++) { await sleep(100); rows = await auditor(); }
    assert.equal(rows.length, 1, 'one auditor lease row');
    assert.ok(rows[0].live, 'held');
    assert.match(rows[0].holder, /^star-[012]$/);
  });

  test('leases spread over the live stars, though every request goes to one star', async () => {
    await ok(c.url(0), 'POST', '/v1/buckets/sp', {});
    for (let i = 0; i < 12; i++) {
      await ok(c.url(0), 'POST', `/v1/streams/sp/s${i}`, {});
      await ok(c.url(0), 'POST', `/v1/streams/sp/s${i}/records`, { records: [{ body: 'x' }] });
    }
    const holders = await sql.query<{ holder: string; n: string }>(`SELECT holder, count(*) AS n FROM ${c.schema}.leases WHERE bucket = 'sp' GROUP BY holder`);
    assert.ok(holders.rows.length >= 2, `leases on ${JSON.stringify(holders.rows)}`);
  });

  test('gRPC: a star that does not lead answers NOT_OWNER with the leader\'s address; ListStars shows the cluster', async () => {
    await ok(c.url(0), 'POST', '/v1/streams/cb/g1', {});
    const lease = await sql.query<{ holder: string }>(`SELECT holder FROM ${c.schema}.leases WHERE bucket = 'cb' AND key = $1`, [Buffer.from('g1')]);
    const leaderIdx = Number(lease.rows[0].holder.replace('star-', ''));
    const otherIdx = (leaderIdx + 1) % 3;
    const leaderPort = await c.grpcPort(leaderIdx);
    const other = connect(await c.grpcPort(otherIdx));
    const leader = connect(leaderPort);
    try {
      const err = await failure(other.data.GetStream.bind(other.data), { bucket: 'cb', key: Buffer.from('g1') });
      assert.equal(err.code, grpc.status.FAILED_PRECONDITION);
      assert.match(err.details, /^NOT_OWNER/);
      assert.equal(err.metadata.get('svcd-leader-star')[0], `star-${leaderIdx}`);
      assert.equal(err.metadata.get('svcd-leader-grpc')[0], `127.0.0.1:${leaderPort}`);
      const got = await grpcCall(leader.data.GetStream.bind(leader.data), { bucket: 'cb', key: Buffer.from('g1') }) as { info: { stream_id: string } };
      assert.ok(got.info.stream_id);
      const detail = await grpcCall(other.admin.GetStreamDetail.bind(other.admin), { bucket: 'cb', key: Buffer.from('g1') }) as { leader_star_id: string; lease_epoch: number };
      assert.equal(detail.leader_star_id, `star-${leaderIdx}`, 'GetStreamDetail names the leader');
      assert.ok(Number(detail.lease_epoch) >= 1, 'and its lease epoch');
      const summaries = await grpcCall(other.admin.ListStreamSummaries.bind(other.admin), { bucket: 'cb' }) as { streams: { key: Buffer; leader_star_id: string }[] };
      assert.ok(summaries.streams.length >= 2, 'summaries of every stream, from a star that leads none of them');
      const stars = await grpcCall(other.admin.ListStars.bind(other.admin), {}) as { stars: { star_id: string }[] };
      assert.deepEqual(stars.stars.map((s) => s.star_id).sort(), ['star-0', 'star-1', 'star-2']);
    } finally {
      other.close();
      leader.close();
    }
  });

  test('gRPC: a star that does not lead serves settled history (Read, ReadPlan) from what is committed; above the settled frontier it answers NOT_OWNER', async () => {
    await ok(c.url(0), 'POST', '/v1/streams/cb/hist', {});
    for (let i = 0; i < 5; i++) await ok(c.url(i % 3), 'POST', '/v1/streams/cb/hist/records', { records: [{ body: `h${i}` }] });
    const lease = async (): Promise<{ holder: string; epoch: string }> => (await sql.query<{ holder: string; epoch: string }>(
      `SELECT holder, epoch FROM ${c.schema}.leases WHERE bucket = 'cb' AND key = $1`, [Buffer.from('hist')])).rows[0];
    const held = await lease();
    const leaderIdx = Number(held.holder.replace('star-', ''));
    const leader = connect(await c.grpcPort(leaderIdx));
    const other = connect(await c.grpcPort((leaderIdx + 1) % 3));
    try {
      await grpcCall(leader.data.SettleStar.bind(leader.data), {});
      const settledAtMs = Date.now() + 1;
      await sleep(5); // h5 is stamped after settledAtMs: a time start there finds no settled record
      for (let i = 5; i < 7; i++) await ok(c.url(leaderIdx), 'POST', '/v1/streams/cb/hist/records', { records: [{ body: `h${i}` }] });
      const page = await grpcCall(other.data.Read.bind(other.data), { bucket: 'cb', key: Buffer.from('hist'), seq_num: 1 });
      assert.deepEqual(page.records.map((r) => Buffer.from(r.body).toString()), ['h1', 'h2', 'h3', 'h4'], 'settled history, cut at the settled frontier');
      assert.equal(Number(page.tail?.seq_num), 7, 'the committed tail, records the leader holds unsettled included');
      const byTime = await grpcCall(other.data.Read.bind(other.data), { bucket: 'cb', key: Buffer.from('hist'), tail_offset: 7 });
      assert.equal(byTime.records.length, 5, 'a tail_offset start in settled history');
      const atTail = await grpcCall(other.data.Read.bind(other.data), { bucket: 'cb', key: Buffer.from('hist'), tail_offset: 0 });
      assert.deepEqual([atTail.records.length, Number(atTail.tail?.seq_num)], [0, 7], 'caught up at the committed tail');
      const above = await failure(other.data.Read.bind(other.data), { bucket: 'cb', key: Buffer.from('hist'), seq_num: 5 });
      assert.equal(above.code, grpc.status.FAILED_PRECONDITION);
      assert.match(above.details, /^NOT_OWNER/, 'records above the settled frontier: the leader serves them');
      // A time start whose first record is unsettled is the leader's: never an empty page at the tail.
      const late = await failure(other.data.Read.bind(other.data), { bucket: 'cb', key: Buffer.from('hist'), timestamp_ms: settledAtMs });
      assert.match(late.details, /^NOT_OWNER/);
      const viaBridge = await ok(c.url((leaderIdx + 1) % 3), 'GET', `/v1/streams/cb/hist/records?timestamp_ms=${settledAtMs}`) as { records: { body: string }[] };
      assert.deepEqual(viaBridge.records.map((r) => r.body), ['h5', 'h6'], 'the bridge hops it to the leader');
      const plan = await grpcCall(other.data.ReadPlan.bind(other.data), { bucket: 'cb', key: Buffer.from('hist'), seq_num: 0 });
      assert.equal(plan.entries.length, 1);
      assert.equal(Number(plan.vended_until), 5);
      assert.deepEqual(await lease(), held, 'the leadership did not move');
    } finally {
      leader.close();
      other.close();
    }
  });

  test('a PATCH of the class is taken up by a new leadership (the epoch rises, appends go on); one that changes nothing keeps the lease', async () => {
    await ok(c.url(0), 'POST', '/v1/streams/cb/rc', {});
    for (const b of ['s0', 's1']) await ok(c.url(1), 'POST', '/v1/streams/cb/rc/records', { records: [{ body: b }] });
    const lease = async (): Promise<{ holder: string; epoch: number; live: boolean }> => {
      const r = await sql.query<{ holder: string; epoch: string; live: boolean }>(
        `SELECT holder, epoch, expires_at > clock_timestamp() AS live FROM ${c.schema}.leases WHERE bucket = 'cb' AND key = $1`, [Buffer.from('rc')]);
      return { holder: r.rows[0].holder, epoch: Number(r.rows[0].epoch), live: r.rows[0].live };
    };
    const first = await lease();
    const same = await ok(c.url(2), 'PATCH', '/v1/streams/cb/rc', { class: 'standard', retention_max_age_ms: 0 }) as { class: string };
    assert.equal(same.class, 'standard');
    assert.deepEqual(await lease(), first, 'a PATCH that changes nothing keeps the leadership');
    const changed = await ok(c.url(2), 'PATCH', '/v1/streams/cb/rc', { class: 'express' }) as { class: string };
    assert.equal(changed.class, 'express');
    assert.equal((await lease()).live, false, 'the old leadership let the stream go');
    const next = await ok(c.url(0), 'POST', '/v1/streams/cb/rc/records', { records: [{ body: 'e0' }] }) as Ack;
    assert.equal(next.start.seq_num, 2);
    const now = await lease();
    assert.ok(now.live && now.epoch > first.epoch, `a new leadership (${JSON.stringify(first)} -> ${JSON.stringify(now)})`);
    for (let i = 0; i < 3; i++) {
      assert.deepEqual((await readAll(c.url(i), 'cb', 'rc')).map((r) => r.body), ['s0', 's1', 'e0'], `star ${i}`);
      assert.equal((await ok(c.url(i), 'GET', '/v1/streams/cb/rc') as { class: string }).class, 'express');
    }
  });

  test('a PATCH that hands the stream to a new leadership acks what it had sequenced and refuses the rest: no append answered 503 is in the stream', async () => {
    await ok(c.url(0), 'POST', '/v1/streams/cb/ho', {});
    // Producers and PATCHes all on star 0, which takes the lease again after each hand-off: no hop,
    // so a 503 is the star's own refusal, and the outcome of every append is known.
    const load = knownOutcomeProducers(c.url(0), 'cb', 'ho', HANDOFF_PRODUCERS, HANDOFF_REQUEST_MS_MAX);
    try {
      for (let i = 0; i < HANDOFF_PATCHES; i++) {
        await sleep(200);
        await ok(c.url(0), 'PATCH', '/v1/streams/cb/ho', { timestamping_mode: i % 2 === 0 ? 'arrival' : 'client-prefer' });
      }
      await sleep(200);
    } finally {
      await load.stop();
    }
    await assertKnownOutcomes(c.url(1), 'cb', 'ho', load.acked, load.refused, HANDOFF_REQUEST_MS_MAX);
  });

  test('an express-class stream commits its chunks to the express bucket; once its leader dies another star reads them back with no lease (vacant)', async () => {
    await ok(c.url(0), 'POST', '/v1/streams/cb/fast', { class: 'express' });
    const bodies = ['e0', 'e1', 'e2'];
    for (const b of bodies) await ok(c.url(1), 'POST', '/v1/streams/cb/fast/records', { records: [{ body: b }] });
    const s3 = new S3Client({ endpoint: c.s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: c.s3.env.AWS_ACCESS_KEY_ID, secretAccessKey: c.s3.env.AWS_SECRET_ACCESS_KEY } });
    try {
      const listed = await s3.send(new ListObjectsCommand({ Bucket: TEST_EXPRESS_BUCKET }));
      assert.ok((listed.Contents ?? []).some((o) => o.Key?.includes('xchunks/')), 'chunk objects in the express bucket');
    } finally {
      s3.destroy();
    }
    const lease = await sql.query<{ holder: string }>(`SELECT holder FROM ${c.schema}.leases WHERE bucket = 'cb' AND key = $1`, [Buffer.from('fast')]);
    const leaderIdx = Number(lease.rows[0].holder.replace('star-', ''));
    await c.stars[leaderIdx].kill();
    const other = (leaderIdx + 1) % 3;
    let recs = await call(c.url(other), 'GET', '/v1/streams/cb/fast/records?seq_num=0');
    while (recs.status === 503) { await sleep(100); recs = await call(c.url(other), 'GET', '/v1/streams/cb/fast/records?seq_num=0'); }
    assert.equal(recs.status, 200, recs.text);
    assert.deepEqual((recs.body as { records: { body: string }[] }).records.map((r) => r.body), bodies);
    // A vacant stream serves committed state with no lease acquired (spec: States): the read took none.
    // Nor do GetStream (HTTP and gRPC) and ReadPlan, on any star: they are answered from the row.
    const epoch = async (): Promise<{ holder: string; epoch: string }> => (await sql.query<{ holder: string; epoch: string }>(
      `SELECT holder, epoch FROM ${c.schema}.leases WHERE bucket = 'cb' AND key = $1`, [Buffer.from('fast')])).rows[0];
    const before = await epoch();
    assert.equal(before.holder, `star-${leaderIdx}`, 'the read did not take the lease');
    const third = (leaderIdx + 2) % 3;
    // gRPC callers are told NOT_OWNER while the dead star's lease runs (the bridge's hop found it
    // refusing connections and waited it out): ask once it has run out.
    const expired = async (): Promise<boolean> => (await sql.query<{ gone: boolean }>(
      `SELECT expires_at <= clock_timestamp() AS gone FROM ${c.schema}.leases WHERE bucket = 'cb' AND key = $1`, [Buffer.from('fast')])).rows[0].gone;
    while (!(await expired())) await sleep(100);
    for (const i of [other, third]) {
      const info = await ok(c.url(i), 'GET', '/v1/streams/cb/fast') as { class: string; fencing_token: string };
      assert.equal(info.class, 'express');
      assert.equal(info.fencing_token, '');
      const cl = connect(await c.grpcPort(i));
      try {
        const got = await grpcCall(cl.data.GetStream.bind(cl.data), { bucket: 'cb', key: Buffer.from('fast') }) as { info: { config: { storage_class: unknown } } };
        assert.match(String(got.info.config.storage_class), /EXPRESS|^2$/, `GetStream at star ${i}`);
        const plan = await grpcCall(cl.data.ReadPlan.bind(cl.data), { bucket: 'cb', key: Buffer.from('fast'), seq_num: 0 }) as { entries: unknown[]; vended_until?: string };
        assert.deepEqual(plan.entries, [], 'nothing settled yet');
        assert.equal(Number(plan.vended_until), 0);
      } finally {
        cl.close();
      }
    }
    assert.deepEqual(await epoch(), before, 'no lease was taken by GetStream or ReadPlan');
    await c.restart(leaderIdx);
  });

  test('the leader is killed: another star takes the lease with a higher epoch, and every ack reads back', async () => {
    await ok(c.url(0), 'POST', '/v1/streams/cb/s2', {});
    const bodies: string[] = [];
    for (let i = 0; i < 20; i++) {
      const a = await ok(c.url(i % 3), 'POST', '/v1/streams/cb/s2/records', { records: [{ body: `k${i}` }] }) as Ack;
      assert.equal(a.start.seq_num, i);
      bodies.push(`k${i}`);
    }
    const before = await sql.query<{ holder: string; epoch: string }>(`SELECT holder, epoch FROM ${c.schema}.leases WHERE bucket = 'cb' AND key = $1`, [Buffer.from('s2')]);
    const holder = before.rows[0].holder;
    const leaderIdx = Number(holder.replace('star-', ''));
    await c.stars[leaderIdx].kill();
    const other = (leaderIdx + 1) % 3;
    // The next request, on a live star, hops to the dead leader, finds its address refusing
    // connections, waits the lease out here and takes it: no 503 reaches the caller.
    const a = await call(c.url(other), 'POST', '/v1/streams/cb/s2/records', { records: [{ body: 'after' }] });
    assert.equal(a.status, 200, a.text);
    const next = a.body as Ack;
    assert.equal(next.start.seq_num, 20, 'the new leader continues after the last acknowledged record');
    bodies.push('after');
    const now = await sql.query<{ holder: string; epoch: string }>(`SELECT holder, epoch FROM ${c.schema}.leases WHERE bucket = 'cb' AND key = $1`, [Buffer.from('s2')]);
    assert.notEqual(now.rows[0].holder, holder);
    assert.ok(Number(now.rows[0].epoch) > Number(before.rows[0].epoch), 'the epoch rose');
    // The dead star comes back on an empty data dir: nothing it held is needed.
    await c.restart(leaderIdx, true);
    for (let i = 0; i < 3; i++) assert.deepEqual((await readAll(c.url(i), 'cb', 's2')).map((r) => r.body), bodies, `star ${i}`);
  });

  test('a subscriber through another star reconnects with Last-Event-ID to a third star: no gap, no repeat', async () => {
    await ok(c.url(0), 'POST', '/v1/buckets/se', {});
    await ok(c.url(0), 'POST', '/v1/streams/se/live', {});
    await ok(c.url(0), 'POST', '/v1/streams/se/live/records', { records: [{ body: 'b0' }] });
    const lease = await sql.query<{ holder: string }>(`SELECT holder FROM ${c.schema}.leases WHERE bucket = 'se' AND key = $1`, [Buffer.from('live')]);
    const leader = Number(lease.rows[0].holder.replace('star-', ''));
    const via = (leader + 1) % 3;
    const third = (leader + 2) % 3;
    const path = '/v1/streams/se/live/records/subscribe?seq_num=0';
    const first = subscribe(c.url(via), path);
    const sent = ['b0'];
    for (let i = 1; i <= 5; i++) {
      await ok(c.url(third), 'POST', '/v1/streams/se/live/records', { records: [{ body: `b${i}` }] });
      sent.push(`b${i}`);
    }
    await until(() => first.bodies.length >= sent.length, 'live records through a star that does not lead', first);
    assert.deepEqual(first.bodies, sent);

    await c.stars[leader].kill();
    await first.ended; // the hop's stream ends with its leader
    // Appends resume once the lease moves; the subscriber reconnects to the third star with its cursor.
    for (let i = 6; i <= 10; i++) {
      let a = await call(c.url(third), 'POST', '/v1/streams/se/live/records', { records: [{ body: `b${i}` }] });
      while (a.status !== 200) { assert.equal(a.status, 503, a.text); await sleep(100); a = await call(c.url(third), 'POST', '/v1/streams/se/live/records', { records: [{ body: `b${i}` }] }); }
      sent.push(`b${i}`);
    }
    const second = subscribe(c.url(third), '/v1/streams/se/live/records/subscribe', first.lastId);
    const seen = first.bodies.length;
    await until(() => seen + second.bodies.length >= sent.length, 'the rest after the reconnect', second);
    second.close();
    await second.ended;
    assert.deepEqual([...first.bodies, ...second.bodies], sent, 'every record once, in order, across the reconnect');
  });
});
