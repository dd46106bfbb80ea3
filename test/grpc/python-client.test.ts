// A real star's gRPC listener driven from Python's grpcio, the C-core gRPC stack: a client nobody on
// this project wrote, so it proves the star speaks gRPC, not merely grpc-js. The schema comes the way
// grpcurl gets it, through the star's server reflection; test/grpc/python-client.py loads it into a
// descriptor pool and calls the verbs generically (no generated stubs), printing one JSON line of
// what the star answered. Every assertion is made here.
//   - CreateBucket, Append with bodies and headers, Read from 0: the same records in order, and the
//     append's start, end and tail as the spec gives them;
//   - a match_seq_num miss: OUT_OF_RANGE with a SequenceDetail naming the tail, the stream unchanged;
//   - Subscribe from 0: history and live records in order, then a clean cancel;
//   - AppendSession in lockstep: one ack per batch, contiguous, then half-close and status OK;
//   - an Append over the star's message size limit refused at its head (the star resets the HTTP/2
//     stream with NO_ERROR after its trailers-only status, admission.ts stopSendingAfterStatus) with
//     the status the README gives, and the same channel still appends;
//   - without a token, or with a bad one, data verbs are UNAUTHENTICATED (the star runs --auth jwt).
// Debian's python3-grpcio and python3-protobuf at /usr/bin/python3 (not the `python3` on PATH, which
// may be another interpreter). Without them the tests skip, except under CI=true, where .ci/run
// installs them and the tests must run.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { fromBinary } from '@bufbuild/protobuf';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import { GRPC_APPEND_MESSAGE_BYTES_MAX } from '../../src/config/limits.ts';
import { removeDir, tempDir } from '../helpers/server.ts';
import { mint, startGrpcChild, type GrpcChild } from './child.ts';

const PYTHON = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('./python-client.py', import.meta.url));
/** One scenario's whole Python run: the interpreter, grpcio's import, a few calls, and in one of them
 *  a message of about 104 MiB built and sent. Past it the run is killed and its test fails with what
 *  Python printed, rather than hanging the file (a call that never ends, a stream never acked). */
const PYTHON_RUN_MS_MAX = 60_000;
/** The import probe at file load. */
const PYTHON_PROBE_MS_MAX = 15_000;
/** What a run may print: one JSON line, or a traceback. */
const PYTHON_OUTPUT_BYTES_MAX = 4 * 1024 * 1024;
/** The Python client's token lifetime: it is the deadline of every call (spec: Claims). */
const TOKEN_TTL_S = 600;

const require = createRequire(import.meta.url);
const REFLECTION_PROTO_ROOT = join(dirname(require.resolve('@grpc/reflection/package.json')), 'build', 'proto');

/** Why Python's gRPC cannot be used here, or false when it can. */
function probePython(): string | false {
  const r = spawnSync(PYTHON, ['-c', 'import grpc, google.protobuf'], { encoding: 'utf8', timeout: PYTHON_PROBE_MS_MAX });
  if (r.error) return `${PYTHON} did not run: ${r.error.message}`;
  if (r.status !== 0) return `${PYTHON} cannot import grpc, google.protobuf: ${r.stderr.trim().split('\n').pop() ?? ''}`;
  return false;
}
const pythonMissing = probePython();
const skip: string | false = pythonMissing && process.env.CI !== 'true'
  ? `${pythonMissing} (apt-get install -y python3-grpcio python3-protobuf); these tests run whenever CI=true`
  : false;

// What python-client.py prints, as it prints it (uint64 and int64 values here stay far below 2^53).
interface Position { seq_num: number; timestamp_ms: number }
/** A record as the script takes it: bytes as base64, headers as [name, value] pairs in order. */
interface RecordIn { body_b64: string; headers: [string, string][]; timestamp_ms?: number }
interface RecordOut { seq_num: number; timestamp_ms: number; body_b64: string; headers: [string, string][] }
interface Acked { start: Position | null; end: Position | null; tail: Position | null }
interface Page { records: RecordOut[]; tail: Position | null }
interface Failure {
  /** grpc.StatusCode's name, as grpcio reports it. */
  code: string;
  details: string;
  /** The google.rpc.Status of grpc-status-details-bin, decoded by the script; absent without the trailer. */
  status?: { code: number; message: string; details: { type_url: string; tail?: Position | null }[] };
}
interface Outcome<T> { ok?: T; error?: Failure }

