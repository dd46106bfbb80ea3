// gRPC append messages of at least GRPC_WORKER_DECODE_BYTES_MIN are decoded, checked and encoded on a
// parse worker (src/api/grpc/append-decode.ts reads them shallowly on the event loop), against a real
// star child: their records land exactly as sent, interleaved with small batches in a session in
// order; a bad record or malformed protobuf inside is refused as on the event loop; and /metrics
// counts each message the worker took (svcd_append_worker_decodes).
import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { GRPC_WORKER_DECODE_BYTES_MIN } from '../../src/config/limits.ts';
import type { AppendRecord } from '../../src/gen/svc/v1/AppendRecord.ts';
import type { AppendSessionRequest } from '../../src/gen/svc/v1/AppendSessionRequest.ts';
import type { AppendSessionResponse__Output } from '../../src/gen/svc/v1/AppendSessionResponse.ts';
import { loadSvcProto } from '../../src/api/grpc/proto.ts';
import { waitForOutput } from '../helpers/server.ts';
import { startGrpcChild, type GrpcChild } from './child.ts';
import { bytes, call, failure } from './client.ts';

const BUCKET = 'big';
const APPEND = '/svc.v1.DataService/Append';

/** Client timestamps rise from record to record across the file (a stream keeps them monotonic). */
let clockMs = 1_700_000_000_000;

/** `n` records of 60-odd bytes with headers and client timestamps, `tag` in every body. */
function records(n: number, tag: string): AppendRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    timestamp_ms: clockMs++,
    headers: [{ name: bytes('h'), value: bytes(`${tag}-${i}`) }, { name: bytes('empty'), value: Buffer.alloc(0) }],
    body: bytes(`${tag}:${i}:`.padEnd(40, '.')),
  }));
}

/** Records enough that the message passes GRPC_WORKER_DECODE_BYTES_MIN. */
const LARGE = Math.ceil(GRPC_WORKER_DECODE_BYTES_MIN / 60) + 10;

const { packageDefinition } = loadSvcProto();
const encodeAppend = (packageDefinition['svc.v1.AppendRequest'] as unknown as { serialize(m: object): Buffer }).serialize;

