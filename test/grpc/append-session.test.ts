// AppendSession over a real grpc-js client against the real Star: pipelined batches acked in order,
// the first failure ends the session with its typed detail, protocol misuse is INVALID_ARGUMENT,
// fencing at open and supersession by a Fence, a reconfigure handoff ending live sessions once with
// UNAVAILABLE, deletion, the stream's batch caps, linger coalescing, throughput pacing, and real
// HTTP/2 back-pressure when the producer stops reading acks.
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { APPEND_SESSION_INFLIGHT_BATCHES_MAX } from '../../src/config/limits.ts';
import type { AppendSessionRequest } from '../../src/gen/svc/v1/AppendSessionRequest.ts';
import type { AppendSessionResponse__Output } from '../../src/gen/svc/v1/AppendSessionResponse.ts';
import { loadSvcProto } from '../../src/api/grpc/proto.ts';
import { bytes, call, detailsOf } from './client.ts';
import { startHarness, type Harness } from './harness.ts';

const BUCKET = 'prod';
/** The session cap of the test that reaches it (the star's default is APPEND_SESSIONS_PER_STAR_MAX). */
const SESSIONS_MAX = 64;

interface Outcome {
  acks: AppendSessionResponse__Output[];
  error?: grpc.ServiceError;
}

interface Session {
  stream: grpc.ClientDuplexStream<AppendSessionRequest, AppendSessionResponse__Output>;
  acks: AppendSessionResponse__Output[];
  done: Promise<Outcome>;
  /** Resolves once `n` acks have arrived. */
  acked(n: number): Promise<void>;
}

