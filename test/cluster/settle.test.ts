// A cluster star settles from memory: SettleStar seals the current generation and builds each
// stream's segment from the frames the star holds, on its settle thread (cluster/mem-settler.ts,
// workers/settle-task.ts settleBytes), and uploads it to the shared bucket. Several streams settle in
// one task: each must get its own segment holding exactly its records, served after a restart.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postgresSkipReason } from '../helpers/postgres.ts';
import { bytes, call, connect, type Clients } from '../grpc/client.ts';
import { request, startCluster, type TestCluster } from './kit.ts';

const skip = await postgresSkipReason();
const TIMEOUT_MS = 10_000;
const STREAMS = ['a', 'b', 'c'];
/** Appends per stream, of a few records each, so each segment holds several frames. */
const APPENDS = 4;

describe('a cluster star settles its streams from memory', { skip }, () => {
  let c: TestCluster;
  let cl: Clients | undefined;
  before(async () => {
    c = await startCluster(1, ['--wal-settle-after-ms', '3600000']);
    cl = connect(await c.grpcPort(0));
  });
  after(async () => {
    cl?.close();
    await c?.close();
  });

  test('each stream gets one segment of exactly its records, read back before and after a restart', async () => {
    assert.equal((await request(c.url(0), 'POST', '/v1/buckets/set', {}, TIMEOUT_MS)).status, 201);
    const want = new Map<string, string[]>();
    for (const s of STREAMS) {
      assert.equal((await request(c.url(0), 'POST', `/v1/streams/set/${s}`, {}, TIMEOUT_MS)).status, 201);
      want.set(s, []);
    }
    // Interleaved, so the generation's frames of the three streams alternate.
    for (let i = 0; i < APPENDS; i++) {
      for (const s of STREAMS) {
        const bodies = Array.from({ length: 1 + i }, (_, j) => `${s}-${i}-${j}`);
        const a = await request(c.url(0), 'POST', `/v1/streams/set/${s}/records`, { records: bodies.map((body) => ({ body })) }, TIMEOUT_MS);
        assert.equal(a.status, 200, JSON.stringify(a.body));
        want.get(s)!.push(...bodies);
      }
    }
    await call(cl!.data.SettleStar.bind(cl!.data), {});
    for (const s of STREAMS) {
      const plan = await call(cl!.data.ReadPlan.bind(cl!.data), { bucket: 'set', key: bytes(s), seq_num: 0 });
      assert.deepEqual(plan.entries.map((e) => [e.first_seq_num, e.end_seq_num]), [[0, want.get(s)!.length]], `${s}: one segment of every record`);
    }
    const readAll = async (s: string): Promise<string[]> => {
      const r = await request(c.url(0), 'GET', `/v1/streams/set/${s}/records?seq_num=0`, undefined, TIMEOUT_MS);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.records.map((x: { body: string }) => x.body);
    };
    for (const s of STREAMS) assert.deepEqual(await readAll(s), want.get(s), `${s} from its segment`);
    cl!.close();
    await c.stars[0].kill();
    await c.restart(0, true); // an empty data dir: the records can only come from the bucket
    cl = connect(await c.grpcPort(0));
    for (const s of STREAMS) assert.deepEqual(await readAll(s), want.get(s), `${s} after a restart`);
  });
});