interface AppendReadOut { services: Record<string, string[]>; created: string; append: Acked; read: Page; check_tail: Position | null }
interface MatchMissOut { first: Acked; miss: Outcome<Acked>; after: Page; retry: Outcome<Acked> | null }
interface SubscribeOut {
  responses: { records: RecordOut[]; next_seq_num: number; tail: Position | null }[];
  cancelled: boolean;
  code: string;
  check_tail_after: Position | null;
}
interface AppendSessionOut { acks: Acked[]; acked_before_half_close: number; code: string; details: string; read: Page }
interface OversizeOut { message_bytes: number; refused: Outcome<Acked>; after: Outcome<Acked>; check_tail: Position | null }
interface UnauthenticatedOut {
  no_token_check_tail: Outcome<Position>;
  no_token_append: Outcome<Acked>;
  bad_token_check_tail: Outcome<Position>;
}

const b64 = (b: Buffer | string): string => Buffer.from(b).toString('base64');
const rec = (body: Buffer | string, headers: [Buffer | string, Buffer | string][] = [], timestampMs?: number): RecordIn => ({
  body_b64: b64(body),
  headers: headers.map(([n, v]) => [b64(n), b64(v)]),
  ...(timestampMs !== undefined ? { timestamp_ms: timestampMs } : {}),
});
/** What a read gives back for records appended from `seq`: the same bodies and headers, numbered on. */
const asRead = (records: RecordIn[], seq: number): Omit<RecordOut, 'timestamp_ms'>[] =>
  records.map((r, i) => ({ seq_num: seq + i, body_b64: r.body_b64, headers: r.headers }));
const withoutTime = (records: RecordOut[]): Omit<RecordOut, 'timestamp_ms'>[] =>
  records.map(({ seq_num, body_b64, headers }) => ({ seq_num, body_b64, headers }));

