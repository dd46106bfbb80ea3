// AppendSession over a real grpc-js client: pipelined batches acked in order, the first failure
// ends the session with its typed detail, protocol misuse is INVALID_ARGUMENT, and the server stops
// reading a producer whose unacknowledged bytes pass APPEND_SESSION_INFLIGHT_BYTES_MAX.
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { APPEND_SESSION_INFLIGHT_BYTES_MAX } from '../../src/api/grpc/append-session.ts';
import type { AppendSessionRequest } from '../../src/gen/svc/v1/AppendSessionRequest.ts';
import type { AppendSessionResponse__Output } from '../../src/gen/svc/v1/AppendSessionResponse.ts';
import { bytes, call, detailsOf } from './client.ts';
import { FakeService } from './fake-service.ts';
import { BACKENDS, startHarness, startHarnessOn, type Harness } from './harness.ts';

const BUCKET = 'prod';

interface Outcome {
  acks: AppendSessionResponse__Output[];
  error?: grpc.ServiceError;
}

/** Writes every message without waiting for acks, half-closes, and gathers the outcome. */
function runSession(h: Harness, messages: AppendSessionRequest[], halfClose = true): Promise<Outcome> {
  const session = h.data.AppendSession();
  const acks: AppendSessionResponse__Output[] = [];
  const done = new Promise<Outcome>((resolve) => {
    session.on('data', (a: AppendSessionResponse__Output) => acks.push(a));
    session.once('error', (error: grpc.ServiceError) => resolve({ acks, error }));
    session.once('end', () => resolve({ acks }));
  });
  for (const m of messages) session.write(m);
  if (halfClose) session.end();
  return done;
}

const open = (key: string, fencing_token?: string): AppendSessionRequest => ({
  open: { bucket: BUCKET, key: bytes(key), ...(fencing_token !== undefined ? { fencing_token } : {}) },
});
const batch = (n: number, match_seq_num?: number): AppendSessionRequest => ({
  batch: {
    records: Array.from({ length: n }, (_, i) => ({ body: bytes(`b${i}`) })),
    ...(match_seq_num !== undefined ? { match_seq_num } : {}),
  },
});

for (const backend of BACKENDS) describe(`grpc append session (${backend.name})`, () => {
  let h: Harness;
  before(async () => {
    h = await startHarnessOn(backend);
    await call(h.data.CreateBucket.bind(h.data), { bucket: BUCKET, config: { create_stream_on_append: true } });
  });
  after(async () => { await h.stop(); });

  it('acks pipelined batches in order and ends cleanly on half-close', async () => {
    const out = await runSession(h, [open('s1'), ...Array.from({ length: 20 }, () => batch(3))]);
    assert.equal(out.error, undefined);
    assert.equal(out.acks.length, 20);
    out.acks.forEach((a, i) => {
      assert.equal(a.start?.seq_num, i * 3);
      assert.equal(a.end?.seq_num, i * 3 + 3);
    });
    const tail = await call(h.data.CheckTail.bind(h.data), { bucket: BUCKET, key: bytes('s1') });
    assert.equal(tail.tail?.seq_num, 60);
  });

  it('ends the session at the first failed batch with its typed detail', async () => {
    // Nothing is sent after the failing batch: a pipelined later batch may land and move the tail.
    const out = await runSession(h, [open('s2'), batch(1, 0), batch(1, 1), batch(1, 7)], false);
    assert.equal(out.acks.length, 2);
    assert.equal(out.error?.code, grpc.status.OUT_OF_RANGE);
    assert.equal(out.error && detailsOf(out.error)?.sequence?.tail?.seq_num, 2);
  });

  it('carries the fencing token from open to every batch', async () => {
    await call(h.data.CreateStream.bind(h.data), { bucket: BUCKET, key: bytes('f') });
    await call(h.data.Fence.bind(h.data), { bucket: BUCKET, key: bytes('f'), fencing_token: 'tok' });
    const ok = await runSession(h, [open('f', 'tok'), batch(2), batch(2)]);
    assert.equal(ok.error, undefined);
    assert.equal(ok.acks.length, 2);
    const bad = await runSession(h, [open('f', 'old'), batch(1)], false);
    assert.equal(bad.error?.code, grpc.status.FAILED_PRECONDITION);
    assert.equal(bad.error && detailsOf(bad.error)?.fence?.fencing_token, 'tok');
  });

  it('refuses a session that does not open first, or opens twice', async () => {
    const noOpen = await runSession(h, [batch(1)], false);
    assert.equal(noOpen.error?.code, grpc.status.INVALID_ARGUMENT);
    const twice = await runSession(h, [open('s3'), open('s3')], false);
    assert.equal(twice.error?.code, grpc.status.INVALID_ARGUMENT);
  });
});

// Holding appends back needs the fake core's gate.
describe('grpc append session flow control (fake core)', () => {
  let h: Harness;
  let fake: FakeService;
  before(async () => {
    fake = new FakeService();
    h = await startHarness(fake);
    await call(h.data.CreateBucket.bind(h.data), { bucket: BUCKET, config: { create_stream_on_append: true } });
  });
  after(async () => { await h.stop(); });

  it('stops reading the producer while unacknowledged bytes exceed the bound', async () => {
    const session = h.data.AppendSession();
    const acks: AppendSessionResponse__Output[] = [];
    let firstAck!: () => void;
    const gotFirst = new Promise<void>((r) => { firstAck = r; });
    const ended = new Promise<grpc.ServiceError | undefined>((resolve) => {
      session.once('error', (e: grpc.ServiceError) => resolve(e));
      session.once('end', () => resolve(undefined));
    });
    session.on('data', (a: AppendSessionResponse__Output) => { acks.push(a); if (acks.length === 1) firstAck(); });
    // The first batch goes alone (it may create the stream); pipelining starts once it is acked.
    session.write(open('flow'));
    session.write(batch(1));
    await gotFirst;

    let release!: () => void;
    fake.gate = new Promise<void>((r) => { release = r; });
    const before = fake.appendCalls;
    const batchBytes = 1024 * 1024;
    const bound = Math.ceil(APPEND_SESSION_INFLIGHT_BYTES_MAX / batchBytes);
    const total = bound + 24;
    const big: AppendSessionRequest = {
      batch: { records: [{ body: Buffer.alloc(batchBytes / 2, 1) }, { body: Buffer.alloc(batchBytes / 2, 2) }] },
    };
    for (let i = 0; i < total; i++) session.write(big);
    session.end();
    await new Promise((r) => setTimeout(r, 500));
    const admitted = fake.appendCalls - before;
    assert.ok(admitted <= bound + 1, `server kept reading past the bound: ${admitted} batches handed to the core (bound ${bound})`);
    assert.ok(admitted >= bound - 1, `server paused too early: ${admitted}`);
    fake.gate = undefined;
    release();
    assert.equal(await ended, undefined);
    assert.equal(acks.length, total + 1);
    assert.equal(acks[total].end?.seq_num, 1 + total * 2);
  });
});
