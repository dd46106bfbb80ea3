// Every HTTP call of SvcClient against a real star over real sockets: buckets and streams (create,
// get, list as async iterators over several pages, reconfigure, delete), appends with match_seq_num
// and fencing, reads from each kind of start with limit/until/clamp, tail, trim, fence, byte keys and
// byte bodies, and the typed errors (kind, wire code, status, retryability, tail / fencing_token).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { AddressError, SvcClient, SvcError, formatAddress, keyBytes, type ReadRecord, type StreamAddress } from '../../src/client/index.ts';
import { Star, text, uniq } from './kit.ts';
import { closedPort } from '../helpers/ports.ts';

let star: Star;
let c: SvcClient;

before(async () => {
  star = await Star.start();
  c = new SvcClient({ url: star.url });
});
after(async () => { await star.stop(); });

async function rejects(p: Promise<unknown>, check: (e: SvcError) => void): Promise<SvcError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof SvcError, `an SvcError, got ${String(err)}`);
    check(err);
    return err;
  }
  throw new Error('expected a failure');
}

async function all<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

async function newStream(config = {}): Promise<StreamAddress> {
  const bucket = uniq('b');
  await c.createBucket({ bucket });
  const a = { bucket, key: uniq('k') };
  await c.createStream(a, config);
  return a;
}

test('buckets: create (a retry with its creation token converges), get, update replaces whole, list over pages, delete', async () => {
  const names = [uniq('lb'), uniq('lb'), uniq('lb')];
  const made = await c.createBucket({ bucket: names[0] }, { create_stream_on_append: true }, { creationToken: 'tok-1' });
  assert.equal(made.create_stream_on_append, true);
  const again = await c.createBucket({ bucket: names[0] }, { create_stream_on_append: true }, { creationToken: 'tok-1' });
  assert.equal(again.created_at_unix_ms, made.created_at_unix_ms);
  await rejects(c.createBucket({ bucket: names[0] }), (e) => {
    assert.equal(e.kind, 'already_exists'); assert.equal(e.code, 'AlreadyExists'); assert.equal(e.status, 409); assert.equal(e.retryable, false);
  });
  for (const n of names.slice(1)) await c.createBucket({ bucket: n });
  assert.equal((await c.getBucket({ bucket: names[0] })).create_stream_on_append, true);
  const updated = await c.updateBucket({ bucket: names[0] }, { location: 'x' });
  assert.equal(updated.location, 'x');
  assert.equal(updated.create_stream_on_append, false, 'PUT replaces the config whole');

  const page = await c.listBuckets({ limit: 1 });
  assert.equal(page.items.length, 1);
  assert.notEqual(page.next, '');
  const listed = (await all(c.buckets({ limit: 1 }))).map((b) => b.name);
  for (const n of names) assert.ok(listed.includes(n), `${n} listed across one-bucket pages`);
  assert.equal(new Set(listed).size, listed.length, 'no bucket listed twice');

  await c.deleteBucket({ bucket: names[2] });
  await rejects(c.getBucket({ bucket: names[2] }), (e) => { assert.equal(e.kind, 'not_found'); assert.equal(e.status, 404); });
});

test('a bucket with streams is not deleted: bucket_not_empty', async () => {
  const a = await newStream();
  await rejects(c.deleteBucket({ bucket: a.bucket }), (e) => { assert.equal(e.kind, 'bucket_not_empty'); assert.equal(e.status, 409); });
});

test('the keys . and .. are refused before anything is sent: fetch would fold them into another resource', async () => {
  const a = await newStream();
  for (const key of ['.', '..', new Uint8Array([0x2e]), new Uint8Array([0x2e, 0x2e])]) {
    const dot = { bucket: a.bucket, key };
    await assert.rejects(c.fence(dot, 't'), AddressError, `fence on ${String(key)}`);
    await assert.rejects(c.append(dot, [{ body: 'x' }]), AddressError);
    await assert.rejects(c.readPage(dot, { start: { seqNum: 0 }, limit: 1 }), AddressError);
  }
  // Before the check, a fence on '.' went to POST /v1/streams/{bucket}/fence: CreateStream of 'fence'.
  const listed = await c.listStreams({ bucket: a.bucket });
  assert.deepEqual(listed.items.map((s) => s.key), [a.key], 'no stream was made by a folded path');
});

