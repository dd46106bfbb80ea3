// The cluster's commit log against a real PostgreSQL schema and a file-system object store: frames a
// stream's previous state sequenced never commit once the stream was reloaded on this star (they
// would name positions the reloaded state hands out again), and the database itself refuses a chunk
// that overlaps one already committed. A commit whose answer is lost, and whose outcome PostgreSQL
// cannot be asked within the bound, is refused as of unknown outcome (it may have landed). A group
// whose object PUT fails is refused as certainly not stored, for the star to rewind the stream rather
// than drop it (chaos audit M3), and so is one whose PUT a silent S3 holds past the commit's bound.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import pgDriver from 'pg';
import { ClusterCommitLog } from '../../src/cluster/commit-log.ts';
import type { Timers } from '../../src/core/ports.ts';
import { encodeBatch, frameInfo } from '../../src/storage/format/record-codec.ts';
import { clusterApplicationName, PostgresCluster } from '../../src/storage/metadata/postgres-cluster.ts';
import { PostgresMetadataStore } from '../../src/storage/metadata/postgres-store.ts';
import { FsObjectStore } from '../../src/storage/objects/fs-store.ts';
import type { ObjectStore } from '../../src/storage/objects/object-store.ts';
import { dropSchema, freshSchema, postgresSkipReason, TEST_POSTGRES_URL } from '../helpers/postgres.ts';
import { removeDir, tempDir, within } from '../helpers/server.ts';
import { untilDurable } from '../helpers/durable.ts';
import { TcpRelay } from '../helpers/tcp-relay.ts';
import { createServer, type Socket } from 'node:net';
import { S3ObjectStore } from '../../src/storage/objects/s3-store.ts';
import { COMMIT_PUT_MS_MAX, PROXY_HEAD_MS_MAX } from '../../src/config/limits.ts';

const skip = await postgresSkipReason();

const timers: Timers = {
  setTimeout: (fn, ms) => { const t = setTimeout(fn, ms); return { cancel: () => clearTimeout(t) }; },
  setInterval: (fn, ms) => { const t = setInterval(fn, ms); return { cancel: () => clearInterval(t) }; },
  defer: (fn) => { setImmediate(fn); },
};

/** A frame of `bodies` for `streamId` from `firstSeq` on. */
const frame = (streamId: string, firstSeq: number, ...bodies: string[]): Buffer =>
  encodeBatch(streamId, firstSeq, bodies.map((b) => ({ timestamp_ms: 1, headers: [], body: Buffer.from(b) })));