/** One ServerReflectionInfo exchange (v1) for `file_containing_symbol`: the files it answers. */
function reflectFiles(port: number, symbol: string): Promise<Buffer[]> {
  const def = protoLoader.loadSync('grpc/reflection/v1/reflection.proto', { includeDirs: [REFLECTION_PROTO_ROOT], keepCase: true, defaults: true, oneofs: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as { grpc: { reflection: { v1: { ServerReflection: grpc.ServiceClientConstructor } } } };
  interface Res { file_descriptor_response?: { file_descriptor_proto: Buffer[] }; error_response?: { error_code: number; error_message: string } }
  const client = new pkg.grpc.reflection.v1.ServerReflection(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as
    grpc.Client & { ServerReflectionInfo(): grpc.ClientDuplexStream<Record<string, string>, Res> };
  return new Promise((resolve, reject) => {
    const call = client.ServerReflectionInfo();
    call.on('data', (res: Res) => {
      call.end();
      if (res.error_response) reject(new Error(`reflection of ${symbol}: ${res.error_response.error_message}`));
      else resolve(res.file_descriptor_response?.file_descriptor_proto ?? []);
    });
    call.on('error', reject);
    call.on('end', () => client.close());
    call.write({ file_containing_symbol: symbol });
  });
}

/** A serialized google.protobuf.FileDescriptorSet (`repeated FileDescriptorProto file = 1`) of every
 *  file reflection gives for `symbols`, each once, byte for byte as the star sent it. */
async function reflectedDescriptorSet(port: number, symbols: string[]): Promise<Uint8Array> {
  const seen = new Set<string>();
  const w = new BinaryWriter();
  for (const symbol of symbols) {
    for (const file of await reflectFiles(port, symbol)) {
      const name = fromBinary(FileDescriptorProtoSchema, file).name;
      if (seen.has(name)) continue;
      seen.add(name);
      w.tag(1, WireType.LengthDelimited).bytes(file);
    }
  }
  return w.finish();
}

describe('gRPC from Python grpcio (C-core) against a real star (--auth jwt)', { skip }, () => {
  let star: GrpcChild;
  let dir: string;
  let descriptorSet: string;
  let token: string;

  before(async () => {
    // Under CI the tests must run: say why they cannot, once, instead of six tracebacks.
    if (pythonMissing) throw new Error(`CI=true but ${pythonMissing}: .ci/run installs python3-grpcio python3-protobuf`);
    star = await startGrpcChild({ jwt: true });
    token = await mint('svc:admin', TOKEN_TTL_S);
    dir = tempDir('svcd-python-grpc-');
    descriptorSet = join(dir, 'svc.fds');
    // As grpcurl would: the services' files and their imports. SequenceDetail's file (errors.proto)
    // too, which no service file imports, so the script can decode a miss's detail.
    writeFileSync(descriptorSet, await reflectedDescriptorSet(star.grpcPort, ['svc.v1.DataService', 'svc.v1.AdminService', 'svc.v1.SequenceDetail']));
  });
  after(async () => {
    await star?.stop();
    if (dir) removeDir(dir);
  });

  /** Runs one scenario of python-client.py and parses its JSON line; fails with all it printed otherwise. */
  function python<T>(scenario: string, params: Record<string, unknown>, opts: { token?: boolean } = {}): Promise<T> {
    const input = {
      scenario, target: `127.0.0.1:${star.grpcPort}`, descriptor_set: descriptorSet, ...(opts.token === false ? {} : { token }), ...params,
    };
    return new Promise((resolve, reject) => {
      execFile(PYTHON, [SCRIPT, JSON.stringify(input)], { timeout: PYTHON_RUN_MS_MAX, maxBuffer: PYTHON_OUTPUT_BYTES_MAX, encoding: 'utf8' }, (err, stdout, stderr) => {
        const printed = `stdout:\n${stdout}\nstderr:\n${stderr}`;
        if (err) {
          reject(new Error(`python ${scenario} failed (${err.killed ? `killed after ${PYTHON_RUN_MS_MAX} ms` : `exit ${String(err.code)}`}):\n${printed}`));
          return;
        }
        try {
          resolve(JSON.parse(stdout) as T);
        } catch {
          reject(new Error(`python ${scenario} printed no JSON line:\n${printed}`));
        }
      });
    });
  }

  const key = (s: string): string => b64(s);

  test('CreateBucket, Append with bodies and headers, Read from 0: the same records in order; start, end and tail as the spec gives them', async () => {
    // A client timestamp on the first record (recent: a bucket's age retention must not trim it).
    const stampMs = Date.now() - 1000;
    const records = [
      rec('one', [['content-type', 'text/plain']], stampMs),
      // Bytes that are not UTF-8, in the body and in a header's name and value.
      rec(Buffer.from([0x00, 0xff, 0x80, 0x0a]), [[Buffer.from([0xc3]), Buffer.from([0x00])]]),
      rec('three', [['a', ''], ['b', 'second header, in order']]),
    ];
    const out = await python<AppendReadOut>('append-read', { bucket: 'py-append-read', key_b64: key('k/1'), records });
    // The pool built from the reflected set holds both services (and every type their methods name).
    for (const verb of ['CreateBucket', 'Append', 'Read', 'Subscribe', 'AppendSession', 'CheckTail']) {
      assert.ok(out.services['svc.v1.DataService']?.includes(verb), `the pool's DataService has ${verb}`);
    }
    assert.ok((out.services['svc.v1.AdminService'] ?? []).length > 0, 'the pool has AdminService');
    assert.equal(out.created, 'py-append-read');
    assert.deepEqual(withoutTime(out.read.records), asRead(records, 0));
    const got = out.read.records;
    assert.equal(got[0].timestamp_ms, stampMs, 'the client timestamp is kept');
    // start: the first record appended; end: one past the last, at the last record's time; with one
    // producer the committed tail is `end`, in the append, the read and CheckTail alike.
    const end = { seq_num: records.length, timestamp_ms: got[got.length - 1].timestamp_ms };
    assert.deepEqual(out.append, { start: { seq_num: 0, timestamp_ms: got[0].timestamp_ms }, end, tail: end });
    assert.deepEqual(out.read.tail, end);
    assert.deepEqual(out.check_tail, end);
  });

  test('Append with a wrong match_seq_num: OUT_OF_RANGE with a SequenceDetail naming the tail; nothing appended; a retry at that tail lands', async () => {
    const records = [rec('first'), rec('second')];
    const more = [rec('third')];
    const out = await python<MatchMissOut>('match-miss', { bucket: 'py-match', key_b64: key('m'), records, more, wrong_match_seq_num: 7 });
    assert.equal(out.first.end?.seq_num, 2);
    // The spec's "412 with tail": OutOfRange + Sequence detail, whose tail.seq_num is the next value to try.
    assert.equal(out.miss.ok, undefined, 'the miss was appended');
    assert.equal(out.miss.error?.code, 'OUT_OF_RANGE', out.miss.error?.details);
    assert.equal(out.miss.error?.status?.code, grpc.status.OUT_OF_RANGE, 'grpc-status-details-bin carries the same code');
    assert.deepEqual(out.miss.error?.status?.details.map((d) => [d.type_url, d.tail?.seq_num]), [['type.googleapis.com/svc.v1.SequenceDetail', 2]]);
    assert.deepEqual(withoutTime(out.after.records), asRead(records, 0), 'the stream is unchanged');
    assert.equal(out.after.tail?.seq_num, 2);
    assert.equal(out.retry?.error, undefined, out.retry?.error?.details);
    assert.deepEqual([out.retry?.ok?.start?.seq_num, out.retry?.ok?.end?.seq_num], [2, 3]);
  });

  test('Subscribe from 0: the history, then records appended while it is open, in order; a cancel ends it cleanly', async () => {
    const records = [rec('h0', [['n', '0']]), rec('h1'), rec('h2')];
    const live = [rec('l3'), rec('l4', [['n', '4']])];
    const out = await python<SubscribeOut>('subscribe', { bucket: 'py-subscribe', key_b64: key('s'), records, live });
    const delivered = out.responses.flatMap((r) => r.records);
    assert.deepEqual(withoutTime(delivered), asRead([...records, ...live], 0));
    for (const [i, r] of out.responses.entries()) {
      assert.ok(r.records.length > 0, `response ${i} is not empty`);
      assert.equal(r.next_seq_num, r.records[r.records.length - 1].seq_num + 1, `response ${i}'s next_seq_num is its resume cursor`);
      assert.ok((r.tail?.seq_num ?? -1) >= r.next_seq_num, `response ${i}'s tail is at or past its cursor`);
    }
    // cancel() is True only for a call still live: the star had not ended the subscription itself.
    assert.equal(out.cancelled, true);
    assert.equal(out.code, 'CANCELLED');
    assert.equal(out.check_tail_after?.seq_num, records.length + live.length, 'the channel serves on after the cancel');
  });

  test('AppendSession: open, then batches in lockstep, one ack each, in order and contiguous; half-close ends it OK', async () => {
    const batches = [[rec('b0')], [rec('b1'), rec('b2', [['h', 'v']]), rec('b3')], [rec('b4'), rec('b5')]];
    const out = await python<AppendSessionOut>('append-session', { bucket: 'py-session', key_b64: key('producer'), batches });
    assert.equal(out.acked_before_half_close, batches.length, 'each batch was acked while the request side was still open');
    assert.equal(out.acks.length, batches.length, 'one ack per batch');
    let seq = 0;
    for (const [i, a] of out.acks.entries()) {
      assert.equal(a.start?.seq_num, seq, `ack ${i} starts where the previous ended`);
      seq += batches[i].length;
      assert.equal(a.end?.seq_num, seq, `ack ${i} ends after its batch`);
      assert.ok((a.tail?.seq_num ?? -1) >= seq, `ack ${i}'s tail is at or past its end`);
    }
    assert.equal(out.code, 'OK', out.details);
    assert.deepEqual(withoutTime(out.read.records), asRead(batches.flat(), 0));
  });

  test('an Append over the message size limit is refused at its head with INVALID_ARGUMENT, and the same channel appends on', async () => {
    // The README (gRPC admission): a message past its verb's size limit is INVALID_ARGUMENT (the spec's
    // 400 for a batch over a cap; no retry can pass), never read. The star answers it trailers-only
    // while grpcio is still sending, then resets the stream with NO_ERROR: the status must reach
    // C-core as sent, not as INTERNAL or UNAVAILABLE. grpcio's own send limit is lifted (-1), so that
    // it is the star that refuses the message.
    const messageBytes = GRPC_APPEND_MESSAGE_BYTES_MAX + 1;
    const records = [rec('after the refusal')];
    const out = await python<OversizeOut>('oversize', {
      bucket: 'py-oversize', key_b64: key('big'), message_bytes: messageBytes, records,
      channel_options: [['grpc.max_send_message_length', -1], ['grpc.max_receive_message_length', -1]],
    });
    assert.equal(out.message_bytes, messageBytes, 'the message is just over the limit');
    assert.equal(out.refused.ok, undefined, 'the oversized Append was appended');
    assert.equal(out.refused.error?.code, 'INVALID_ARGUMENT', out.refused.error?.details);
    assert.match(out.refused.error?.details ?? '', new RegExp(`a ${messageBytes}-byte message is over the ${GRPC_APPEND_MESSAGE_BYTES_MAX}-byte limit`));
    assert.equal(out.after.error, undefined, `the next Append on the channel: ${out.after.error?.code} ${out.after.error?.details}`);
    // Nothing of the refused message was appended: the next record is the stream's first.
    assert.deepEqual([out.after.ok?.start?.seq_num, out.after.ok?.end?.seq_num], [0, 1]);
    assert.equal(out.check_tail?.seq_num, 1);
  });

  test('without a token, or with one that is not a JWT, data verbs are UNAUTHENTICATED', async () => {
    const out = await python<UnauthenticatedOut>('unauthenticated', { bucket: 'py-append-read', key_b64: key('k/1'), records: [rec('x')] }, { token: false });
    for (const [what, o] of Object.entries(out) as [string, Outcome<unknown>][]) {
      assert.equal(o.ok, undefined, `${what} was served`);
      assert.equal(o.error?.code, 'UNAUTHENTICATED', `${what}: ${o.error?.details}`);
      assert.ok((o.error?.details ?? '').length > 0, `${what} says why`);
    }
  });
});