test('streams: create, get with the fencing token, reconfigure, list over pages, delete (idempotent), byte keys', async () => {
  const bucket = uniq('sb');
  await c.createBucket({ bucket });
  const keys: (string | Uint8Array)[] = ['a', 'orders/eu', 'sp ace%', new Uint8Array([0xff, 0x01, 0x2f])];
  for (const key of keys) await c.createStream({ bucket, key }, { retention_max_age_ms: 1000 });
  const s = await c.getStream({ bucket, key: 'orders/eu' });
  assert.equal(s.key, 'orders/eu');
  assert.equal(s.fencing_token, '');
  assert.equal(s.retention_max_age_ms, 1000);
  const bytesKey = await c.getStream({ bucket, key: keys[3] });
  assert.ok(bytesKey.key instanceof Uint8Array, 'a key that is not UTF-8 comes back as bytes');
  assert.deepEqual([...keyBytes(bytesKey.key)], [0xff, 0x01, 0x2f]);

  const re = await c.reconfigureStream({ bucket, key: 'a' }, { retention_max_age_ms: 0, timestamping_mode: 'arrival' });
  assert.equal(re.retention_max_age_ms, 0);
  assert.equal(re.timestamping_mode, 'arrival');

  const listed = await all(c.streams({ bucket }, { limit: 1 }));
  assert.deepEqual(listed.map((x) => formatAddress(x)).sort(), keys.map((key) => formatAddress({ bucket, key })).sort());

  await c.deleteStream({ bucket, key: 'a' });
  await c.deleteStream({ bucket, key: 'a' }); // idempotent on a deleted stream
  await rejects(c.deleteStream({ bucket, key: uniq('never') }), (e) => assert.equal(e.kind, 'not_found'));
  await rejects(c.createStream({ bucket, key: 'orders/eu' }), (e) => assert.equal(e.kind, 'already_exists'));
});

test('append: text and byte bodies and headers round-trip through a read; acks carry start, end and tail', async () => {
  const a = await newStream();
  const ack = await c.append(a, [
    { body: 'hello' },
    { body: new Uint8Array([0, 0xff, 0x80]), headers: [['h1', 'v1'], [new Uint8Array([0xfe]), new Uint8Array([1, 2])]] },
    { body: '' },
  ]);
  assert.equal(ack.start.seq_num, 0);
  assert.equal(ack.end.seq_num, 3);
  assert.equal(ack.tail.seq_num, 3);
  const got = await all(c.read(a, { start: { seqNum: 0 } }));
  assert.deepEqual(got.map((r) => r.seq_num), [0, 1, 2]);
  assert.equal(text(got[0].body), 'hello');
  assert.deepEqual([...got[1].body], [0, 0xff, 0x80]);
  assert.deepEqual(got[1].headers.map((h) => [[...h.name], [...h.value]]), [[[...Buffer.from('h1')], [...Buffer.from('v1')]], [[0xfe], [1, 2]]]);
  assert.equal(got[2].body.length, 0);
  assert.deepEqual(await c.checkTail(a), ack.tail);
});

test('append with match_seq_num: a hit appends, a miss is seq_mismatch with the tail, nothing appended', async () => {
  const a = await newStream();
  await c.append(a, [{ body: 'x' }], { matchSeqNum: 0 });
  const e = await rejects(c.append(a, [{ body: 'y' }], { matchSeqNum: 0 }), (err) => {
    assert.equal(err.kind, 'seq_mismatch'); assert.equal(err.code, 'OutOfRange'); assert.equal(err.status, 412);
    assert.equal(err.retryable, false); assert.equal(err.ambiguous, false);
  });
  assert.equal(e.tail?.seq_num, 1, 'tail.seq_num is the match_seq_num to try next');
  await c.append(a, [{ body: 'y' }], { matchSeqNum: e.tail!.seq_num });
  assert.equal((await c.checkTail(a)).seq_num, 2);
});

test('fence: installs a token; appends without it are fence_mismatch with the installed token; clearing lifts it', async () => {
  const a = await newStream();
  const t = await c.fence(a, 'epoch-1');
  assert.equal(t.seq_num, 0);
  assert.equal((await c.getStream(a)).fencing_token, 'epoch-1');
  const e = await rejects(c.append(a, [{ body: 'x' }]), (err) => {
    assert.equal(err.kind, 'fence_mismatch'); assert.equal(err.code, 'FailedPrecondition'); assert.equal(err.status, 412);
  });
  assert.equal(e.fencingToken, 'epoch-1');
  await c.append(a, [{ body: 'x' }], { fencingToken: 'epoch-1' });
  await c.fence(a, '', {});
  await c.append(a, [{ body: 'y' }]);
  assert.equal((await c.checkTail(a)).seq_num, 2);
});