describe('the cluster commit log', { skip }, () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  after(async () => { for (const c of cleanups.reverse()) await c(); });

  /** `through`: the store the commit log writes to, in front of the file-system one (a failing one). */
  async function setup(through?: (fs: FsObjectStore) => ObjectStore, bounds: { putMsMax?: number } = {}): Promise<{ pg: PostgresCluster; log: ClusterCommitLog; objects: FsObjectStore; streamId: string; epoch: number }> {
    const schema = freshSchema('svcd_commitlog');
    const meta = new PostgresMetadataStore({ url: TEST_POSTGRES_URL, schema });
    await meta.load(); // creates the tables
    const pg = new PostgresCluster(TEST_POSTGRES_URL, schema, 'star-t');
    const dir = tempDir('svcd-commitlog-');
    const objects = new FsObjectStore(dir);
    cleanups.push(async () => { await pg.close(); await meta.close(); await dropSchema(schema); removeDir(dir); });
    const took = await pg.take('b', 's', 60_000);
    assert.ok(took.taken);
    const streamId = randomUUID();
    const log = new ClusterCommitLog({
      starId: 'star-t', objects: through ? through(objects) : objects, pg, timers, leaseTtlMs: 60_000, incarnation: 'i1', ...bounds,
      leaderOf: (id) => (id === streamId ? { bucket: 'b', key: 's', epoch: took.epoch, express: false } : undefined),
    });
    return { pg, log, objects, streamId, epoch: took.epoch };
  }

  async function durable(log: ClusterCommitLog, end: number): Promise<void> {
    await untilDurable(log, () => log.durableOffset() >= end);
  }

  /** A commit log whose statements go through a breakable proxy to PostgreSQL, and a cluster handle
   *  (`direct`) that looks at the schema without it. */
  async function proxiedSetup(outcomeWaitMsMax: number): Promise<{ proxy: TcpRelay; direct: PostgresCluster; log: ClusterCommitLog; streamId: string; schema: string }> {
    const proxy = TcpRelay.toUrl(new URL(TEST_POSTGRES_URL));
    await proxy.start();
    cleanups.push(() => proxy.close());
    const schema = freshSchema('svcd_commitlog');
    const meta = new PostgresMetadataStore({ url: TEST_POSTGRES_URL, schema });
    await meta.load();
    const direct = new PostgresCluster(TEST_POSTGRES_URL, schema, 'star-t');
    const pg = new PostgresCluster(proxy.urlFor(new URL(TEST_POSTGRES_URL)), schema, 'star-t');
    const dir = tempDir('svcd-commitlog-');
    cleanups.push(async () => { await pg.close(); await direct.close(); await meta.close(); await dropSchema(schema); removeDir(dir); });
    const took = await pg.take('b', 's', 60_000);
    assert.ok(took.taken);
    const streamId = randomUUID();
    const log = new ClusterCommitLog({
      starId: 'star-t', objects: new FsObjectStore(dir), pg, timers, leaseTtlMs: 60_000, incarnation: 'i1', outcomeWaitMsMax,
      leaderOf: (id) => (id === streamId ? { bucket: 'b', key: 's', epoch: took.epoch, express: false } : undefined),
    });
    return { proxy, direct, log, streamId, schema };
  }

  test('frames queued before the stream was reloaded are refused; the reloaded state\'s frames commit at the same positions', async () => {
    const { pg, log, objects, streamId } = await setup();
    // The old state sequenced two appends, [0,1) and [1,2); the stream is reloaded before they commit.
    const oldA = log.tryAppend(frame(streamId, 0, 'old-a'));
    const oldB = log.tryAppend(frame(streamId, 1, 'old-b'));
    log.clear(streamId);
    // The reloaded state found nothing committed and hands out position 0 again.
    const fresh = log.tryAppend(frame(streamId, 0, 'new-a'));
    log.publish();
    await durable(log, fresh);
    assert.match(log.takeRefusal(oldA)?.cause ?? '', /reloaded/);
    assert.match(log.takeRefusal(oldB)?.cause ?? '', /reloaded/);
    assert.equal(log.takeRefusal(fresh), undefined, 'the reloaded state\'s append committed');
    const chunks = await pg.chunksOf(streamId, 0);
    assert.deepEqual(chunks.map((c) => [c.first_seq, c.end_seq]), [[0, 1]]);
    const bytes = await objects.get(chunks[0].object_key, { offset: chunks[0].byte_offset, length: chunks[0].byte_length });
    assert.equal(frameInfo(bytes).recordCount, 1);
    assert.equal(bytes.length, chunks[0].byte_length);
    assert.ok(bytes.includes(Buffer.from('new-a')) && !bytes.includes(Buffer.from('old-a')));
    // A later append of the reloaded state is not held back by the refusals.
    const next = log.tryAppend(frame(streamId, 1, 'new-b'));
    log.publish();
    await durable(log, next);
    assert.equal(log.takeRefusal(next), undefined);
    assert.deepEqual((await pg.chunksOf(streamId, 0)).map((c) => [c.first_seq, c.end_seq]), [[0, 1], [1, 2]]);
  });

  test('a group whose object PUT fails is refused as not stored, to be rewound: what the stream queued before the rewind never commits, what it appends after does (chaos audit M3)', async () => {
    let down = true;
    const { pg, log, streamId } = await setup((fs) => ({
      put: (key, body) => (down ? Promise.reject(new Error('the object store is unavailable (test)')) : fs.put(key, body)),
      get: (key, range) => fs.get(key, range), list: (prefix, limit) => fs.list(prefix, limit),
      delete: (key) => fs.delete(key), deleteMany: (keys) => fs.deleteMany(keys),
    }));
    const a = log.tryAppend(frame(streamId, 0, 'a'));
    log.publish();
    await durable(log, a);
    const refusedA = log.takeRefusal(a);
    assert.deepEqual(refusedA && { rewind: refusedA.rewind, outcomeUnknown: refusedA.outcomeUnknown }, { rewind: true, outcomeUnknown: false });
    assert.match(refusedA?.cause ?? '', /the commit failed/);
    // The store is back, but a frame sequenced past the gap (before the star saw the refusal) does not
    // commit: it follows the refused one.
    down = false;
    const b = log.tryAppend(frame(streamId, 1, 'b'));
    log.publish();
    await durable(log, b);
    assert.deepEqual(log.takeRefusal(b)?.followOn, true);
    // One more is queued when the star rewinds the stream to its committed tail (0): refused too.
    const c = log.tryAppend(frame(streamId, 2, 'c'));
    log.publish();
    log.rewind(streamId);
    const again = log.tryAppend(frame(streamId, 0, 'again'));
    log.publish();
    await durable(log, again);
    assert.deepEqual(log.takeRefusal(c)?.followOn, true);
    assert.equal(log.takeRefusal(again), undefined, 'the rewound stream commits again from its committed tail');
    assert.deepEqual((await pg.chunksOf(streamId, 0)).map((x) => [x.first_seq, x.end_seq]), [[0, 1]]);
  });

  test('a group whose PUT an S3 holds open and silent is refused as not stored within the commit\'s bound, not the store\'s request bounds', { timeout: 60_000 }, async () => {
    // The SDK signs with whatever credentials it finds; without any it would fail before sending.
    process.env.AWS_ACCESS_KEY_ID ??= 'S3RVER';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'S3RVER';
    const held: Socket[] = [];
    const silent = createServer((sock) => { held.push(sock); sock.on('error', () => undefined); });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    cleanups.push(() => { for (const sock of held) sock.destroy(); silent.close(); });
    // Each request may take a minute here: without the commit's own bound, the group waits for it.
    const s3 = new S3ObjectStore({
      backend: 's3', bucket: 'b', prefix: '', region: 'us-east-1', endpoint: `http://127.0.0.1:${(silent.address() as { port: number }).port}`,
      forcePathStyle: true, requestMsMax: 60_000,
    });
    const { pg, log, streamId } = await setup(() => s3, { putMsMax: 300 });
    const a = log.tryAppend(frame(streamId, 0, 'a'));
    log.publish();
    assert.ok(await within(untilDurable(log, () => log.durableOffset() >= a), 20_000), 'the group is answered within its bound');
    assert.ok(held.length >= 1, 'the PUT reached the silent server');
    const refused = log.takeRefusal(a);
    assert.deepEqual(refused && { rewind: refused.rewind, outcomeUnknown: refused.outcomeUnknown }, { rewind: true, outcomeUnknown: false });
    assert.deepEqual(await pg.chunksOf(streamId, 0), []);
  });

  test('a commit\'s PUT is bounded below a follower\'s hop, which then hears the definite refusal', () => {
    assert.ok(COMMIT_PUT_MS_MAX < PROXY_HEAD_MS_MAX, `COMMIT_PUT_MS_MAX ${COMMIT_PUT_MS_MAX} < PROXY_HEAD_MS_MAX ${PROXY_HEAD_MS_MAX}`);
  });

  test('a frame queued while the last group commits is committed without another append to start it', { timeout: 20_000 }, async () => {
    const { log, pg, streamId } = await setup();
    const first = log.tryAppend(frame(streamId, 0, 'a'));
    log.publish();
    // The group commit is under way (its object PUT, then its PostgreSQL statement) ...
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    assert.ok(log.durableOffset() < first, 'the first group has not finished yet');
    // ... when the next frame comes; nothing else is appended after it.
    const second = log.tryAppend(frame(streamId, 1, 'b'));
    log.publish();
    await durable(log, second);
    assert.equal(log.takeRefusal(first), undefined);
    assert.equal(log.takeRefusal(second), undefined);
    assert.deepEqual((await pg.chunksOf(streamId, 0)).map((c) => [c.first_seq, c.end_seq]), [[0, 1], [1, 2]]);
  });

  test('a commit that landed but whose answer was lost, with PostgreSQL out of reach after, is refused as of unknown outcome', { timeout: 30_000 }, async () => {
    const { proxy, direct, log, streamId } = await proxiedSetup(1500);
    assert.ok(proxy.deafen() > 0);
    const end = log.tryAppend(frame(streamId, 0, 'landed'));
    log.publish();
    // The statement committed (seen from another connection); its answer is dropped. Then every
    // connection goes and no new one is let through.
    for (let tries = 0; (await direct.chunksOf(streamId, 0)).length === 0; tries++) {
      assert.ok(tries < 200, 'the commit reached PostgreSQL');
      await new Promise((r) => setTimeout(r, 25));
    }
    proxy.close();
    await durable(log, end);
    const refusal = log.takeRefusal(end);
    assert.equal(refusal?.outcomeUnknown, true, `refused as of unknown outcome: ${JSON.stringify(refusal)}`);
    assert.match(refusal.cause, /the commit failed/);
  });

  test('a commit still waiting on the server when its connection drops never lands after being refused as not stored', { timeout: 60_000 }, async () => {
    // The statement reaches PostgreSQL and waits there for its lease row, which another session holds
    // locked; the star's connection is reset meanwhile. PostgreSQL does not notice a vanished client
    // while a statement waits on a lock: once the lock goes, the statement runs on and commits.
    const { proxy, direct, log, streamId, schema } = await proxiedSetup(5000);
    const locker = new pgDriver.Client({ connectionString: TEST_POSTGRES_URL });
    await locker.connect();
    cleanups.push(() => locker.end().catch(() => undefined));
    await locker.query('BEGIN');
    await locker.query(`SELECT 1 FROM ${schema}.leases FOR UPDATE`);
    const end = log.tryAppend(frame(streamId, 0, 'waited'));
    log.publish();
    const waiting = async (): Promise<number[]> => (await locker.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
      [clusterApplicationName(schema, 'star-t')])).rows.map((r) => r.pid);
    let pids: number[] = [];
    for (let tries = 0; pids.length === 0; tries++) {
      assert.ok(tries < 400, 'the commit reached PostgreSQL and waits for the lease row');
      await new Promise((r) => setTimeout(r, 25));
      pids = await waiting();
    }
    proxy.reset();
    await durable(log, end);
    const refusal = log.takeRefusal(end);
    assert.ok(refusal !== undefined, 'the append is refused: its answer was lost');
    await locker.query('ROLLBACK');
    // The statement runs on once the lock is gone, and ends: its backend leaves the lock queue.
    for (let tries = 0; (await waiting()).some((p) => pids.includes(p)); tries++) {
      assert.ok(tries < 400, 'the waiting statement ended');
      await new Promise((r) => setTimeout(r, 25));
    }
    const stored = await direct.chunksOf(streamId, 0);
    if (!refusal.outcomeUnknown) assert.deepEqual(stored, [], `refused as not stored (${refusal.cause}), so it must never land`);
    // The fence found the statement before it had taken its objects' rows: refused as not stored.
    assert.equal(refusal.outcomeUnknown, false, `refused as not stored: ${JSON.stringify(refusal)}`);
  });

  test('the database refuses a chunk that overlaps one already committed, even under the holder\'s epoch', async () => {
    const { pg, streamId, epoch } = await setup();
    const chunk = (first: number, end: number, objectKey: string) => ({
      bucket: 'b', key: 's', epoch, stream_id: streamId, first_seq: first, end_seq: end, object_key: objectKey, byte_offset: 0, byte_length: 1,
    });
    assert.deepEqual([...await pg.commit([chunk(0, 5, 'o1')], ['o1'], 60_000)], [0]);
    assert.deepEqual([...await pg.commit([chunk(3, 6, 'o2')], ['o2'], 60_000)], [], 'an overlapping chunk is refused');
    assert.deepEqual([...await pg.commit([chunk(5, 7, 'o3')], ['o3'], 60_000)], [0], 'the next one in order commits');
    assert.deepEqual((await pg.chunksOf(streamId, 0)).map((c) => [c.first_seq, c.end_seq]), [[0, 5], [5, 7]]);
  });
});
