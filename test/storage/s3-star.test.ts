// A real star with `--object-store s3` against s3rver on loopback: sealed WAL files settle into
// segments in the bucket (under the star's prefix, nothing in the data dir's objects/), reads serve
// that history across a SIGKILL and restart, ReadPlan's presigned URLs are S3's own and fetch the
// segment bytes with a Range, and a star whose bucket does not answer refuses to start.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { forEachRecord } from '../../src/storage/format/record-codec.ts';
import { S3ObjectStore } from '../../src/storage/objects/s3-store.ts';
import { parseFooter } from '../../src/storage/segments/segment-format.ts';
import { bytes, call, connect, type Clients } from '../grpc/client.ts';
import { removeDir, startServer, tempDir, waitForOutput, type RunningServer } from '../helpers/server.ts';
import { s3Args, startS3, type TestS3 } from '../helpers/s3.ts';

/** WAL files this small seal after a few appends, so segments appear quickly. */
const WAL_FILE_BYTES = 64 * 1024;
const RECORDS = 400;
const BATCH = 20;
/** How long settling into S3 may take. */
const SETTLE_WAIT_MS = 20_000;
const PREFIX = 'star-1/';

const body = (i: number): string => `record ${i} `.padEnd(700, String.fromCharCode(97 + (i % 26)));

describe('a star on the s3 object store (s3rver)', () => {
  let s3: TestS3;
  let dataDir: string;
  let star: RunningServer;
  let bucketView: S3ObjectStore;
  const args = (): string[] => [...s3Args(s3, PREFIX), '--wal-file-bytes-max', String(WAL_FILE_BYTES), '--grpc-listen', '127.0.0.1:0'];

  before(async () => {
    s3 = await startS3('svcd-segments');
    Object.assign(process.env, s3.env);
    bucketView = new S3ObjectStore({ backend: 's3', bucket: s3.bucket, prefix: PREFIX, region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true });
    dataDir = tempDir();
    star = await startServer({ dataDir, args: args(), env: s3.env });
  });
  after(async () => {
    await star.stop();
    bucketView.close();
    await s3.close();
    removeDir(dataDir);
  });

  test('settles into the bucket, serves that history after a SIGKILL, and vends S3-signed URLs', { timeout: 90_000 }, async () => {
    let u = star.baseUrl;
    assert.equal((await fetch(`${u}/v1/buckets/hist`, { method: 'POST', body: '{"create_stream_on_append":true}' })).status, 201);
    for (let i = 0; i < RECORDS; i += BATCH) {
      const records = Array.from({ length: BATCH }, (_, j) => ({ body: body(i + j) }));
      const r = await fetch(`${u}/v1/streams/hist/a%2Fb/records`, { method: 'POST', body: JSON.stringify({ records }) });
      assert.equal(r.status, 200, await r.text());
    }
    const deadline = Date.now() + SETTLE_WAIT_MS;
    let keys: string[] = [];
    while ((keys = await bucketView.list('streams/')).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.ok(keys.length >= 2, `segments settled into s3://${s3.bucket}/${PREFIX}streams/ (${keys.length})`);
    assert.deepEqual(readdirSync(join(dataDir, 'objects')), [], 'no segment is kept in the data dir');

    await star.kill();
    star = await startServer({ dataDir, args: args(), env: s3.env });
    u = star.baseUrl;
    const got: string[] = [];
    for (let seq = 0; seq < RECORDS;) {
      const page = await (await fetch(`${u}/v1/streams/hist/a%2Fb/records?seq_num=${seq}&limit=1000`)).json() as { records: { seq_num: number; body: string }[] };
      assert.ok(page.records.length > 0);
      for (const r of page.records) got.push(r.body);
      seq = page.records[page.records.length - 1].seq_num + 1;
    }
    assert.deepEqual(got, Array.from({ length: RECORDS }, (_, i) => body(i)), 'every record, in order, after the restart');

    const grpcPort = Number((await waitForOutput(star, /svcd grpc listening on [^\s:]+:(\d+)/))[1]);
    const c: Clients = connect(grpcPort);
    try {
      const plan = await call(c.data.ReadPlan.bind(c.data), { bucket: 'hist', key: bytes('a/b'), seq_num: 0 });
      assert.ok(plan.entries.length >= 1);
      const e = plan.entries[0];
      assert.equal(e.first_seq_num, 0);
      assert.ok(e.presigned_url?.startsWith(`${s3.endpoint}/${s3.bucket}/${PREFIX}streams/`), e.presigned_url);
      assert.match(e.presigned_url!, /X-Amz-Signature=/);
      const footer = await fetch(e.presigned_url!, { headers: { Range: `bytes=${e.footer_offset}-${e.footer_offset + e.footer_length - 1}` } });
      assert.equal(footer.status, 206);
      const bodies: string[] = [];
      for (const f of parseFooter(Buffer.from(await footer.arrayBuffer()))) {
        const frame = await fetch(e.presigned_url!, { headers: { Range: `bytes=${f.offset}-${f.offset + f.frameBytes - 1}` } });
        forEachRecord(Buffer.from(await frame.arrayBuffer()), 0, 0, (r) => { bodies.push(Buffer.from(r.body).toString()); return true; });
      }
      assert.equal(bodies.length, e.end_seq_num - e.first_seq_num);
      assert.deepEqual(bodies, got.slice(0, bodies.length), 'the vended object holds the records Read returns');
    } finally {
      c.close();
    }
  });

  test('a star whose S3 bucket does not answer refuses to start, with the reason', async () => {
    const otherDir = tempDir();
    try {
      await assert.rejects(
        startServer({ dataDir: otherDir, args: ['--object-store', 's3', '--s3-bucket', 'no-such-bucket', '--s3-endpoint', s3.endpoint, '--s3-force-path-style'], env: s3.env }),
        /svcd: objects: s3 bucket no-such-bucket/,
      );
    } finally {
      removeDir(otherDir);
    }
  });
});
