// The stored-format marker (spec: Versioning, "wiping only one plane is invalid"): real stars on the
// embedded default and on PostgreSQL + s3rver, with one plane wiped for real between starts. A star
// must refuse to boot with a one-line reason rather than start empty over the other plane's data.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FORMAT_OBJECT_KEY, STORED_FORMAT_VERSION } from '../../src/storage/stored-format.ts';
import { removeDir, startServer, tempDir, type StartOptions } from '../helpers/server.ts';
import { dropSchema, freshSchema, postgresSkipReason, TEST_POSTGRES_URL } from '../helpers/postgres.ts';
import { s3Args, startS3 } from '../helpers/s3.ts';

/** Longest wait for a WAL file to settle into a segment. */
const SETTLE_WAIT_MS = 20_000;

async function post(url: string, body: unknown): Promise<number> {
  return (await fetch(url, { method: 'POST', body: JSON.stringify(body) })).status;
}

/** A star that settles at once, a stream with records in a segment, and the star stopped. */
async function starWithSegments(opts: StartOptions, segmentsExist: () => Promise<boolean>): Promise<void> {
  const star = await startServer(opts);
  try {
    assert.equal(await post(`${star.baseUrl}/v1/buckets/b`, {}), 201);
    assert.equal(await post(`${star.baseUrl}/v1/streams/b/s`, {}), 201);
    assert.equal(await post(`${star.baseUrl}/v1/streams/b/s/records`, { records: [{ body: 'kept' }] }), 200);
    const deadline = Date.now() + SETTLE_WAIT_MS;
    while (!(await segmentsExist()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.ok(await segmentsExist(), 'the record settled into a segment');
  } finally {
    await star.stop();
  }
}

/** The start's refusal: the child exits 2 before listening, and this is what it printed. */
async function refusal(opts: StartOptions): Promise<string> {
  const err = await startServer(opts).then(
    async (s) => { await s.stop(); return undefined; },
    (e: Error) => e,
  );
  assert.ok(err, 'the star refused to start');
  assert.match(err.message, /server exited \(2\) before listening/);
  return err.message;
}

/** The WAL file a first start writes to (storage/wal/wal-files.ts names files by number). */
const FIRST_WAL_FILE = '0000000001.wal';

describe('stored-format marker on the embedded default', () => {
  const dirs: string[] = [];
  after(() => { for (const d of dirs) removeDir(d); });
  const SETTLE = ['--wal-settle-after-ms', '100'];
  const fresh = async (): Promise<string> => {
    const dataDir = tempDir();
    dirs.push(dataDir);
    // Settled means the row naming the segment is durable too, not only the object uploaded: the
    // first WAL file is removed only then (the object store's directory appears before its upload ends).
    await starWithSegments({ dataDir, args: SETTLE }, async () => existsSync(join(dataDir, 'objects', 'streams'))
      && readdirSync(join(dataDir, 'objects', 'streams')).length > 0 && !existsSync(join(dataDir, 'wal', FIRST_WAL_FILE)));
    return dataDir;
  };

  test('a first start writes the same marker to both planes, and a restart accepts it', async () => {
    const dataDir = await fresh();
    const marker = JSON.parse(readFileSync(join(dataDir, 'objects', FORMAT_OBJECT_KEY), 'utf8'));
    assert.equal(marker.format_version, STORED_FORMAT_VERSION);
    assert.match(marker.cluster_id, /^[0-9a-f-]{36}$/);
    const star = await startServer({ dataDir, args: SETTLE });
    try {
      const page = await (await fetch(`${star.baseUrl}/v1/streams/b/s/records?seq_num=0`)).json() as { records: { body: string }[] };
      assert.deepEqual(page.records.map((r) => r.body), ['kept']);
    } finally {
      await star.stop();
    }
    assert.deepEqual(JSON.parse(readFileSync(join(dataDir, 'objects', FORMAT_OBJECT_KEY), 'utf8')), marker, 'unchanged by a restart');
  });

  test('metadata wiped, objects kept: refused, naming the metadata', async () => {
    const dataDir = await fresh();
    rmSync(join(dataDir, 'meta'), { recursive: true });
    assert.match(await refusal({ dataDir, args: SETTLE }), /svcd: metadata: the metadata store is empty but the object store holds cluster [0-9a-f-]+'s data/);
  });

  test('objects wiped, metadata kept: refused, naming the object store', async () => {
    const dataDir = await fresh();
    rmSync(join(dataDir, 'objects'), { recursive: true });
    assert.match(await refusal({ dataDir, args: SETTLE }), /svcd: objects: the metadata of cluster [0-9a-f-]+ records settled segments, but the object store holds none/);
  });

  test('both wiped together: a fresh cluster starts', async () => {
    const dataDir = await fresh();
    const before = JSON.parse(readFileSync(join(dataDir, 'objects', FORMAT_OBJECT_KEY), 'utf8'));
    for (const d of ['meta', 'objects', 'wal']) rmSync(join(dataDir, d), { recursive: true });
    const star = await startServer({ dataDir, args: SETTLE });
    await star.stop();
    const now = JSON.parse(readFileSync(join(dataDir, 'objects', FORMAT_OBJECT_KEY), 'utf8'));
    assert.notEqual(now.cluster_id, before.cluster_id);
  });

  test('the two planes naming different clusters: refused, naming both', async () => {
    const dataDir = await fresh();
    const path = join(dataDir, 'objects', FORMAT_OBJECT_KEY);
    const other = '00000000-0000-4000-8000-000000000000';
    writeFileSync(path, JSON.stringify({ ...JSON.parse(readFileSync(path, 'utf8')), cluster_id: other }));
    assert.match(await refusal({ dataDir, args: SETTLE }), new RegExp(`svcd: objects: the object store holds cluster ${other}, the metadata store cluster [0-9a-f-]+`));
  });

  test('a stored format of another version: refused with both versions named', async () => {
    const dataDir = await fresh();
    const path = join(dataDir, 'objects', FORMAT_OBJECT_KEY);
    writeFileSync(path, JSON.stringify({ ...JSON.parse(readFileSync(path, 'utf8')), format_version: STORED_FORMAT_VERSION + 1 }));
    assert.match(await refusal({ dataDir, args: SETTLE }), new RegExp(`objects: stored format version ${STORED_FORMAT_VERSION + 1}, but this build reads and writes version ${STORED_FORMAT_VERSION}`));
  });
});

const pgSkip = await postgresSkipReason();

describe('stored-format marker on PostgreSQL and s3rver', { skip: pgSkip }, () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  after(async () => { for (const c of cleanups.reverse()) await c(); });

  test('a fresh schema over a bucket that holds another cluster\'s segments is refused; the matching schema starts', async () => {
    const s3 = await startS3('svcd-format');
    cleanups.push(() => s3.close());
    const schema = freshSchema();
    const other = freshSchema();
    const dataDir = tempDir();
    cleanups.push(() => dropSchema(schema), () => dropSchema(other), () => removeDir(dataDir));
    const pgArgs = (s: string): string[] => ['--metadata', 'postgres', '--postgres-url', TEST_POSTGRES_URL, '--postgres-schema', s];
    const args = (s: string): string[] => [...pgArgs(s), ...s3Args(s3, 'c1/'), '--wal-settle-after-ms', '100'];
    const { S3ObjectStore } = await import('../../src/storage/objects/s3-store.ts');
    Object.assign(process.env, s3.env);
    const view = new S3ObjectStore({ backend: 's3', bucket: s3.bucket, prefix: 'c1/', region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true });
    cleanups.push(() => view.close());
    await starWithSegments({ dataDir, args: args(schema), env: s3.env }, async () => (await view.list('streams/', 1)).length > 0);
    const elsewhere = [tempDir(), tempDir()];
    cleanups.push(() => { for (const d of elsewhere) removeDir(d); });
    assert.match(
      await refusal({ dataDir: elsewhere[0], args: args(other), env: s3.env }),
      /svcd: metadata: the metadata store is empty but the object store holds cluster/,
    );
    const star = await startServer({ dataDir: elsewhere[1], args: args(schema), env: s3.env });
    await star.stop();
  });
});