describe('gRPC appends decoded on a parse worker', () => {
  let child: GrpcChild;
  let ops: string;
  let raw: grpc.Client;
  before(async () => {
    child = await startGrpcChild({ args: ['--metrics-listen', '127.0.0.1:0'] });
    ops = `http://127.0.0.1:${(await waitForOutput(child.server, /svcd ops on http:\/\/127\.0\.0\.1:(\d+)/))[1]}`;
    raw = new grpc.Client(`127.0.0.1:${child.grpcPort}`, grpc.credentials.createInsecure());
    await call(child.data.CreateBucket.bind(child.data), { bucket: BUCKET, config: { create_stream_on_append: true, default_stream_config: { timestamping_mode: 'TIMESTAMPING_MODE_CLIENT_REQUIRE' } } });
  });
  after(async () => {
    raw.close();
    await child.stop();
  });

  const workerDecodes = async (): Promise<number> => {
    // A connection of its own each time (polled in a loop below: a kept-alive one may be closed by the
    // ops listener just as it is reused).
    const text = await new Promise<string>((resolve, reject) => {
      http.get(`${ops}/metrics`, { agent: false }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => resolve(Buffer.concat(parts).toString()));
        res.on('error', reject);
      }).on('error', reject);
    });
    const m = /^svcd_append_worker_decodes\{transport="grpc"\} (\d+)$/m.exec(text);
    assert.ok(m, 'svcd_append_worker_decodes{transport="grpc"} on /metrics');
    return Number(m[1]);
  };

  /** Every record of the stream, in order, as "body|headers|timestamp". */
  async function readAll(key: string): Promise<string[]> {
    const out: string[] = [];
    for (;;) {
      const req = { bucket: BUCKET, key: bytes(key), seq_num: out.length, limit: 1000 };
      const page = await call(child.data.Read.bind(child.data), req).catch((err: grpc.ServiceError) => {
        if (err.code === grpc.status.NOT_FOUND && out.length === 0) return { records: [] }; // never created
        throw err;
      });
      if (page.records.length === 0) return out;
      for (const r of page.records) {
        out.push(`${r.body.toString()}|${r.headers.map((h) => `${h.name.toString()}=${h.value.toString()}`).join(',')}|${r.timestamp_ms}`);
      }
    }
  }
  const expected = (rs: AppendRecord[]): string[] =>
    rs.map((r) => `${Buffer.from(r.body as Buffer).toString()}|${(r.headers ?? []).map((h) => `${Buffer.from(h.name as Buffer).toString()}=${Buffer.from(h.value as Buffer).toString()}`).join(',')}|${String(r.timestamp_ms)}`);

  it('a large Append lands exactly as sent, decoded on the worker; a small one stays on the event loop', { timeout: 60_000 }, async () => {
    const before0 = await workerDecodes();
    const big = records(LARGE, 'u');
    assert.ok(encodeAppend({ bucket: BUCKET, key: bytes('unary'), records: big }).length >= GRPC_WORKER_DECODE_BYTES_MIN);
    const ack = await call(child.data.Append.bind(child.data), { bucket: BUCKET, key: bytes('unary'), records: big });
    assert.equal(Number(ack.end?.seq_num), LARGE);
    assert.equal(await workerDecodes(), before0 + 1);
    const small = records(3, 's');
    await call(child.data.Append.bind(child.data), { bucket: BUCKET, key: bytes('unary'), records: small, match_seq_num: LARGE });
    assert.equal(await workerDecodes(), before0 + 1);
    assert.deepEqual(await readAll('unary'), expected([...big, ...small]));
  });

  it('a large Append with a bad record is refused as a small one is, and nothing of it lands', { timeout: 60_000 }, async () => {
    const bad = (n: number): AppendRecord[] => {
      const rs = records(n, 'b');
      rs[n - 1] = { ...rs[n - 1], headers: [{ name: Buffer.alloc(0), value: bytes('v') }] };
      return rs;
    };
    const smallErr = await failure(child.data.Append.bind(child.data), { bucket: BUCKET, key: bytes('bad'), records: bad(2) });
    const before0 = await workerDecodes();
    const bigErr = await failure(child.data.Append.bind(child.data), { bucket: BUCKET, key: bytes('bad'), records: bad(LARGE) });
    assert.equal(await workerDecodes(), before0 + 1);
    assert.equal(bigErr.code, grpc.status.INVALID_ARGUMENT, bigErr.details);
    assert.equal(bigErr.details, smallErr.details.replace('records[1]', `records[${LARGE - 1}]`));
    // The client-require stream refuses a large batch missing a timestamp in the core, as a small one.
    const untimed = records(LARGE, 't').map(({ headers, body }) => ({ headers, body }));
    const untimedErr = await failure(child.data.Append.bind(child.data), { bucket: BUCKET, key: bytes('bad'), records: untimed });
    assert.equal(untimedErr.code, grpc.status.INVALID_ARGUMENT, untimedErr.details);
    assert.match(untimedErr.details, /timestamp/);
    assert.deepEqual(await readAll('bad'), []);
  });

  it('malformed protobuf inside a large message\'s records is INVALID_ARGUMENT from the worker', { timeout: 60_000 }, async () => {
    const good = encodeAppend({ bucket: BUCKET, key: bytes('malformed'), records: records(LARGE, 'm') });
    // One more record (field 3) whose body (field 3 inside it) claims 5 bytes of the record's 2.
    const message = Buffer.concat([good, Buffer.from([0x1a, 0x02, 0x1a, 0x05])]);
    const before0 = await workerDecodes();
    const answer = await new Promise<grpc.ServiceError | null>((resolve) => {
      raw.makeUnaryRequest(APPEND, (b: Buffer) => b, (b: Buffer) => b, message, new grpc.Metadata(), (err) => resolve(err));
    });
    assert.equal(answer?.code, grpc.status.INVALID_ARGUMENT, answer?.details);
    assert.match(answer?.details ?? '', /^a request message of \/svc\.v1\.DataService\/Append is not valid protobuf: a field runs past the end of its message$/);
    assert.equal(await workerDecodes(), before0 + 1);
    assert.deepEqual(await readAll('malformed'), []);
  });

  it('an Append cancelled while its message waits for a parse worker is never appended', { timeout: 120_000 }, async () => {
    // Both parse threads are kept busy with half a million one-byte headers each (a second or more of
    // decoding), so the cancelled call's message is still queued when the cancel arrives.
    const heavy = encodeAppend({
      bucket: BUCKET, key: bytes('heavy'),
      records: Array.from({ length: 65_536 }, () => ({ timestamp_ms: clockMs, headers: Array.from({ length: 8 }, () => ({ name: bytes('h'), value: bytes('v') })), body: bytes('x') })),
    });
    const send = (message: Buffer): { done: Promise<grpc.ServiceError | null>; call: grpc.ClientUnaryCall } => {
      let call!: grpc.ClientUnaryCall;
      const done = new Promise<grpc.ServiceError | null>((resolve) => {
        call = raw.makeUnaryRequest(APPEND, (b: Buffer) => b, (b: Buffer) => b, message, new grpc.Metadata(), (err) => resolve(err));
      });
      return { done, call };
    };
    const before0 = await workerDecodes();
    const busy = [send(heavy), send(heavy)];
    while ((await workerDecodes()) < before0 + 2) await new Promise((r) => setTimeout(r, 20));
    const doomed = send(encodeAppend({ bucket: BUCKET, key: bytes('cancelled'), records: records(LARGE, 'c') }));
    while ((await workerDecodes()) < before0 + 3) await new Promise((r) => setTimeout(r, 20));
    doomed.call.cancel();
    assert.equal((await doomed.done)?.code, grpc.status.CANCELLED);
    for (const b of busy) assert.equal(await b.done, null, 'the busy Appends succeed');
    // One more large Append to the same stream, queued for a worker behind the cancelled one: once it
    // is acked, anything the cancelled call had appended would be in the stream before it.
    const after0 = records(LARGE, 'after');
    await call(child.data.Append.bind(child.data), { bucket: BUCKET, key: bytes('cancelled'), records: after0 });
    assert.deepEqual(await readAll('cancelled'), expected(after0));
  });

  /** Writes every message pipelined, half-closes, and gathers the acks and the ending. */
  function session(messages: AppendSessionRequest[]): Promise<{ acks: AppendSessionResponse__Output[]; error?: grpc.ServiceError }> {
    const s = child.data.AppendSession();
    const acks: AppendSessionResponse__Output[] = [];
    const done = new Promise<{ acks: AppendSessionResponse__Output[]; error?: grpc.ServiceError }>((resolve) => {
      s.on('data', (a: AppendSessionResponse__Output) => acks.push(a));
      s.once('error', (error: grpc.ServiceError) => resolve({ acks, error }));
      s.once('end', () => resolve({ acks }));
    });
    for (const m of messages) s.write(m);
    s.end();
    return done;
  }

  it('a session\'s large batches on the worker and small ones on the event loop land in the order sent, each acked in order', { timeout: 60_000 }, async () => {
    // A larger batch before a smaller one: were they decoded at once, the second would finish first.
    const shapes = [5, LARGE, 3, 1, LARGE * 16, LARGE, LARGE + 7, 2];
    const batches = shapes.map((n, i) => records(n, `s${i}`));
    const before0 = await workerDecodes();
    // The second large batch names its own match_seq_num, which it meets.
    const at = shapes.slice(0, 4).reduce((a, b) => a + b, 0);
    const out = await session([
      { open: { bucket: BUCKET, key: bytes('session') } },
      ...batches.map((rs, i) => ({ batch: { records: rs, ...(i === 4 ? { match_seq_num: at } : {}) } })),
    ]);
    assert.equal(out.error, undefined, out.error?.details);
    assert.equal(await workerDecodes(), before0 + 4);
    let seq = 0;
    assert.deepEqual(out.acks.map((a) => [Number(a.start?.seq_num), Number(a.end?.seq_num)]), shapes.map((n) => [seq, (seq += n)]));
    assert.deepEqual(await readAll('session'), expected(batches.flat()));
  });

  it('a session ends at a large batch with a bad record: the batches before it acked and kept, none after it appended', { timeout: 60_000 }, async () => {
    const first = records(4, 'ok');
    const bad = records(LARGE, 'bad');
    bad[7] = { ...bad[7], headers: [{ name: Buffer.alloc(0), value: Buffer.alloc(0) }] };
    const out = await session([
      { open: { bucket: BUCKET, key: bytes('session-bad') } },
      { batch: { records: first } },
      { batch: { records: bad } },
      { batch: { records: records(2, 'after') } },
      { batch: { records: records(LARGE, 'after-large') } },
    ]);
    assert.equal(out.error?.code, grpc.status.INVALID_ARGUMENT, out.error?.details);
    assert.match(out.error?.details ?? '', /records\[7\]/);
    assert.equal(out.acks.length, 1);
    assert.deepEqual(await readAll('session-bad'), expected(first));
  });
});
