// One star cut off from the object store while the others reach it (chaos audit L4). Each star
// reaches s3rver through a TCP relay of its own, and the test cuts the leader's alone: its group
// commits fail, so before, its streams answered 503 to every append for as long as the cut lasted,
// on every star (the others hop to the leader). Now, once its store has been down for
// OBJECTS_DOWN_HANDOFF_MS while another star reports reaching it, the leader hands its streams over
// and takes no lease: the other star loads them from what is committed and acknowledges appends again,
// including those sent to the cut-off star, which hops them there. Every acknowledged append reads
// back at its position, and no refused one is in the stream. Last, the cut-off star is killed
// (SIGKILL) as it begins to hand its streams over, its data dir lost: the other star takes them once
// the dead star's leases run out.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postgresSkipReason } from '../helpers/postgres.ts';
import { removeDir } from '../helpers/server.ts';
import { opsUrl, until } from '../crash/fault-kit.ts';
import { produce, readBack, relayedCluster, request, type RelayedCluster } from './kit.ts';

const skip = await postgresSkipReason();

/** One request's longest wait (a bound, not a speed). */
const REQUEST_MS_MAX = 20_000;
/** How long appends may take to be acknowledged again after the cut (a bound, not a speed: the
 *  hand-over waits OBJECTS_DOWN_HANDOFF_MS, then a lease moves). */
const RECOVERY_WAIT_MS_MAX = 60_000;

describe('one star cut off from the object store (chaos audit L4)', { skip, timeout: 180_000 }, () => {
  let c: RelayedCluster;
  before(async () => { c = await relayedCluster(2, 'each', 'svcd_s3part'); });
  after(async () => { await c?.close(); });

  test('the leader hands its streams to the star that reaches the store; appends sent to either star are acknowledged again during the cut', async () => {
    const url = c.url;
    assert.equal((await request(url(0), 'POST', '/v1/buckets/part', {}, REQUEST_MS_MAX)).status, 201);
    assert.equal((await request(url(0), 'POST', '/v1/streams/part/s', {}, REQUEST_MS_MAX)).status, 201);
    const L = Math.max(0, await c.leaderOf('part', 's'));
    const F = 1 - L;
    // One producer on each star: the follower's appends hop to the leader.
    const onLeader = produce(() => url(L), '/v1/streams/part/s', REQUEST_MS_MAX, 'l');
    const onFollower = produce(() => url(F), '/v1/streams/part/s', REQUEST_MS_MAX, 'f');
    const ackedCount = (): number => onLeader.acked.size + onFollower.acked.size;
    try {
      await until('appends acknowledged', () => onLeader.acked.size >= 10 && onFollower.acked.size >= 10);
      await c.relays[L].cut('refuse');
      await until('a group commit to fail against the leader\'s cut S3', () => [...onLeader.refused.values(), ...onFollower.refused.values()].some((e) => /the commit failed/.test(e)));
      const leaderAcked = onLeader.acked.size;
      const followerAcked = onFollower.acked.size;
      // The cut lasts: appends on both stars are acknowledged again by the star that reaches S3.
      await until('appends sent to either star acknowledged again while the leader\'s S3 is cut',
        () => onLeader.acked.size >= leaderAcked + 10 && onFollower.acked.size >= followerAcked + 10, RECOVERY_WAIT_MS_MAX);
      assert.equal(await c.leaderOf('part', 's'), F, 'the star that reaches the store leads the stream');
      const metrics = async (i: number): Promise<string> => (await fetch(`${await opsUrl(c.stars[i])}/metrics`)).text();
      assert.match(await metrics(L), /^svcd_cluster_stepped_aside 1$/m, 'the cut-off star says it stepped aside');
      assert.match(await metrics(F), /^svcd_cluster_stepped_aside 0$/m);
    } finally {
      await c.relays[L].restore();
      await onLeader.stop();
      await onFollower.stop();
    }
    // Its store back, the star takes leases again.
    const aside = async (): Promise<boolean> => /^svcd_cluster_stepped_aside 1$/m.test(await (await fetch(`${await opsUrl(c.stars[L])}/metrics`)).text());
    await until('the cut-off star to take leases again once its store answers', async () => !(await aside()), RECOVERY_WAIT_MS_MAX);
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

  // Kills a star: runs last.
  test('the cut-off star killed (SIGKILL) as it hands its streams over, its data dir lost: the other star takes them with every acknowledged append at its position', async () => {
    const url = c.url;
    assert.equal((await request(url(0), 'POST', '/v1/buckets/kill', {}, REQUEST_MS_MAX)).status, 201);
    assert.equal((await request(url(0), 'POST', '/v1/streams/kill/s', {}, REQUEST_MS_MAX)).status, 201);
    const L = Math.max(0, await c.leaderOf('kill', 's'));
    const F = 1 - L;
    let target = L;
    const onLeader = produce(() => url(target), '/v1/streams/kill/s', REQUEST_MS_MAX, 'l');
    const onFollower = produce(() => url(F), '/v1/streams/kill/s', REQUEST_MS_MAX, 'f');
    const producers = [onLeader, onFollower];
    const ackedCount = (): number => onLeader.acked.size + onFollower.acked.size;
    await until('appends acknowledged', () => onLeader.acked.size >= 10 && onFollower.acked.size >= 10);
    const handOvers = (): number => (c.stars[L].output().match(/handing over its \d+ lease/g) ?? []).length;
    const before = handOvers();
    let ackedAtKill: number;
    await c.relays[L].cut('refuse');
    try {
      // Killed the moment it says it steps aside: its streams are being handed over (in-flight appends
      // drain or are quiesced first), and its memory and disk go with it.
      await until('the cut-off star to begin handing its streams over', () => handOvers() > before, RECOVERY_WAIT_MS_MAX);
      await c.stars[L].kill();
      ackedAtKill = ackedCount();
      removeDir(c.dataDir(L));
      target = F;
    } finally {
      await c.relays[L].restore();
    }
    await until('appends acknowledged by the other star after the kill', () => ackedCount() > ackedAtKill + 20, RECOVERY_WAIT_MS_MAX);
    for (const p of producers) await p.stop();
    assert.deepEqual([...onLeader.anomalies, ...onFollower.anomalies], []);

    const seqOf = await readBack(url(F), '/v1/streams/kill/s', REQUEST_MS_MAX);
    const refusedCount = onLeader.refused.size + onFollower.refused.size;
    const unknownCount = onLeader.unknown.size + onFollower.unknown.size;
    console.log(`# cut-off star killed handing over: ${ackedCount()} acknowledged (${ackedAtKill} before the kill), ${refusedCount} refused, ${unknownCount} unanswered; ${seqOf.size} in the stream`);
    for (const p of producers) {
      for (const [body, seq] of p.acked) assert.equal(seqOf.get(body), seq, `acknowledged ${body} at ${seq}`);
      assert.deepEqual([...p.refused.keys()].filter((b) => seqOf.has(b)), [], 'refused appends are not in the stream');
    }
    // An append the dead star never answered may be either; nothing else may be in the stream.
    for (const body of seqOf.keys()) {
      assert.ok(producers.some((p) => p.acked.has(body) || p.unknown.has(body)), `${body} in the stream was neither acknowledged nor unanswered`);
    }
  });
});
