// A short S3 outage under append load (chaos audit M3). The stars reach s3rver only through a TCP
// relay the test cuts (connections reset, new ones refused). A group commit's PUT then fails and its
// appends are refused (503: a cluster star acks only once a chunk is in the object store), but the
// stream stays with its leader: its committed, unsettled tail is still served from the leader's
// memory, on the leader and through the follower's hop, and its event stream goes on. Before, the
// failed commit dropped the stream from its leader, and every later request (read, tail, subscribe,
// append) had to reload the tail from the object store that was away: all of them 503 on every star
// until S3 came back. Once it is back, appends are acknowledged again, and every acknowledged append
// reads back at its position while no refused one is in the stream; the same holds when the leader is
// killed during the cut, its disk lost, and the follower takes the stream over. An S3 that goes silent instead
// (a black hole) costs a relayed append and a follower's tail read the commit's and the view's own
// bounds, not the S3 client's.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postgresSkipReason } from '../helpers/postgres.ts';
import { removeDir } from '../helpers/server.ts';
import { until } from '../crash/fault-kit.ts';
import { produce, readBack, relayedCluster, request, type RelayedCluster } from './kit.ts';
import { PROXY_HEAD_MS_MAX } from '../../src/config/limits.ts';

const skip = await postgresSkipReason();

/** One request's longest wait (a bound, not a speed). */
const REQUEST_MS_MAX = 20_000;
/** How long reads are checked while S3 is cut, after a commit failed. */
const CUT_READS_MS = 2000;

