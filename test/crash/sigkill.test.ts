// SIGKILL under concurrent load, several times over one data dir: after every restart each stream
// must hold every acknowledged record at exactly its acked seq_num with the same body, with no gap
// and no duplicate from 0 to the tail; unacknowledged batches may or may not be there, but only
// whole, contiguous and in order. Replay a failure with SVCD_CRASH_SEED=<seed printed below>. The
// same runs are repeated with the metadata in PostgreSQL.
import { after, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { removeDir, startServer, tempDir, type Engine, type RunningServer } from '../helpers/server.ts';
import { Rng, StreamModel, createBucket, createStream, finishRun, req, runSeed, sleep, streamPath, verifyStream, within } from './crash-kit.ts';
import { startLoad } from './load.ts';
import { dropSchema, freshSchema, postgresSkipReason, TEST_POSTGRES_URL } from '../helpers/postgres.ts';

/** Most a cycle's producers may take to notice the kill (their requests are bounded anyway). */
const LOAD_END_MAX_MS = 30_000;
const FIRST_ACK_MAX_MS = 15_000;
/** Most the last restarted star may take to record its first settled segment (a bound, not a speed). */
const SETTLED_WAIT_MS = 30_000;

interface RunOptions {
  engine: Engine; cycles: number; producers: number; streams: number;
  /** Extra star flags (the postgres metadata backend). */
  args?: string[];
  /** Runs while the star restarted after the last kill is still up, once every stream verified. */
  atEnd?: (server: RunningServer) => Promise<void>;
}

async function crashRun(t: TestContext, o: RunOptions): Promise<void> {
  const seed = runSeed();
  t.diagnostic(`engine ${o.engine} seed ${seed} (SVCD_CRASH_SEED=${seed} replays the kill schedule)`);
  const schedule = new Rng(seed);
  const dataDir = tempDir('svcd-crash-');
  let server: RunningServer = await startServer({ engine: o.engine, dataDir, args: o.args });
  let ok = false;
  try {
    const bucket = `crash-${o.engine}`;
    await createBucket(server.baseUrl, bucket);
    const shared: StreamModel[] = [];
    for (let s = 0; s < o.streams; s++) {
      const m = new StreamModel(bucket, `shared-${s}`);
      await createStream(server.baseUrl, bucket, m.key);
      shared.push(m);
    }
    const exclusive = new StreamModel(bucket, 'exclusive');
    await createStream(server.baseUrl, bucket, exclusive.key);
    const all = [...shared, exclusive];

    for (let cycle = 0; cycle < o.cycles; cycle++) {
      const load = startLoad({ baseUrl: server.baseUrl, shared, exclusive, producers: o.producers, seed, cycle });
      const gotAck = await within(load.firstAck, FIRST_ACK_MAX_MS);
      assert.ok(gotAck, `cycle ${cycle}: no append acknowledged within ${FIRST_ACK_MAX_MS} ms:\n${server.output().slice(-2000)}`);
      const delayMs = schedule.int(200, 1500);
      await sleep(delayMs);
      await server.kill();
      load.stop();
      const ended = await within(load.done, LOAD_END_MAX_MS);
      assert.ok(ended, `cycle ${cycle}: producers still running ${LOAD_END_MAX_MS} ms after the kill`);
      assert.deepEqual(load.anomalies, [], `cycle ${cycle}: failed answers under load before the kill`);

      server = await startServer({ engine: o.engine, dataDir, args: o.args });
      const lines: string[] = [];
      for (const m of all) {
        const r = await verifyStream(server.baseUrl, m);
        lines.push(`${m.key}: ${r.records} records, ${r.acked} acked batches, ambiguous ${r.ambiguousPresent} present / ${r.ambiguousAbsent} absent`);
      }
      t.diagnostic(`cycle ${cycle}: killed after ${delayMs} ms, ${load.acked()} acks this cycle; ${lines.join('; ')}`);
    }
    const totalAcked = all.reduce((n, m) => n + m.ackedCount, 0);
    assert.ok(totalAcked > o.cycles, `too few acknowledged batches to prove anything (${totalAcked})`);
    await o.atEnd?.(server);
    ok = true;
  } finally {
    await finishRun(t, server, dataDir, ok);
  }
}

test('uws: four SIGKILLs under 16 concurrent producers lose no acknowledged record', { timeout: 90_000 }, async (t) => {
  await crashRun(t, { engine: 'uws', cycles: 4, producers: 16, streams: 4 });
});

test('node: three SIGKILLs under 8 concurrent producers lose no acknowledged record', { timeout: 90_000 }, async (t) => {
  await crashRun(t, { engine: 'node', cycles: 3, producers: 8, streams: 3 });
});

test('control-plane changes acknowledged before a SIGKILL survive it', { timeout: 60_000 }, async (t) => {
  await controlPlaneRun(t, []);
});

// The same proofs with the metadata in PostgreSQL (a fresh schema each): stream rows, fences, trims,
// deletes and, with small WAL files, the settled segment chains all live there across the kills.
const pgSkip = await postgresSkipReason();

describe('with the postgres metadata backend', { skip: pgSkip }, () => {
  const schemas: string[] = [];
  const pgArgs = (): string[] => {
    schemas.push(freshSchema());
    return ['--metadata', 'postgres', '--postgres-url', TEST_POSTGRES_URL, '--postgres-schema', schemas[schemas.length - 1]];
  };
  after(async () => { for (const s of schemas) await dropSchema(s); });

  test('node: three SIGKILLs under 8 producers, WAL files settling into segments, lose no acknowledged record', { timeout: 90_000 }, async (t) => {
    // Files seal by age as well as size, so segments are made however few appends a slow machine
    // manages between the kills (by size alone, one CI run filled no file).
    // A kill may come before anything was settled (a cycle lasts 0.2-1.5 s after its first ack). With
    // PostgreSQL metadata the star is a cluster of one: after a restart its streams are vacant, and
    // reads of them take no lease, so nothing settles them until a write makes the star their leader
    // again. One append to each does, and then the chains are looked for, for at most SETTLED_WAIT_MS.
    const args = [...pgArgs(), '--wal-file-bytes-max', String(256 * 1024), '--wal-settle-after-ms', '1000'];
    const schema = schemas[schemas.length - 1];
    const segments = async (): Promise<number> => {
      const sql = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await sql.connect();
      try {
        return Number((await sql.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.segments`)).rows[0].n);
      } finally {
        await sql.end();
      }
    };
    await crashRun(t, {
      engine: 'node', cycles: 3, producers: 8, streams: 3, args,
      atEnd: async (server) => {
        for (const key of ['shared-0', 'shared-1', 'shared-2', 'exclusive']) {
          const r = await req(server.baseUrl, 'POST', `${streamPath('crash-node', key)}/records`, { records: [{ body: 'lead again' }] });
          assert.equal(r.status, 200, `an append to ${key} after the last restart: ${JSON.stringify(r.body)}`);
        }
        const deadline = Date.now() + SETTLED_WAIT_MS;
        let n = await segments();
        while (n === 0 && Date.now() < deadline) { await sleep(200); n = await segments(); }
        assert.ok(n > 0, `WAL files settled, and their segment chains are in PostgreSQL; the star said:\n${server.output().slice(-3000)}`);
        t.diagnostic(`${n} segments recorded in PostgreSQL`);
      },
    });
  });

  test('control-plane changes acknowledged before a SIGKILL survive it', { timeout: 60_000 }, async (t) => {
    await controlPlaneRun(t, pgArgs());
  });
});

async function controlPlaneRun(t: TestContext, args: string[]): Promise<void> {
  const dataDir = tempDir('svcd-crash-meta-');
  let server: RunningServer = await startServer({ engine: 'uws', dataDir, args });
  let ok = false;
  try {
    const u = server.baseUrl;
    await createBucket(u, 'meta');
    // Streams created concurrently, each acknowledged with 201 just before the kill.
    const keys = Array.from({ length: 24 }, (_, i) => `k${i}`);
    const ids = await Promise.all(keys.map(async (k) => (await createStream(u, 'meta', k)).stream_id as string));
    for (let i = 0; i < 10; i++) {
      const r = await req(u, 'POST', `${streamPath('meta', 'k0')}/records`, { records: [{ body: `r${i}` }] });
      assert.equal(r.status, 200, r.text);
    }
    let r = await req(u, 'POST', `${streamPath('meta', 'k0')}/trim`, { seq_num: 4 });
    assert.equal(r.status, 204, `trim: ${r.text}`);
    r = await req(u, 'POST', `${streamPath('meta', 'k1')}/fence`, { fencing_token: 'tok-1' });
    assert.equal(r.status, 200, `fence: ${r.text}`);
    r = await req(u, 'DELETE', streamPath('meta', 'k2'));
    assert.equal(r.status, 204, `delete: ${r.text}`);
    await server.kill();

    server = await startServer({ engine: 'uws', dataDir, args });
    const v = server.baseUrl;
    r = await req(v, 'GET', '/v1/buckets/meta');
    assert.equal(r.status, 200, `bucket after restart: ${r.text}`);
    for (let i = 0; i < keys.length; i++) {
      r = await req(v, 'GET', streamPath('meta', keys[i]));
      if (keys[i] === 'k2') { assert.equal(r.status, 404, `deleted stream k2 came back: ${r.text}`); continue; }
      assert.equal(r.status, 200, `stream ${keys[i]} created before the kill: ${r.text}`);
      assert.equal(r.body.stream_id, ids[i], `stream ${keys[i]} keeps its stream_id`);
      if (keys[i] === 'k1') assert.equal(r.body.fencing_token, 'tok-1', 'the fencing token survives');
    }
    r = await req(v, 'GET', `${streamPath('meta', 'k0')}/records?seq_num=0`);
    assert.equal(r.status, 410, `a read below the trim watermark after restart: ${r.text}`);
    r = await req(v, 'GET', `${streamPath('meta', 'k0')}/records?seq_num=4&limit=100`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.records.map((x: { body: string }) => x.body), ['r4', 'r5', 'r6', 'r7', 'r8', 'r9']);
    assert.equal(r.body.tail.seq_num, 10);
    ok = true;
  } finally {
    await server.kill();
    if (ok) removeDir(dataDir);
    else t.diagnostic(`data dir kept for inspection: ${dataDir}`);
  }
}
