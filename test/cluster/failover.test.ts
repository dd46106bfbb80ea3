// Failover under load, checked for linearizability: producers append through random stars, readers
// read and check tails through random stars, while stars are SIGKILLed (three times) and restarted (once on an
// empty data dir). Every operation is recorded with its real-time start and end, and the history
// checker (test/helpers/history.ts) must find no violation: nothing acknowledged lost or moved, no
// sequence number naming two records, no stale read, no tail going backwards.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postgresSkipReason } from '../helpers/postgres.ts';
import { Recorder, appendFailure, checkHistory } from '../helpers/history.ts';
import { rng as makeRng } from '../helpers/rng.ts';
import { sleep } from '../crash/fault-kit.ts';
import { readBackRecorded, request, startCluster, type TestCluster } from './kit.ts';

const skip = await postgresSkipReason();

/** One request's longest wait: past it the append counts as ambiguous. */
const REQUEST_MS_MAX = 10_000;
const STREAMS = ['f0', 'f1'];
const PRODUCERS = 4;
const READERS = 2;
const KILLS = 3;



describe('failover under load, checked for linearizability', { skip, timeout: 300_000 }, () => {
  let c: TestCluster;
  before(async () => { c = await startCluster(3); });
  after(async () => { await c?.close(); });

  test('stars are killed and restarted under appends, reads and tail checks through random stars; the history is linearizable', async () => {
    const seed = Number(process.env.SVCD_FAILOVER_SEED ?? Date.now() % 1_000_000);
    console.log(`failover seed ${seed} (SVCD_FAILOVER_SEED replays the choices)`);
    const rng = makeRng(seed);
    const pick = (n: number): number => Math.floor(rng() * n);
    const up = [true, true, true];
    const live = (): number => { const alive = [0, 1, 2].filter((i) => up[i]); return alive[pick(alive.length)]; };

    assert.equal((await request(c.url(0), 'POST', '/v1/buckets/fb', {}, REQUEST_MS_MAX)).status, 201);
    for (const s of STREAMS) assert.equal((await request(c.url(1), 'POST', `/v1/streams/fb/${s}`, {}, REQUEST_MS_MAX)).status, 201);

    const rec = new Recorder();
    let stopping = false;
    let n = 0;
    const producer = async (p: number): Promise<void> => {
      while (!stopping) {
        const stream = STREAMS[pick(STREAMS.length)];
        const bodies = [`p${p}-${n++}`, ...(rng() < 0.3 ? [`p${p}-${n++}`] : [])];
        const star = live();
        const h = rec.begin('append', { stream, bodies, client: `p${p}@${star}` });
        try {
          const a = await request(c.url(star), 'POST', `/v1/streams/fb/${stream}/records`, { records: bodies.map((body) => ({ body })) }, REQUEST_MS_MAX);
          if (a.status === 200) h.end({ status: 'ok', start: a.body.start.seq_num, end: a.body.end.seq_num, tail: a.body.tail.seq_num });
          else { h.end(appendFailure(a.status, JSON.stringify(a.body))); await sleep(50); }
        } catch (err) {
          h.end(appendFailure(undefined, (err as Error).message));
          await sleep(50);
        }
      }
    };
    const reader = async (r: number): Promise<void> => {
      while (!stopping) {
        const stream = STREAMS[pick(STREAMS.length)];
        const star = live();
        if (rng() < 0.5) {
          const h = rec.begin('check-tail', { stream, client: `r${r}@${star}` });
          try {
            const a = await request(c.url(star), 'GET', `/v1/streams/fb/${stream}/records/tail`, undefined, REQUEST_MS_MAX);
            h.end(a.status === 200 ? { status: 'ok', tail: a.body.seq_num } : { status: 'error', reason: String(a.status) });
          } catch (err) { h.end({ status: 'error', reason: (err as Error).message }); }
        } else {
          const startSeq = pick(40);
          const h = rec.begin('read', { stream, startSeq, client: `r${r}@${star}` });
          try {
            const a = await request(c.url(star), 'GET', `/v1/streams/fb/${stream}/records?seq_num=${startSeq}&clamp=false`, undefined, REQUEST_MS_MAX);
            if (a.status === 200) h.end({ status: 'ok', records: a.body.records.map((x: { seq_num: number; body: string }) => ({ seq_num: x.seq_num, body: x.body })), tail: a.body.tail.seq_num });
            else h.end({ status: 'error', reason: String(a.status) });
          } catch (err) { h.end({ status: 'error', reason: (err as Error).message }); }
        }
        await sleep(20);
      }
    };
    const load = [...Array.from({ length: PRODUCERS }, (_, p) => producer(p)), ...Array.from({ length: READERS }, (_, r) => reader(r))];

    for (let k = 0; k < KILLS; k++) {
      await sleep(1000 + pick(1000));
      const victim = pick(3);
      up[victim] = false;
      await c.stars[victim].kill();
      await sleep(300 + pick(1000));
      await c.restart(victim, k === 1); // the second restart on an empty data dir
      up[victim] = true;
    }
    await sleep(1000);
    stopping = true;
    await Promise.all(load);

    // Read every stream back whole from every star, recorded as reads too.
    for (const stream of STREAMS) await readBackRecorded(c, rec, 'fb', stream, REQUEST_MS_MAX);
    const history = rec.history();
    const acked = history.filter((o) => o.kind === 'append' && o.outcome.status === 'ok').length;
    console.log(`${history.length} operations, ${acked} appends acknowledged`);
    assert.ok(acked > 20, 'the load made progress');
    const violations = checkHistory(history, { complete: true });
    assert.deepEqual(violations, [], violations.slice(0, 20).join('\n'));
  });
});
