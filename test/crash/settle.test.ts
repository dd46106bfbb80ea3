// Durability across settling: enough bytes to fill a WAL file (--wal-file-bytes-max, a quarter of the
// default WAL_FILE_BYTES_MAX here: the same sealing and settling in a quarter of the bytes) so it is
// sealed and settled into segments, then SIGKILL: reads must serve everything, the settled part from segments
// (its WAL file is gone). Then a second fill killed right after the crossing batch is acknowledged,
// while that file is (likely) still being settled, and a restart that settles it again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WAL_FILE_BYTES_MAX } from '../../src/config/limits.ts';
import { startServer, tempDir, type RunningServer } from '../helpers/server.ts';
import {
  Rng, StreamModel, createBucket, createStream, finishRun, req, runSeed, segmentFiles, streamPath, tagOf, verifyStream,
  waitFor, walFiles, within,
} from './crash-kit.ts';
import { startLoad } from './load.ts';

const BIG_BODY_CHARS = 64 * 1024;
const BIG_BATCH_RECORDS = 100;
/** Bytes one big batch takes in the WAL: frame header plus per-record fixed fields and body. */
const BIG_FRAME_BYTES = 40 + BIG_BATCH_RECORDS * (4 + 8 + 4 + 4 + BIG_BODY_CHARS);
/** The WAL file size this star seals at. */
const WAL_FILE_BYTES = WAL_FILE_BYTES_MAX / 4;
const STAR_ARGS = ['--wal-file-bytes-max', String(WAL_FILE_BYTES)];
/** Big batches that fill one WAL file on their own (small load only adds to it). */
const BIG_BATCHES_TO_FILL = Math.ceil(WAL_FILE_BYTES / BIG_FRAME_BYTES);
const SETTLE_MAX_MS = 60_000;
const LOAD_END_MAX_MS = 30_000;

async function appendBig(baseUrl: string, m: StreamModel, rng: Rng, id: string): Promise<void> {
  const bodies: string[] = [];
  for (let i = 0; i < BIG_BATCH_RECORDS; i++) {
    const head = `${tagOf(id, i, BIG_BATCH_RECORDS)}|${m.key}|`;
    bodies.push(head + rng.bulk(BIG_BODY_CHARS - head.length));
  }
  const b = m.add(id, bodies);
  const res = await req(baseUrl, 'POST', `${streamPath(m.bucket, m.key)}/records`, { records: bodies.map((body) => ({ body })) }, 60_000);
  assert.equal(res.status, 200, `big append ${id}: ${res.text.slice(0, 300)}`);
  m.ack(b, res.body);
}