describe('a short S3 cut under append load (chaos audit M3)', { skip, timeout: 180_000 }, () => {
  let c: RelayedCluster;
  before(async () => { c = await relayedCluster(2, 'shared', 'svcd_s3cut'); });
  after(async () => { await c?.close(); });

  /** The stream's leader and the other star. */
  async function roles(bucket: string, key: string): Promise<{ L: number; F: number }> {
    const L = Math.max(0, await c.leaderOf(bucket, key));
    return { L, F: 1 - L };
  }

  test('the busy stream\'s committed tail is served on its leader and through the follower, its subscriber stays; appends 503, then resume', async () => {
    const url = c.url;
    assert.equal((await request(url(0), 'POST', '/v1/buckets/cut', {}, REQUEST_MS_MAX)).status, 201);
    assert.equal((await request(url(0), 'POST', '/v1/streams/cut/busy', {}, REQUEST_MS_MAX)).status, 201);
    const { L, F } = await roles('cut', 'busy');

    // A producer on the leader: what it was told, and anything outside 200 and 503.
    const producer = produce(() => url(L), '/v1/streams/cut/busy', REQUEST_MS_MAX);
    const { acked, refused, anomalies } = producer;
    await until('appends acknowledged', () => acked.size >= 20);

    // A subscriber through the follower (the bridge hop relays the leader's event stream).
    const ac = new AbortController();
    let lastId = -1;
    let ended: string | undefined;
    const sse = await fetch(`${url(F)}/v1/streams/cut/busy/records/subscribe?seq_num=0`, { signal: ac.signal });
    assert.equal(sse.status, 200);
    const reading = (async () => {
      const dec = new TextDecoder();
      let buf = '';
      try {
        for await (const chunk of sse.body as unknown as AsyncIterable<Uint8Array>) {
          buf += dec.decode(chunk, { stream: true });
          for (let k; (k = buf.indexOf('\n\n')) >= 0; buf = buf.slice(k + 2)) {
            const id = /^id: (\d+)/m.exec(buf.slice(0, k));
            if (id) lastId = Number(id[1]);
          }
        }
        ended ??= 'ended by the star';
      } catch (err) {
        ended ??= `cut: ${(err as Error).message}`;
      }
    })();
    await until('the subscriber caught up', () => lastId >= 20);

    await c.relays[0].cut('refuse');
    try {
      await until('a group commit to fail against the cut S3', () => [...refused.values()].some((e) => /the commit failed/.test(e)));
      const ackedBefore = Math.max(...acked.values()) + 1;
      for (const deadline = Date.now() + CUT_READS_MS; Date.now() < deadline;) {
        for (const i of [L, F]) {
          for (const path of ['records?tail_offset=5', 'records?seq_num=0&limit=5', 'records/tail']) {
            const a = await request(url(i), 'GET', `/v1/streams/cut/busy/${path}`, undefined, REQUEST_MS_MAX);
            assert.equal(a.status, 200, `${path} on the ${i === L ? 'leader' : 'follower'} while S3 is cut: ${JSON.stringify(a.body)}`);
            const tail = path === 'records/tail' ? a.body.seq_num : a.body.tail.seq_num;
            assert.ok(tail >= ackedBefore, `${path}: tail ${tail} is behind what was acknowledged (${ackedBefore})`);
          }
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(ended, undefined, 'the event stream goes on while S3 is cut');
    } finally {
      await c.relays[0].restore();
    }

    const refusedAtRestore = refused.size;
    const ackedAtRestore = acked.size;
    await until('appends acknowledged again', () => acked.size > ackedAtRestore + 20, 60_000);
    await producer.stop();
    assert.ok(refusedAtRestore > 0, 'appends were refused while S3 was cut');
    assert.deepEqual(anomalies, []);
    assert.deepEqual([...producer.unknown], [], 'every append was answered');
    for (const e of refused.values()) assert.match(e, /the append was not acknowledged: .*; retry/);

    const tail = Math.max(...acked.values()) + 1;
    await until('the subscriber saw every acknowledged append', () => lastId >= tail || ended !== undefined);
    assert.equal(ended, undefined, 'the event stream went on through the cut');
    ac.abort();
    await reading;

    // Every acknowledged append at its position, on both stars; no refused one; no gap.
    for (const i of [L, F]) {
      const seqOf = await readBack(url(i), '/v1/streams/cut/busy', REQUEST_MS_MAX);
      for (const [body, seq] of acked) assert.equal(seqOf.get(body), seq, `acknowledged ${body} at ${seq}`);
      assert.deepEqual([...refused.keys()].filter((b) => seqOf.has(b)), [], 'refused appends are not in the stream');
      assert.equal(seqOf.size, acked.size, 'nothing but the acknowledged appends');
    }
  });

  test('an S3 that holds connections open and silent: a relayed append hears a definite refusal within the hop, a tail read through the follower is answered by the leader', async () => {
    const url = c.url;
    assert.equal((await request(url(0), 'POST', '/v1/buckets/hole', {}, REQUEST_MS_MAX)).status, 201);
    assert.equal((await request(url(0), 'POST', '/v1/streams/hole/s', {}, REQUEST_MS_MAX)).status, 201);
    const { L, F } = await roles('hole', 's');
    for (let i = 0; i < 3; i++) {
      const a = await request(url(L), 'POST', '/v1/streams/hole/s/records', { records: [{ body: `a${i}` }] }, REQUEST_MS_MAX);
      assert.equal(a.status, 200, JSON.stringify(a.body));
    }
    await c.relays[0].cut('drop');
    try {
      await blackHoled(url(L), url(F));
    } finally {
      // The silenced connections stay silent after the cut, as a peer that vanished: reset them, so
      // the stars' clients open new ones for the tests after this one.
      await c.relays[0].restore();
      c.relays[0].reset();
    }
  });

  async function blackHoled(leader: string, follower: string): Promise<void> {
    // The follower reads the committed tail from S3 first; silent, it is given up within
    // COMMITTED_VIEW_GET_MS_MAX and the leader answers from memory (before: S3_ATTEMPTS_MAX requests
    // of S3_REQUEST_MS_MAX each).
    const read = await request(follower, 'GET', '/v1/streams/hole/s/records?tail_offset=1', undefined, REQUEST_MS_MAX);
    assert.equal(read.status, 200, JSON.stringify(read.body));
    assert.deepEqual(read.body.records.map((r: { body: string }) => r.body), ['a2']);
    // An append relayed by the follower: the leader's PUT is given up within COMMIT_PUT_MS_MAX, below
    // the hop's own wait, so the caller hears that it was not stored (before: the hop gave up first,
    // and the answer was that the append may have been carried out).
    const append = await request(follower, 'POST', '/v1/streams/hole/s/records', { records: [{ body: 'b' }] }, PROXY_HEAD_MS_MAX + REQUEST_MS_MAX);
    assert.equal(append.status, 503, JSON.stringify(append.body));
    assert.match(String(append.body?.error), /the append was not acknowledged: .*the commit failed.*; retry/);
    const after = await request(leader, 'GET', '/v1/streams/hole/s/records?seq_num=0', undefined, REQUEST_MS_MAX);
    assert.equal(after.status, 200, JSON.stringify(after.body));
    assert.deepEqual(after.body.records.map((r: { body: string }) => r.body), ['a0', 'a1', 'a2'], 'the refused append is not in the stream');
  }

  // Kills a star: runs last.
  test('the leader killed (SIGKILL) during the cut, its data dir lost: the follower takes the stream over with every acknowledged append at its position and no refused one', async () => {
    const url = c.url;
    assert.equal((await request(url(0), 'POST', '/v1/buckets/kill', {}, REQUEST_MS_MAX)).status, 201);
    assert.equal((await request(url(0), 'POST', '/v1/streams/kill/s', {}, REQUEST_MS_MAX)).status, 201);
    const { L, F } = await roles('kill', 's');
    let target = L;
    const producer = produce(() => url(target), '/v1/streams/kill/s', REQUEST_MS_MAX);
    const { acked, refused } = producer;
    await until('appends acknowledged', () => acked.size >= 20);
    await c.relays[0].cut('refuse');
    let ackedAtKill: number;
    try {
      await until('group commits to fail against the cut S3', () => [...refused.values()].filter((e) => /the commit failed/.test(e)).length >= 5);
      // The leader holds the stream's unsettled tail in memory and its rewound sequencing; all of it
      // is lost with the process and its disk. Only what PostgreSQL and S3 hold may come back.
      await c.stars[L].kill();
      ackedAtKill = acked.size;
      removeDir(c.dataDir(L));
      target = F;
    } finally {
      await c.relays[0].restore();
    }
    await until('appends acknowledged by the follower, once the dead leader\'s lease ran out', () => acked.size > ackedAtKill + 20, 60_000);
    await producer.stop();
    assert.deepEqual(producer.anomalies, []);

    const seqOf = await readBack(url(F), '/v1/streams/kill/s', REQUEST_MS_MAX);
    console.log(`# leader killed in the cut: ${acked.size} acknowledged (${ackedAtKill} before the kill), ${refused.size} refused, ${producer.unknown.size} unanswered; ${seqOf.size} in the stream`);
    for (const [body, seq] of acked) assert.equal(seqOf.get(body), seq, `acknowledged ${body} at ${seq}`);
    // A refusal is definite (503: not acknowledged); an append the dead star never answered may be
    // either, so it alone may or may not be in the stream.
    const refusedPresent = [...refused.keys()].filter((b) => seqOf.has(b));
    assert.deepEqual(refusedPresent, [], 'refused appends are not in the stream');
    for (const body of seqOf.keys()) assert.ok(acked.has(body) || producer.unknown.has(body), `${body} in the stream was neither acknowledged nor unanswered`);
  });

});