function openSession(h: Harness): Session {
  const stream = h.data.AppendSession();
  const acks: AppendSessionResponse__Output[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const done = new Promise<Outcome>((resolve) => {
    stream.on('data', (a: AppendSessionResponse__Output) => {
      acks.push(a);
      for (const w of waiters.filter((x) => acks.length >= x.n)) w.resolve();
    });
    stream.once('error', (error: grpc.ServiceError) => resolve({ acks, error }));
    stream.once('end', () => resolve({ acks }));
  });
  const acked = (n: number): Promise<void> => (acks.length >= n ? Promise.resolve() : new Promise((resolve) => { waiters.push({ n, resolve }); }));
  return { stream, acks, done, acked };
}

/** Writes every message without waiting for acks, half-closes, and gathers the outcome. */
function runSession(h: Harness, messages: AppendSessionRequest[], halfClose = true): Promise<Outcome> {
  const s = openSession(h);
  for (const m of messages) s.stream.write(m);
  if (halfClose) s.stream.end();
  return s.done;
}

const open = (key: string, fencing_token?: string): AppendSessionRequest => ({
  open: { bucket: BUCKET, key: bytes(key), ...(fencing_token !== undefined ? { fencing_token } : {}) },
});
const batch = (n: number, match_seq_num?: number, size = 2): AppendSessionRequest => ({
  batch: {
    records: Array.from({ length: n }, (_, i) => ({ body: Buffer.alloc(size, 97 + (i % 26)) })),
    ...(match_seq_num !== undefined ? { match_seq_num } : {}),
  },
});
const tailOf = async (h: Harness, key: string): Promise<number> =>
  (await call(h.data.CheckTail.bind(h.data), { bucket: BUCKET, key: bytes(key) })).tail?.seq_num ?? -1;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('grpc append session', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
    await call(h.data.CreateBucket.bind(h.data), { bucket: BUCKET, config: { create_stream_on_append: true } });
  });
  after(async () => { await h.stop(); });

  it('pipelines 1000 batches and acks them in order, creating the stream on the first', async () => {
    const s = openSession(h);
    s.stream.write(open('s1'));
    for (let i = 0; i < 1000; i++) s.stream.write(batch(3));
    s.stream.end();
    const out = await s.done;
    assert.equal(out.error, undefined);
    assert.equal(out.acks.length, 1000);
    out.acks.forEach((a, i) => {
      assert.equal(a.start?.seq_num, i * 3);
      assert.equal(a.end?.seq_num, i * 3 + 3);
      assert.ok((a.tail?.seq_num ?? 0) >= i * 3 + 3);
    });
    assert.equal(await tailOf(h, 's1'), 3000);
  });

  it('ends the session at the first failed batch with its typed detail', async () => {
    // Nothing is sent after the failing batch: a pipelined later batch may land and move the tail.
    const out = await runSession(h, [open('s2'), batch(1, 0), batch(1, 1), batch(1, 7)], false);
    assert.equal(out.acks.length, 2);
    assert.equal(out.error?.code, grpc.status.OUT_OF_RANGE);
    assert.equal(out.error && detailsOf(out.error)?.sequence?.tail?.seq_num, 2);
  });

  it('ends the session at a message that is not valid protobuf after acking every batch before it, appending none after it', async () => {
    const { packageDefinition } = loadSvcProto();
    const encode = (packageDefinition['svc.v1.AppendSessionRequest'] as unknown as { serialize(m: object): Buffer }).serialize;
    const raw = new grpc.Client(`127.0.0.1:${h.server.port}`, grpc.credentials.createInsecure());
    const stream = raw.makeBidiStreamRequest('/svc.v1.DataService/AppendSession', (b: Buffer) => b, (b: Buffer) => b);
    let acks = 0;
    const ended = new Promise<grpc.ServiceError | undefined>((resolve) => {
      stream.on('data', () => { acks += 1; });
      stream.once('error', resolve);
      stream.once('end', () => resolve(undefined));
    });
    stream.write(encode(open('undecodable')));
    for (let i = 0; i < 3; i++) stream.write(encode(batch(2)));
    stream.write(Buffer.from([0x12])); // `batch`'s tag and nothing after it
    stream.write(encode(batch(5)));
    stream.end();
    const err = await ended;
    raw.close();
    assert.equal(err?.code, grpc.status.INVALID_ARGUMENT, err?.details);
    assert.match(err?.details ?? '', /is not valid protobuf/);
    assert.equal(acks, 3, 'the batches before it are acked: the producer knows they landed');
    assert.equal(await tailOf(h, 'undecodable'), 6, 'the batch after it is not appended');
  });

  it('appends no batch pipelined behind a match_seq_num miss: the miss reports the tail before it, and only acked batches are in the stream', async () => {
    // The missing batch waits for the batch ahead of it to commit (so its tail is the next value to
    // try); the ones behind it must wait for its outcome, not be appended meanwhile without an ack.
    await call(h.data.CreateStream.bind(h.data), { bucket: BUCKET, key: bytes('miss') });
    // Written at once, so the miss arrives with the batches before it still in flight.
    const ahead = Array.from({ length: 20 }, () => batch(1));
    const out = await runSession(h, [open('miss'), ...ahead, batch(1, 5), batch(1), batch(1), batch(1)], false);
    assert.equal(out.acks.length, 20, 'the batches before the miss are acked');
    assert.equal(out.error?.code, grpc.status.OUT_OF_RANGE);
    assert.equal(out.error && detailsOf(out.error)?.sequence?.tail?.seq_num, 20, 'the next value to try is right after the acked batches');
    assert.equal(await tailOf(h, 'miss'), 20, 'nothing after the miss was appended');
  });

  it('refuses a session that does not open first, opens twice, or names a missing stream', async () => {
    const noOpen = await runSession(h, [batch(1)], false);
    assert.equal(noOpen.error?.code, grpc.status.INVALID_ARGUMENT);
    const twice = await runSession(h, [open('s3'), open('s3')], false);
    assert.equal(twice.error?.code, grpc.status.INVALID_ARGUMENT);
    assert.match(twice.error?.details ?? '', /only the first message may be `open`/);
    // An empty message after the open is named for what it lacks, not taken for a second open.
    const empty = await runSession(h, [open('s3'), {}], false);
    assert.equal(empty.error?.code, grpc.status.INVALID_ARGUMENT);
    assert.match(empty.error?.details ?? '', /must carry a `batch`/);
    await call(h.data.CreateBucket.bind(h.data), { bucket: 'strict' });
    const missing = await runSession(h, [{ open: { bucket: 'strict', key: bytes('nope') } }], false);
    assert.equal(missing.error?.code, grpc.status.NOT_FOUND);
    const noBucket = await runSession(h, [{ open: { bucket: 'nobucket', key: bytes('k') } }], false);
    assert.equal(noBucket.error?.code, grpc.status.NOT_FOUND);
  });

  it('requires the fencing token at open on a fenced stream, and carries it to every batch', async () => {
    await call(h.data.CreateStream.bind(h.data), { bucket: BUCKET, key: bytes('f'), config: { producer_policy: 'PRODUCER_POLICY_FENCED' } });
    const none = await runSession(h, [open('f')], false);
    assert.equal(none.error?.code, grpc.status.FAILED_PRECONDITION);
    assert.equal(none.error && detailsOf(none.error)?.fence?.fencing_token, '');
    await call(h.data.Fence.bind(h.data), { bucket: BUCKET, key: bytes('f'), fencing_token: 'tok' });
    const ok = await runSession(h, [open('f', 'tok'), batch(2), batch(2)]);
    assert.equal(ok.error, undefined);
    assert.equal(ok.acks.length, 2);
    const bad = await runSession(h, [open('f', 'old')], false);
    assert.equal(bad.error?.code, grpc.status.FAILED_PRECONDITION, 'refused at open, before any batch');
    assert.equal(bad.error && detailsOf(bad.error)?.fence?.fencing_token, 'tok');
  });

  it('a Fence with a new token supersedes every live session it does not admit', async () => {
    await call(h.data.CreateStream.bind(h.data), { bucket: BUCKET, key: bytes('fx') });
    await call(h.data.Fence.bind(h.data), { bucket: BUCKET, key: bytes('fx'), fencing_token: 'e1' });
    const old1 = openSession(h);
    const old2 = openSession(h);
    for (const s of [old1, old2]) {
      s.stream.write(open('fx', 'e1'));
      s.stream.write(batch(1));
    }
    await Promise.all([old1.acked(1), old2.acked(1)]);
    // A fence that still admits them (the same token) leaves them be.
    await call(h.data.Fence.bind(h.data), { bucket: BUCKET, key: bytes('fx'), fencing_token: 'e1' });
    for (const s of [old1, old2]) s.stream.write(batch(1));
    await Promise.all([old1.acked(2), old2.acked(2)]);
    // The new producer fences, then opens under its token.
    await call(h.data.Fence.bind(h.data), { bucket: BUCKET, key: bytes('fx'), fencing_token: 'e2' });
    const next = openSession(h);
    next.stream.write(open('fx', 'e2'));
    for (const s of [old1, old2]) {
      const out = await s.done;
      assert.equal(out.error?.code, grpc.status.FAILED_PRECONDITION);
      assert.equal(out.error && detailsOf(out.error)?.fence?.fencing_token, 'e2');
      assert.equal(out.acks.length, 2);
    }
    next.stream.write(batch(1));
    await next.acked(1);
    next.stream.end();
    assert.equal((await next.done).error, undefined);
    assert.equal(next.acks[0].start?.seq_num, 4);
  });

  it('a reconfigure that hands the stream off ends live sessions once with UNAVAILABLE; a reopen continues', async () => {
    await call(h.data.CreateStream.bind(h.data), { bucket: BUCKET, key: bytes('rc') });
    const s = openSession(h);
    s.stream.write(open('rc'));
    s.stream.write(batch(1));
    await s.acked(1);
    // Retention alone changes in place: no handoff.
    await call(h.data.ReconfigureStream.bind(h.data), { bucket: BUCKET, key: bytes('rc'), config: { retention_max_age_ms: 3_600_000 } });
    s.stream.write(batch(1));
    await s.acked(2);
    await call(h.data.ReconfigureStream.bind(h.data), { bucket: BUCKET, key: bytes('rc'), config: { timestamping_mode: 'TIMESTAMPING_MODE_ARRIVAL' } });
    const out = await s.done;
    assert.equal(out.error?.code, grpc.status.UNAVAILABLE);
    assert.equal(out.acks.length, 2);
    const again = await runSession(h, [open('rc'), batch(1)]);
    assert.equal(again.error, undefined);
    assert.equal(again.acks[0].start?.seq_num, 2);
  });

  it('ends live sessions NOT_FOUND when the stream is deleted', async () => {
    const s = openSession(h);
    s.stream.write(open('del'));
    s.stream.write(batch(1));
    await s.acked(1);
    await call(h.data.DeleteStream.bind(h.data), { bucket: BUCKET, key: bytes('del') });
    assert.equal((await s.done).error?.code, grpc.status.NOT_FOUND);
  });

  it('refuses a client batch over the stream batch caps', async () => {
    await call(h.data.CreateStream.bind(h.data), { bucket: BUCKET, key: bytes('caps'), config: { batch_max_records: 4, batch_max_bytes: 64 } });
    const tooMany = await runSession(h, [open('caps'), batch(4), batch(5)], false);
    assert.equal(tooMany.acks.length, 1);
    assert.equal(tooMany.error?.code, grpc.status.INVALID_ARGUMENT);
    const tooBig = await runSession(h, [open('caps'), batch(1, undefined, 65)], false);
    assert.equal(tooBig.error?.code, grpc.status.INVALID_ARGUMENT);
  });

  it('coalesces batches arriving within batch_max_delay_ms into one durable batch, acked one by one', async () => {
    await call(h.data.CreateStream.bind(h.data), {
      bucket: BUCKET, key: bytes('linger'),
      // The longest linger: the 10-record cap and the half-close flush, never the timer, so a stall
      // between the writes cannot split the batch (the timer's flush is tested on a virtual clock in
      // test/core/producer-session.test.ts).
      config: { batch_max_delay_ms: 60_000, batch_max_records: 10, timestamping_mode: 'TIMESTAMPING_MODE_ARRIVAL' },
    });
    const s = openSession(h);
    s.stream.write(open('linger'));
    s.stream.write(batch(2));
    await sleep(60);
    s.stream.write(batch(3));
    await sleep(60);
    s.stream.write(batch(5)); // fills the 10-record cap: flushed now, not at the delay
    await s.acked(3);
    s.stream.write(batch(1, 10));
    s.stream.end();
    const out = await s.done;
    assert.equal(out.error, undefined);
    assert.deepEqual(out.acks.map((a) => [a.start?.seq_num, a.end?.seq_num]), [[0, 2], [2, 5], [5, 10], [10, 11]]);
    const page = await call(h.data.Read.bind(h.data), { bucket: BUCKET, key: bytes('linger'), seq_num: 0 });
    const ts = page.records.map((r) => r.timestamp_ms);
    // Arrival stamps one time per durable batch: the three coalesced batches share it, though sent
    // 120 ms apart.
    assert.equal(new Set(ts.slice(0, 10)).size, 1, `one durable batch: ${ts.join(',')}`);
    out.acks.forEach((a) => {
      assert.equal(a.start?.timestamp_ms, ts[a.start?.seq_num ?? 0]);
      assert.equal(a.end?.timestamp_ms, ts[(a.end?.seq_num ?? 1) - 1]);
    });
  });

  it('paces the session to throughput_max_bytes_per_second', async () => {
    await call(h.data.CreateStream.bind(h.data), { bucket: BUCKET, key: bytes('slow'), config: { throughput_max_bytes_per_second: 100_000 } });
    const started = Date.now();
    // 250 kB at 100 kB/s with one second (100 kB) of burst: the fifth batch is read a second in.
    const out = await runSession(h, [open('slow'), ...Array.from({ length: 5 }, () => batch(5, undefined, 10_000))]);
    const took = Date.now() - started;
    assert.equal(out.error, undefined);
    assert.equal(out.acks.length, 5);
    // A lower bound only: pacing cannot let 250 kB through sooner than the bucket refills. How fast
    // it goes otherwise is the machine's business (test/core/producer-session.test.ts checks the
    // pacing itself on a virtual clock).
    assert.ok(took >= 800, `paced: took ${took} ms`);
  });

  it('stops reading a producer that stops reading acks (real HTTP/2 back-pressure), then drains', async () => {
    const total = 20_000;
    const s = openSession(h);
    s.stream.pause(); // the producer reads no acks
    s.stream.write(open('bp'));
    s.stream.write(batch(1));
    for (let i = 1; i < total; i++) s.stream.write(batch(1, undefined, 100));
    // Acks back up in HTTP/2 flow control, the session's unacknowledged batches reach their bound,
    // and it stops reading: the committed tail plateaus well short of what was sent.
    // A plateau is a tail past the session's bound that holds over PLATEAU_POLLS polls (a stall of the
    // machine early on must not pass for one), looked for up to a liveness bound.
    const PLATEAU_POLLS = 4;
    const deadline = Date.now() + 30_000;
    let last = -1;
    let same = 0;
    while (same < PLATEAU_POLLS && Date.now() < deadline) {
      await sleep(250);
      const t = await tailOf(h, 'bp').catch(() => -1); // the session's open may not have made the stream yet
      if (t === last && t > APPEND_SESSION_INFLIGHT_BATCHES_MAX) same += 1;
      else same = 0;
      last = t;
    }
    // A tail still creeping up at the deadline is a server that keeps reading, however slowly.
    assert.equal(same, PLATEAU_POLLS, `the tail never held still past the session's bound (last ${last})`);
    assert.ok(last > APPEND_SESSION_INFLIGHT_BATCHES_MAX, `the session pipelined before stalling (tail ${last})`);
    assert.ok(last < total, `the server kept reading a producer that reads no acks (tail ${last})`);
    s.stream.resume();
    s.stream.end();
    const out = await s.done;
    assert.equal(out.error, undefined);
    assert.equal(out.acks.length, total);
    assert.equal(out.acks[total - 1].end?.seq_num, total);
  });

  it('answers RESOURCE_EXHAUSTED past the open sessions per star, and gives a slot back when a session ends', async () => {
    const local = await startHarness({ sessionsMax: SESSIONS_MAX });
    await call(local.data.CreateBucket.bind(local.data), { bucket: BUCKET, config: { create_stream_on_append: true } });
    const sessions: Session[] = [];
    for (let i = 0; i < SESSIONS_MAX; i++) {
      const s = openSession(local);
      s.stream.write(open(`k${i % 8}`));
      s.stream.write(batch(1));
      sessions.push(s);
    }
    await Promise.all(sessions.map((s) => s.acked(1))); // every one is open in the core
    const over = await runSession(local, [open('k0'), batch(1)]);
    assert.equal(over.error?.code, grpc.status.RESOURCE_EXHAUSTED, over.error?.details);
    assert.equal(over.acks.length, 0, 'nothing of a refused session is appended');
    sessions[0].stream.end();
    assert.equal((await sessions[0].done).error, undefined);
    const next = openSession(local);
    next.stream.write(open('k0'));
    next.stream.write(batch(1));
    await next.acked(1); // the slot the ended session gave back
    next.stream.end();
    for (const s of sessions) s.stream.cancel();
    await local.stop();
  });

  it('a session takes its slot only once its caller is authorized: callers stuck in authorization hold none', async () => {
    // Two sessions wait in authorization for as long as the test says (the cap is 2); an authorized
    // producer must still get in, which it could not if the slots were taken at the call's arrival.
    let held = 0;
    let bothHeld!: () => void;
    const bothWaiting = new Promise<void>((resolve) => { bothHeld = resolve; });
    let release!: (e: Error) => void;
    const stuck = new Promise<never>((_, reject) => { release = reject; });
    stuck.catch(() => undefined);
    const local = await startHarness({
      sessionsMax: 2,
      auth: {
        authorize: (req) => {
          if (req.verb !== 'AppendSession' || req.metadata.get('authorization')[0] !== 'Bearer slow') return undefined;
          if (++held === 2) bothHeld();
          return stuck;
        },
      },
    });
    await call(local.data.CreateBucket.bind(local.data), { bucket: BUCKET, config: { create_stream_on_append: true } });
    const slowMd = new grpc.Metadata();
    slowMd.set('authorization', 'Bearer slow');
    const slow = [0, 1].map(() => {
      const st = local.data.AppendSession(slowMd);
      st.on('error', () => undefined);
      st.write(open('k'));
      return st;
    });
    await bothWaiting;
    const out = await runSession(local, [open('k'), batch(1)]);
    assert.equal(out.error, undefined, `${out.error?.code} ${out.error?.details}`);
    assert.equal(out.acks.length, 1);
    release(new Error('refused'));
    for (const st of slow) st.cancel();
    await local.stop();
  });

  it('ends open sessions with UNAVAILABLE at shutdown, after acking what the core took', async () => {
    const local = await startHarness();
    await call(local.data.CreateBucket.bind(local.data), { bucket: BUCKET, config: { create_stream_on_append: true } });
    const s = openSession(local);
    s.stream.write(open('k'));
    s.stream.write(batch(1));
    await s.acked(1);
    await local.server.close();
    const out = await s.done;
    assert.equal(out.error?.code, grpc.status.UNAVAILABLE);
    assert.equal(out.acks.length, 1);
    await local.stop();
  });
});