test('a WAL file filled past --wal-file-bytes-max settles into segments that serve reads after SIGKILL', { timeout: 120_000 }, async (t) => {
  const seed = runSeed();
  t.diagnostic(`seed ${seed}; ${BIG_BATCHES_TO_FILL} batches of ${BIG_BATCH_RECORDS} x ${BIG_BODY_CHARS} B fill a ${WAL_FILE_BYTES} B WAL file`);
  const rng = new Rng(seed);
  const dataDir = tempDir('svcd-settle-');
  let server: RunningServer = await startServer({ engine: 'uws', dataDir, args: STAR_ARGS });
  let ok = false;
  try {
    const bucket = 'settle';
    await createBucket(server.baseUrl, bucket);
    const big = new StreamModel(bucket, 'big');
    const small = new StreamModel(bucket, 'small');
    await createStream(server.baseUrl, bucket, big.key);
    await createStream(server.baseUrl, bucket, small.key);
    assert.ok(await waitFor(() => walFiles(dataDir).length > 0, 10_000), 'the server opened a WAL file');
    const firstWal = walFiles(dataDir)[0].no;

    // --- 1: fill the first WAL file under concurrent small load, wait for it to settle, then kill.
    let load = startLoad({ baseUrl: server.baseUrl, shared: [small], producers: 2, seed, cycle: 0 });
    for (let i = 0; i < BIG_BATCHES_TO_FILL; i++) await appendBig(server.baseUrl, big, rng, `a${i}`);
    const settled = await waitFor(() => !walFiles(dataDir).some((f) => f.no === firstWal) && segmentFiles(dataDir).length > 0, SETTLE_MAX_MS);
    assert.ok(settled, `WAL file ${firstWal} was not settled within ${SETTLE_MAX_MS} ms: wal ${JSON.stringify(walFiles(dataDir))}, segments ${segmentFiles(dataDir).length}`);
    const segsBefore = segmentFiles(dataDir).length;
    await appendBig(server.baseUrl, big, rng, 'a-after'); // one more, into the next WAL file
    await server.kill();
    load.stop();
    assert.ok(await within(load.done, LOAD_END_MAX_MS), 'small producers ended after the kill');
    assert.deepEqual(load.anomalies, []);

    server = await startServer({ engine: 'uws', dataDir, args: STAR_ARGS });
    assert.ok(!walFiles(dataDir).some((f) => f.no === firstWal), `settled WAL file ${firstWal} came back`);
    const walBytes = walFiles(dataDir).reduce((n, f) => n + f.bytes, 0);
    assert.ok(walBytes < WAL_FILE_BYTES, `the WAL holds ${walBytes} B: the settled records are not served from it`);
    let rb = await verifyStream(server.baseUrl, big);
    let rs = await verifyStream(server.baseUrl, small);
    assert.ok(rb.records >= BIG_BATCHES_TO_FILL * BIG_BATCH_RECORDS);
    t.diagnostic(`phase 1: ${segsBefore} segments; big ${rb.records} records, small ${rs.records} records (${rs.ambiguousPresent} ambiguous present)`);

    // --- 2: fill again and kill as soon as the crossing batch is acknowledged (settle in flight).
    load = startLoad({ baseUrl: server.baseUrl, shared: [small], producers: 2, seed, cycle: 1 });
    const walNow = walFiles(dataDir).map((f) => f.no);
    for (let i = 0; i < BIG_BATCHES_TO_FILL; i++) await appendBig(server.baseUrl, big, rng, `b${i}`);
    // The flusher opens the next file once it has sealed the full one: settling starts right then.
    const rotated = await waitFor(() => walFiles(dataDir).some((f) => f.no > Math.max(...walNow)), 10_000, 2);
    assert.ok(rotated, `the full WAL file was not sealed: ${JSON.stringify(walFiles(dataDir))}`);
    await server.kill();
    load.stop();
    assert.ok(await within(load.done, LOAD_END_MAX_MS), 'small producers ended after the kill');
    assert.deepEqual(load.anomalies, []);
    const walAtKill = walFiles(dataDir).map((f) => f.no);
    t.diagnostic(`phase 2: WAL files before ${JSON.stringify(walNow)}, at the kill ${JSON.stringify(walAtKill)}, ${segmentFiles(dataDir).length} segments`);

    server = await startServer({ engine: 'uws', dataDir, args: STAR_ARGS });
    rb = await verifyStream(server.baseUrl, big);
    rs = await verifyStream(server.baseUrl, small);
    // Recovery settles the recovered files again; once done, everything must still read back.
    const resettled = await waitFor(() => walFiles(dataDir).every((f) => f.bytes === 0 || !walAtKill.includes(f.no)), SETTLE_MAX_MS);
    assert.ok(resettled, `recovered WAL files were not settled within ${SETTLE_MAX_MS} ms: ${JSON.stringify(walFiles(dataDir))}`);
    rb = await verifyStream(server.baseUrl, big);
    rs = await verifyStream(server.baseUrl, small);

    // --- 3: the service keeps appending at the right place, and a last kill keeps it all.
    await appendBig(server.baseUrl, big, rng, 'c0');
    load = startLoad({ baseUrl: server.baseUrl, shared: [small], producers: 1, seed, cycle: 2 });
    await within(load.firstAck, 10_000);
    load.stop();
    assert.ok(await within(load.done, LOAD_END_MAX_MS));
    await server.kill();
    server = await startServer({ engine: 'uws', dataDir, args: STAR_ARGS });
    rb = await verifyStream(server.baseUrl, big);
    rs = await verifyStream(server.baseUrl, small);
    t.diagnostic(`phase 3: big ${rb.records} records, small ${rs.records} records, ${segmentFiles(dataDir).length} segments`);
    ok = true;
  } finally {
    await finishRun(t, server, dataDir, ok);
  }
});
