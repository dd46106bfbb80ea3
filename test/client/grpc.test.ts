// gRPC producer sessions against a real star: an ordered, pipelined session; typed errors with their
// details (seq_mismatch with the tail, fence_mismatch with the installed token, a Read past the tail); the session producer
// through a SIGKILL and restart (match_seq_num: exact), and a session cut by a SIGKILL without it
// (surfaced as ambiguous, not retried).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { AmbiguousAppendError, SvcClient, SvcError, type ReadRecord, type StreamAddress } from '../../src/client/index.ts';
import { GrpcClient } from '../../src/client/grpc/index.ts';
import { Star, text, uniq, waitFor } from './kit.ts';
import { closedPort } from '../helpers/ports.ts';

let star: Star;
let c: SvcClient;
let g: GrpcClient;

before(async () => {
  star = await Star.start({ grpc: true });
  c = new SvcClient({ url: star.url });
  g = new GrpcClient({ address: star.grpcAddress! });
});
after(async () => { g.close(); await star.stop(); });

async function newStream(): Promise<StreamAddress> {
  const bucket = uniq('b');
  await c.createBucket({ bucket });
  const a = { bucket, key: uniq('k') };
  await c.createStream(a);
  return a;
}

async function bodies(a: StreamAddress): Promise<string[]> {
  const out: ReadRecord[] = [];
  for await (const r of c.read(a, { start: { seqNum: 0 } })) out.push(r);
  return out.map((r) => text(r.body));
}

const range = (from: number, to: number): string[] => Array.from({ length: to - from }, (_, i) => `r${from + i}`);

test('a session pipelines batches and acks them in order; the session producer keeps order without match_seq_num', async () => {
  const a = await newStream();
  const s = await g.openSession(a);
  const acks = await Promise.all([0, 1, 2, 3].map((i) => s.append([{ body: `r${2 * i}` }, { body: `r${2 * i + 1}` }])));
  assert.deepEqual(acks.map((x) => x.start.seq_num), [0, 2, 4, 6]);
  await s.close();
  const p = g.producer(a, { batchRecordsMax: 100, inflightBatchesMax: 4 });
  for (let i = 8; i < 5000; i++) {
    await p.submit({ body: `r${i}` });
    assert.ok(p.inflightBatches <= 4);
  }
  await p.close();
  assert.deepEqual(await bodies(a), range(0, 5000));
});

test('typed errors over gRPC: a match_seq_num miss carries the tail, a fence mismatch the installed token', async () => {
  const a = await newStream();
  await c.append(a, [{ body: 'x' }]);
  const s = await g.openSession(a);
  await assert.rejects(s.append([{ body: 'y' }], 0), (err: unknown) =>
    err instanceof SvcError && err.kind === 'seq_mismatch' && err.code === 'OutOfRange' && err.grpcStatus === 11 && err.tail?.seq_num === 1 && !err.ambiguous);
  await c.fence(a, 'f1');
  const s2 = await g.openSession(a, { fencingToken: 'other' });
  await assert.rejects(s2.append([{ body: 'y' }]), (err: unknown) =>
    err instanceof SvcError && err.kind === 'fence_mismatch' && err.fencingToken === 'f1' && err.grpcStatus === 9);
  const s3 = await g.openSession(a, { fencingToken: 'f1' });
  assert.equal((await s3.append([{ body: 'y' }])).start.seq_num, 1);
  await s3.close();
  // A Read past the tail carries the tail too, and is HTTP's 416, not a match miss.
  await assert.rejects(g.readRange(a, 5, 1), (err: unknown) =>
    err instanceof SvcError && err.kind === 'range_not_satisfiable' && err.code === 'OutOfRange' && err.grpcStatus === 11 && err.tail?.seq_num === 2);
});

test('the session producer through a SIGKILL and restart: under match_seq_num every record exactly once', async () => {
  const a = await newStream();
  const n = 10_000;
  // 30 attempts backing off to 2 s ride out a restart of 30 s and more (a loaded machine: at 500 ms
  // the producer gave up after about 12 s while the star was still recovering).
  const p = g.producer(a, { matchSeqNum: 'tail', batchRecordsMax: 50, lingerMs: 1, retry: { backoffMsMin: 20, backoffMsMax: 2000 } });
  let acked = 0;
  const producing = (async () => {
    for (let i = 0; i < n; i++) {
      const t = await p.submit({ body: `r${i}` });
      void t.ack().then(() => { acked++; }, () => {});
    }
    await p.close();
  })();
  producing.catch(() => {});
  await waitFor('a few thousand acknowledged', () => acked >= 2000);
  await star.killAndRestart();
  await producing;
  assert.ok(p.stats.retries > 0, 'the kill was felt');
  assert.deepEqual(await bodies(a), range(0, n));
});

test('a session cut by a SIGKILL without match_seq_num: the batch is surfaced as ambiguous and not sent again', async () => {
  const a = await newStream();
  const p = g.producer(a, { lingerMs: 0 });
  await p.append({ body: 'before' });
  star.freeze();
  const t = await p.submit({ body: 'cut' });
  await new Promise((r) => setTimeout(r, 200)); // slack for the batch to leave (ordering, not an assertion)
  await star.kill();
  await assert.rejects(t.ack(), (err: unknown) => err instanceof AmbiguousAppendError && err.ambiguous);
  assert.ok(p.error instanceof AmbiguousAppendError);
  await star.restart();
  assert.deepEqual(await bodies(a), ['before'], 'not in the stream, and not sent again by the producer');
});

test('nothing listening on the gRPC address: a connection error, retried, never ambiguous (nothing was sent)', async () => {
  const down = new GrpcClient({ address: `127.0.0.1:${await closedPort()}` });
  const retries: unknown[] = [];
  try {
    const p = down.producer({ bucket: 'b', key: 'k' }, { lingerMs: 0, retry: { attemptsMax: 3, backoffMsMin: 1, backoffMsMax: 5 }, onRetry: (e) => retries.push(e) });
    const t = await p.submit({ body: 'x' });
    await assert.rejects(t.ack(), (err: unknown) => err instanceof SvcError && err.kind === 'connection' && !err.ambiguous);
    assert.ok(retries.length > 0, 'a connection refused is retried');
  } finally {
    down.close();
  }
});