test('reads: from a seq_num, a timestamp and a tail offset, with limit, until and pages; trim, 410 and clamp', async () => {
  const a = await newStream({ timestamping_mode: 'client-require' });
  const records = Array.from({ length: 50 }, (_, i) => ({ body: `r${i}`, timestamp_ms: 1000 + i * 10 }));
  await c.append(a, records);
  const bodies = (rs: ReadRecord[]): string[] => rs.map((r) => text(r.body));
  assert.deepEqual(bodies(await all(c.read(a, { start: { seqNum: 0 }, pageRecords: 7 }))), records.map((r) => r.body), 'every record across 7-record pages');
  assert.deepEqual(bodies(await all(c.read(a, { start: { seqNum: 10 }, limit: 3 }))), ['r10', 'r11', 'r12']);
  assert.deepEqual(bodies(await all(c.read(a, { start: { timestampMs: 1095 } , limit: 2 }))), ['r10', 'r11']);
  assert.deepEqual(bodies(await all(c.read(a, { start: { tailOffset: 2 } }))), ['r48', 'r49']);
  assert.deepEqual(bodies(await all(c.read(a, { start: { seqNum: 0 }, untilMs: 1030, pageRecords: 2 }))), ['r0', 'r1', 'r2']);
  const pages = await all(c.readPages(a, { start: { seqNum: 0 }, pageRecords: 20 }));
  assert.deepEqual(pages.map((p) => p.records.length), [20, 20, 10]);
  assert.equal(pages[0].tail.seq_num, 50);

  await c.trim(a, { seqNum: 20 });
  await rejects(all(c.read(a, { start: { seqNum: 0 } })), (e) => { assert.equal(e.kind, 'trimmed'); assert.equal(e.status, 410); });
  assert.equal((await all(c.read(a, { start: { seqNum: 0 }, clamp: true, limit: 1 })))[0].seq_num, 20);
  await c.trim(a, { timestampMs: 1300 });
  assert.equal((await all(c.read(a, { start: { seqNum: 0 }, clamp: true, limit: 1 })))[0].seq_num, 30);
  await rejects(all(c.read(a, { start: { seqNum: 99 } })), (e) => { assert.equal(e.kind, 'range_not_satisfiable'); assert.equal(e.status, 416); });
});

test('errors are typed: invalid_argument, not_found; an unreachable server is a connection error after bounded retries', async () => {
  const a = await newStream();
  await rejects(c.append(a, []), (e) => { assert.equal(e.kind, 'invalid_argument'); assert.equal(e.code, 'InvalidArgument'); assert.equal(e.status, 400); });
  await rejects(c.checkTail({ bucket: a.bucket, key: uniq('none') }), (e) => { assert.equal(e.kind, 'not_found'); assert.equal(e.code, 'NotFound'); });
  const dead = new SvcClient({ url: `http://127.0.0.1:${await closedPort()}`, retry: { attemptsMax: 2, backoffMsMin: 1, backoffMsMax: 2 } });
  await rejects(dead.checkTail(a), (e) => { assert.equal(e.kind, 'connection'); assert.equal(e.retryable, true); assert.equal(e.status, undefined); });
  // A refused connection never reached a server: definite, even for an append.
  await rejects(dead.append(a, [{ body: 'x' }]), (e) => { assert.equal(e.kind, 'connection'); assert.equal(e.ambiguous, false); });
  // A port fetch blocks (6000, X11's) is refused before anything is sent: definite, not retried.
  const blocked = new SvcClient({ url: 'http://127.0.0.1:6000', retry: { attemptsMax: 2, backoffMsMin: 1, backoffMsMax: 2 } });
  await rejects(blocked.append(a, [{ body: 'x' }]), (e) => { assert.equal(e.kind, 'invalid_argument'); assert.equal(e.ambiguous, false); assert.match(e.message, /nothing was sent/); });
});

test('the client is importable as svcd/client (package.json exports)', async () => {
  const mod = await import('svcd/client');
  assert.equal(mod.SvcClient, SvcClient);
  const grpc = await import('svcd/client/grpc');
  assert.equal(typeof grpc.GrpcClient, 'function');
});

test('matchSeqNum tail: the tail that pins the first batch is read again while nothing listens, under the retry policy', async () => {
  const down = new SvcClient({ url: `http://127.0.0.1:${await closedPort()}` });
  const retried: number[] = [];
  const p = down.producer({ bucket: 'b', key: 'k' }, { matchSeqNum: 'tail', lingerMs: 0, retry: { attemptsMax: 3, backoffMsMin: 1, backoffMsMax: 5 }, onRetry: (e) => retried.push(e.attempt) });
  const t = await p.submit({ body: 'x' });
  await assert.rejects(t.ack());
  assert.equal((p.error as SvcError | undefined)?.kind, 'connection');
  assert.deepEqual(retried.slice(0, 2), [1, 2], 'the tail lookup was tried three times before giving up');
});
