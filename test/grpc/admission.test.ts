// Admission on the gRPC port against a real star process under --auth jwt, with a real
// @grpc/grpc-js client (issue 18: twelve concurrent 120 MiB Append messages without a token took the
// star from 188 MB to 3.1 GB before each was told UNAUTHENTICATED). Each abuse runs while a second
// tenant keeps appending, and must not stop it; the star's peak resident memory (VmHWM) is read from
// /proc and held to a generous bound: memory, not time, so the assertion cannot flake on a slow box.
import { strict as assert } from 'node:assert';
import { readFileSync, writeFileSync } from 'node:fs';
import * as http2 from 'node:http2';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { loadSvcProto } from '../../src/api/grpc/proto.ts';
import { RequestBytesBudget } from '../../src/api/grpc/admission.ts';
import {
  BATCH_CONTENT_BYTES_MAX, EXCHANGE_FAILURES_PER_ADDRESS_BURST, EXCHANGE_FAILURES_PER_ADDRESS_PER_S, GRPC_APPEND_MESSAGE_BYTES_MAX, GRPC_CONTROL_MESSAGE_BYTES_MAX,
  GRPC_REQUEST_BYTES_IN_FLIGHT_PER_TENANT_MAX, RECORD_CONTENT_BYTES_MAX,
} from '../../src/config/limits.ts';
import { ServiceError } from '../../src/core/errors.ts';
import { bearer, bytes, callMd } from './client.ts';
import { mint, startGrpcChild, type GrpcChild } from './child.ts';
import { httpStatusOf } from '../../src/api/http-status.ts';

const MiB = 1024 * 1024;
/** Concurrent abusive calls, as in the issue. */
const ABUSIVE_CALLS = 12;
/** How much the star's peak RSS may grow while anonymous callers send 12 × 120 MiB: a head and a
 *  flow-control window each, far below one message (before the fix: about 2.9 GB). */
const ANONYMOUS_RSS_GROWTH_BYTES_MAX = 256 * MiB;
/** … and while one tenant sends 12 full batches at once: its budget admits one (128 MiB), which the
 *  star then decodes and appends (a few copies of it), far below 12 messages (1.2 GB raw). */
const TENANT_RSS_GROWTH_BYTES_MAX = 1024 * MiB;
/** Eight gzip bombs cancelled while they inflate: the budget admits one at a time, and the rest
 *  stop with their calls, so the star grows by about one bomb, far below eight (before: 990 MiB). */
const CANCELLED_BOMBS_RSS_GROWTH_BYTES_MAX = 512 * MiB;
/** The bombs are cancelled this soon after being sent (while they inflate) … */
const CANCEL_AFTER_MS = 50;
/** … and the star is given this long to run whatever it still runs before its peak is read. */
const CANCEL_SETTLE_MS = 2000;
/** Victim appends made while each abuse runs; every one must succeed. */
const VICTIM_APPENDS = 20;

const APPEND = '/svc.v1.DataService/Append';
const EXCHANGE = '/svc.v1.DataService/ExchangeToken';

/** Starts a new peak: writing 5 to clear_refs resets the process's VmHWM to its current RSS
 *  (Linux 4.0+), so each abuse is measured from the star's size just before it. */
function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** Resident and peak resident bytes of a process (Linux /proc). */
function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/** Bytes a process has read through read(2) and kin, sockets included (Linux /proc/<pid>/io). */
function bytesReadBy(pid: number): number {
  return Number(/^rchar:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? NaN);
}

/** An AppendRequest already serialized: the same bytes go out on every call, so the test process
 *  holds one copy of the payload (grpc-js frames each call into its own buffer). */
function encodedAppend(bucket: string, key: string, contentBytes: number): Buffer {
  const { proto } = loadSvcProto();
  const body = Buffer.alloc(RECORD_CONTENT_BYTES_MAX, 0x61);
  const records = [];
  for (let left = contentBytes; left > 0; left -= body.length) records.push({ body: left >= body.length ? body : body.subarray(0, left) });
  return proto.svc.v1.DataService.service.Append.requestSerialize({ bucket, key: bytes(key), records });
}

/** A client whose own limits never stop a message: the server's are under test. */
function rawClient(port: number): grpc.Client {
  return new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
    'grpc.max_send_message_length': -1, 'grpc.max_receive_message_length': -1,
  });
}

/** One unary call of pre-serialized bytes; resolves with its status code and details. */
function rawUnary(client: grpc.Client, path: string, message: Buffer, md: grpc.Metadata): Promise<{ code: grpc.status; details: string }> {
  return new Promise((resolve) => {
    client.makeUnaryRequest(path, (b: Buffer) => b, (b: Buffer) => b, message, md, (err) => {
      resolve(err ? { code: err.code, details: err.details } : { code: grpc.status.OK, details: '' });
    });
  });
}

/** One unary call over raw HTTP/2 whose message is `payload` already gzip-compressed (grpc-js
 *  compresses on its own and cannot send a made-up payload); resolves with the call's status. */
function compressedUnary(port: number, path: string, payload: Buffer, md: grpc.Metadata, cancelAfterMs?: number): Promise<{ code: grpc.status; details: string }> {
  return new Promise((resolve) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    const headers: http2.OutgoingHttpHeaders = {
      ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', 'grpc-encoding': 'gzip', 'grpc-accept-encoding': 'identity,gzip',
    };
    for (const [k, v] of Object.entries(md.getMap())) headers[k] = String(v);
    const req = session.request(headers);
    let status: { code: grpc.status; details: string } | undefined;
    const take = (h: http2.IncomingHttpHeaders): void => {
      if (h['grpc-status'] !== undefined) status = { code: Number(h['grpc-status']), details: decodeURIComponent(String(h['grpc-message'] ?? '')) };
    };
    req.on('response', take);
    req.on('trailers', take);
    req.on('data', () => undefined);
    const done = (): void => { session.close(); resolve(status ?? { code: grpc.status.UNKNOWN, details: 'no grpc-status' }); };
    req.on('close', done);
    req.on('error', () => undefined);
    const head = Buffer.alloc(5);
    head[0] = 1;
    head.writeUInt32BE(payload.length, 1);
    req.end(Buffer.concat([head, payload]));
    if (cancelAfterMs !== undefined) setTimeout(() => req.close(http2.constants.NGHTTP2_CANCEL), cancelAfterMs);
  });
}

/** An AppendSession's acks (each ack's end seq_num) as they come, and how it ended: undefined when
 *  cleanly, else its error. */
function sessionOutcome(session: NodeJS.EventEmitter): { acks: number[]; finished: Promise<grpc.ServiceError | undefined> } {
  const acks: number[] = [];
  const finished = new Promise<grpc.ServiceError | undefined>((resolve) => {
    session.on('data', (r: { end?: { seq_num: number } }) => acks.push(r.end?.seq_num ?? -1));
    session.once('error', (e: grpc.ServiceError) => resolve(e));
    session.once('end', () => resolve(undefined));
  });
  return { acks, finished };
}

/** Appends small batches as tenant B, one after another, until `stop` resolves; answers the results. */
async function victim(c: GrpcChild, md: grpc.Metadata, stop: Promise<unknown>): Promise<string[]> {
  let done = false;
  void stop.then(() => { done = true; });
  const results: string[] = [];
  while (!done || results.length < VICTIM_APPENDS) {
    try {
      await callMd(c.data.Append.bind(c.data), { bucket: 'tb', key: bytes('steady'), records: [{ body: bytes('still here') }] }, md);
      results.push('ok');
    } catch (err) {
      results.push(`${(err as grpc.ServiceError).code}: ${(err as grpc.ServiceError).details}`);
    }
  }
  return results;
}

describe('grpc admission under abuse (jwt, real star)', () => {
  let c: GrpcChild;
  let raw: grpc.Client;
  let tenantB: grpc.Metadata;
  let pid: number;
  before(async () => {
    c = await startGrpcChild({ jwt: true });
    pid = c.server.proc.pid!;
    raw = rawClient(c.grpcPort);
    const admin = bearer(await mint('svc:admin', 600));
    for (const bucket of ['ta', 'tb']) await callMd(c.data.CreateBucket.bind(c.data), { bucket, config: { create_stream_on_append: true } }, admin);
    tenantB = bearer(await mintFor('tenant-b', 'svc:append:tb:*'));
    // Warm the star up (workers, WAL) so its baseline is its running size.
    await callMd(c.data.Append.bind(c.data), { bucket: 'tb', key: bytes('steady'), records: [{ body: bytes('warm') }] }, tenantB);
  });
  after(async () => {
    raw?.close();
    await c?.stop();
  });

  it(`${ABUSIVE_CALLS} concurrent 120 MiB Appends without a token, or with a forged one: UNAUTHENTICATED, unread, while another tenant appends`, { timeout: 120_000 }, async () => {
    const message = encodedAppend('ta', 'flood', 120 * MiB);
    assert.ok(message.length > GRPC_APPEND_MESSAGE_BYTES_MAX, 'over the size limit too: authentication must answer first');
    resetPeak(pid);
    const before = memoryOf(pid);
    const forged = bearer(`${(await mintFor('tenant-a', 'svc:append:ta:*')).slice(0, -4)}AAAA`);
    const abuse = Promise.all(Array.from({ length: ABUSIVE_CALLS }, (_, i) => rawUnary(raw, APPEND, message, i % 2 === 0 ? new grpc.Metadata() : forged)));
    const [answers, victims] = await Promise.all([abuse, victim(c, tenantB, abuse)]);
    for (const a of answers) assert.equal(a.code, grpc.status.UNAUTHENTICATED, a.details);
    assert.deepEqual(victims.filter((r) => r !== 'ok'), [], 'every append of the other tenant succeeded');
    const growth = memoryOf(pid).hwm - before.rss;
    console.log(`# anonymous flood: star RSS ${mb(before.rss)} before, peak ${mb(memoryOf(pid).hwm)} (growth ${mb(growth)}; bound ${mb(ANONYMOUS_RSS_GROWTH_BYTES_MAX)})`);
    assert.ok(growth < ANONYMOUS_RSS_GROWTH_BYTES_MAX, `the star's peak RSS grew ${mb(growth)}`);
  });

  it(`one tenant's ${ABUSIVE_CALLS} concurrent full batches: its budget admits what fits, the rest RESOURCE_EXHAUSTED; the other tenant appends on`, { timeout: 180_000 }, async () => {
    const tenantA = bearer(await mintFor('tenant-a', 'svc:append:ta:*'));
    const message = encodedAppend('ta', 'hog', 100 * MiB);
    resetPeak(pid);
    const before = memoryOf(pid);
    const readBefore = bytesReadBy(pid);
    const abuse = Promise.all(Array.from({ length: ABUSIVE_CALLS }, () => rawUnary(raw, APPEND, message, tenantA)));
    const [answers, victims] = await Promise.all([abuse, victim(c, tenantB, abuse)]);
    const ok = answers.filter((a) => a.code === grpc.status.OK).length;
    const refused = answers.filter((a) => a.code === grpc.status.RESOURCE_EXHAUSTED);
    assert.equal(ok + refused.length, ABUSIVE_CALLS, JSON.stringify(answers));
    assert.ok(ok >= 1 && refused.length >= 1, `${ok} admitted, ${refused.length} refused`);
    for (const r of refused) assert.match(r.details, /tenant 'tenant-a' has \d+ request bytes in flight|too many request bytes in flight on this star/);
    assert.deepEqual(victims.filter((r) => r !== 'ok'), [], 'every append of the other tenant succeeded');
    const growth = memoryOf(pid).hwm - before.rss;
    // The star resets a refused call's stream after its answer, so its client stops sending: a
    // refused message is not read off the socket (read to its end and dropped, eleven were 1.2 GB).
    const readRefused = bytesReadBy(pid) - readBefore - ok * message.length;
    console.log(`# tenant flood: ${ok} admitted, ${refused.length} refused (${mb(readRefused)} read beyond the admitted); star RSS ${mb(before.rss)} before, peak ${mb(memoryOf(pid).hwm)} (growth ${mb(growth)}; bound ${mb(TENANT_RSS_GROWTH_BYTES_MAX)})`);
    assert.ok(growth < TENANT_RSS_GROWTH_BYTES_MAX, `the star's peak RSS grew ${mb(growth)}`);
    assert.ok(readRefused < refused.length * message.length / 2, `the star read ${mb(readRefused)} of ${refused.length} refused ${mb(message.length)} messages`);
  });

  it('a message over GRPC_APPEND_MESSAGE_BYTES_MAX with a valid token is INVALID_ARGUMENT from its head (a batch over a cap: no retry passes)', { timeout: 120_000 }, async () => {
    const tenantA = bearer(await mintFor('tenant-a', 'svc:append:ta:*'));
    const a = await rawUnary(raw, APPEND, encodedAppend('ta', 'big', 120 * MiB), tenantA);
    assert.equal(a.code, grpc.status.INVALID_ARGUMENT);
    assert.match(a.details, new RegExp(`over the ${GRPC_APPEND_MESSAGE_BYTES_MAX}-byte limit of /svc.v1.DataService/Append`));
    // A full batch (100 MiB of content in 1 MiB records) fits the limit and is appended.
    const full = encodedAppend('ta', 'full', BATCH_CONTENT_BYTES_MAX);
    assert.ok(full.length <= GRPC_APPEND_MESSAGE_BYTES_MAX, `${full.length} bytes`);
    assert.equal((await rawUnary(raw, APPEND, full, tenantA)).code, grpc.status.OK);
  });

  it('a message that is not valid protobuf is INVALID_ARGUMENT (grpc-js says INTERNAL), on a unary call and in a session; the star serves on', { timeout: 60_000 }, async () => {
    const tenantA = bearer(await mintFor('tenant-a', 'svc:append:ta:*'));
    // A field's tag (3, length-delimited) and nothing after it: protobuf's decoder runs out of input.
    const garbage = Buffer.from([0x1a]);
    const unary = await rawUnary(raw, APPEND, garbage, tenantA);
    assert.equal(unary.code, grpc.status.INVALID_ARGUMENT, unary.details);
    assert.match(unary.details, /not valid protobuf/);
    // The bucket's string says 12 bytes and the message ends after 2: refused, not read as "ta"
    // (as protobufjs would; src/api/grpc/append-decode.ts reads append requests).
    const cutShort = Buffer.concat([Buffer.from([0x0a, 0x0c]), Buffer.from('ta')]);
    const cut = await rawUnary(raw, APPEND, cutShort, tenantA);
    assert.equal(cut.code, grpc.status.INVALID_ARGUMENT, cut.details);
    assert.match(cut.details, /not valid protobuf: a field runs past the end of its message/);
    const session = raw.makeBidiStreamRequest('/svc.v1.DataService/AppendSession', (b: Buffer) => b, (b: Buffer) => b, tenantA);
    const ended = new Promise<grpc.ServiceError>((resolve) => { session.on('error', resolve); session.on('data', () => undefined); });
    session.write(garbage);
    const err = await ended;
    assert.equal(err.code, grpc.status.INVALID_ARGUMENT, err.details);
    const good = await rawUnary(raw, APPEND, encodedAppend('ta', 'after-garbage', 10), tenantA);
    assert.equal(good.code, grpc.status.OK, good.details);
  });

  it('an AppendSession returns its bytes as batches are acked: far more than the tenant budget flows through one session', { timeout: 120_000 }, async () => {
    const tenantA = bearer(await mintFor('tenant-a', 'svc:append:ta:*'));
    const batches = Math.ceil((2 * GRPC_REQUEST_BYTES_IN_FLIGHT_PER_TENANT_MAX) / MiB) + 8;
    const session = c.data.AppendSession(tenantA);
    const { acks, finished } = sessionOutcome(session);
    session.write({ open: { bucket: 'ta', key: bytes('session') } });
    const body = Buffer.alloc(MiB - 64, 0x62);
    for (let i = 0; i < batches; i++) {
      if (!session.write({ batch: { records: [{ body }] } })) await new Promise((r) => session.once('drain', r));
    }
    session.end();
    const err = await finished;
    assert.equal(err, undefined, err?.details);
    assert.equal(acks.length, batches);
    assert.equal(acks[acks.length - 1], batches);
  });

  it('gzip messages are charged what they inflate to: eight small ones at once and a session of twenty pass; bombs are held to the budget', { timeout: 180_000 }, async () => {
    const tenantA = bearer(await mintFor('tenant-a', 'svc:append:ta:*'));
    const { proto } = loadSvcProto();
    // A grpc-js client that compresses every message, as grpc-go and connect do with gzip on (each
    // used to be charged the 104 MiB an Append may inflate to: one in flight per tenant).
    const gz = new proto.svc.v1.DataService(`127.0.0.1:${c.grpcPort}`, grpc.credentials.createInsecure(), {
      'grpc.default_compression_algorithm': grpc.compressionAlgorithms.gzip,
    }) as unknown as typeof c.data;
    try {
      const one = (i: number): Promise<string> => callMd(gz.Append.bind(gz), { bucket: 'ta', key: bytes('gz'), records: [{ body: Buffer.alloc(4000, 97 + i) }] }, tenantA)
        .then(() => 'ok', (e: grpc.ServiceError) => `${e.code}: ${e.details}`);
      assert.deepEqual(await Promise.all(Array.from({ length: 8 }, (_, i) => one(i))), Array.from({ length: 8 }, () => 'ok'));
      const session = gz.AppendSession(tenantA);
      const { acks, finished } = sessionOutcome(session);
      session.write({ open: { bucket: 'ta', key: bytes('gz-session') } });
      for (let i = 0; i < 20; i++) session.write({ batch: { records: [{ body: Buffer.alloc(4000, 98) }] } });
      session.end();
      const err = await finished;
      assert.equal(err, undefined, err?.details);
      assert.equal(acks.length, 20);
    } finally {
      gz.close();
    }

    // Each about 100 KB on the wire and 100 MiB inflated: the tenant's budget admits one at a time.
    const bomb = gzipSync(encodedAppend('ta', 'bomb', 100 * MiB));
    assert.ok(bomb.length < MiB, `${bomb.length} bytes compressed`);
    resetPeak(pid);
    const before = memoryOf(pid);
    const answers = await Promise.all(Array.from({ length: 4 }, () => compressedUnary(c.grpcPort, APPEND, bomb, tenantA)));
    const refused = answers.filter((a) => a.code === grpc.status.RESOURCE_EXHAUSTED);
    assert.equal(answers.filter((a) => a.code === grpc.status.OK).length + refused.length, answers.length, JSON.stringify(answers));
    assert.ok(refused.length >= 1, JSON.stringify(answers));
    for (const r of refused) assert.match(r.details, /tenant 'tenant-a' has \d+ request bytes in flight/);
    const growth = memoryOf(pid).hwm - before.rss;
    console.log(`# gzip bombs: ${answers.length - refused.length} admitted, ${refused.length} refused; peak growth ${mb(growth)}`);
    assert.ok(growth < TENANT_RSS_GROWTH_BYTES_MAX, `the star's peak RSS grew ${mb(growth)}`);


    // Past the verb's limit once inflated, and a payload that is not gzip at all.
    const over = await compressedUnary(c.grpcPort, APPEND, gzipSync(encodedAppend('ta', 'over', 120 * MiB)), tenantA);
    assert.equal(over.code, grpc.status.INVALID_ARGUMENT);
    assert.match(over.details, new RegExp(`decompresses past the ${GRPC_APPEND_MESSAGE_BYTES_MAX}-byte limit`));
    const garbage = await compressedUnary(c.grpcPort, APPEND, Buffer.from('not gzip at all'), tenantA);
    assert.equal(garbage.code, grpc.status.INVALID_ARGUMENT, garbage.details);
    assert.equal((await compressedUnary(c.grpcPort, APPEND, gzipSync(encodedAppend('ta', 'after', 100)), tenantA)).code, grpc.status.OK);
  });

  it('gzip bombs cancelled while they inflate stop with their calls (on a fresh star, whose heap has not grown yet)', { timeout: 120_000 }, async () => {
    const fresh = await startGrpcChild({ jwt: true });
    try {
      const freshPid = fresh.server.proc.pid!;
      const admin = bearer(await mint('svc:admin', 600));
      await callMd(fresh.data.CreateBucket.bind(fresh.data), { bucket: 'ta', config: { create_stream_on_append: true } }, admin);
      const tenantA = bearer(await mintFor('tenant-a', 'svc:append:ta:*'));
      const bomb = gzipSync(encodedAppend('ta', 'bomb', 100 * MiB));
      assert.equal((await compressedUnary(fresh.grpcPort, APPEND, gzipSync(encodedAppend('ta', 'warm', 100)), tenantA)).code, grpc.status.OK);
      resetPeak(freshPid);
      const before = memoryOf(freshPid);
      // Each inflater went on uncharged once its call ended: eight grew a fresh star by about 990 MiB.
      await Promise.all(Array.from({ length: 8 }, () => compressedUnary(fresh.grpcPort, APPEND, bomb, tenantA, CANCEL_AFTER_MS)));
      await new Promise((r) => setTimeout(r, CANCEL_SETTLE_MS));
      const growth = memoryOf(freshPid).hwm - before.rss;
      console.log(`# cancelled gzip bombs: peak growth ${mb(growth)} (bound ${mb(CANCELLED_BOMBS_RSS_GROWTH_BYTES_MAX)})`);
      assert.ok(growth < CANCELLED_BOMBS_RSS_GROWTH_BYTES_MAX, `the star's peak RSS grew ${mb(growth)}`);
      assert.equal((await compressedUnary(fresh.grpcPort, APPEND, gzipSync(encodedAppend('ta', 'after', 100)), tenantA)).code, grpc.status.OK);
    } finally {
      await fresh.stop();
    }
  });

  it('ExchangeToken: a message over the control limit is refused from its head; failed asks per client address are throttled', { timeout: 60_000 }, async () => {
    const { proto } = loadSvcProto();
    const ser = proto.svc.v1.DataService.service.ExchangeToken.requestSerialize;
    const huge = ser({ key_id: 'root', secret: 'x'.repeat(GRPC_CONTROL_MESSAGE_BYTES_MAX + 1), bucket: 'ta' });
    const a = await rawUnary(raw, EXCHANGE, huge, new grpc.Metadata());
    assert.equal(a.code, grpc.status.INVALID_ARGUMENT);
    assert.match(a.details, /over the 65536-byte limit of \/svc.v1.DataService\/ExchangeToken/);
    // Wrong secrets for ever new key ids (so the per-key-id throttle never applies): the address's.
    // The allowance refills EXCHANGE_FAILURES_PER_ADDRESS_PER_S a second from the first guess, so a
    // slow machine sees a few more refusals: the throttle must answer once the burst and the refill of
    // the time spent are used up, and no earlier than the burst.
    const t0 = Date.now();
    let r: Awaited<ReturnType<typeof rawUnary>>;
    for (let i = 0; ; i++) {
      r = await rawUnary(raw, EXCHANGE, ser({ key_id: `ck_guess${i}`, secret: 'wrong', bucket: 'ta' }), new grpc.Metadata());
      if (r.code === grpc.status.RESOURCE_EXHAUSTED) {
        assert.ok(i >= EXCHANGE_FAILURES_PER_ADDRESS_BURST, `throttled after only ${i} failed guesses`);
        break;
      }
      assert.equal(r.code, grpc.status.UNAUTHENTICATED, `guess ${i}: ${r.details}`);
      const mayFail = EXCHANGE_FAILURES_PER_ADDRESS_BURST + Math.ceil(((Date.now() - t0) / 1000) * EXCHANGE_FAILURES_PER_ADDRESS_PER_S);
      assert.ok(i < mayFail, `${i + 1} failed guesses and no throttle (it allows ${mayFail} by now)`);
    }
    assert.match(r.details, /too many failed token exchanges from this client address; retry in 1 s/);
  });
});

it('RequestBytesBudget: per tenant, then the star; released bytes come back; idle tenants are not kept', () => {
  const budget = new RequestBytesBudget(100);
  const a = { key: 'a', bytesMax: 60, what: 'tenant a' };
  const b = { key: 'b', bytesMax: 60, what: 'tenant b' };
  budget.charge(a, 60);
  assert.throws(() => budget.charge(a, 1), (e: unknown) => e instanceof ServiceError && httpStatusOf(e.code) === 429 && /tenant a has 60/.test(e.message));
  budget.charge(b, 40);
  assert.throws(() => budget.charge(b, 1), (e: unknown) => e instanceof ServiceError && /on this star/.test(e.message));
  assert.throws(() => budget.charge(undefined, 1), 'trusted callers count against the star too');
  budget.release(a, 60);
  budget.charge(undefined, 60);
  assert.equal(budget.bytesInFlight, 100);
  budget.release(b, 40);
  budget.release(undefined, 60);
  assert.equal(budget.bytesInFlight, 0);
  assert.equal(budget.tenantsInFlight, 0);
});

const mb = (n: number): string => `${Math.round(n / MiB)} MiB`;

/** A token of its own sub (the tenant key). */
async function mintFor(sub: string, scope: string): Promise<string> {
  const { SignJWT } = await import('jose');
  const { JWT_SECRET } = await import('./child.ts');
  return new SignJWT({ scope }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setSubject(sub)
    .setIssuedAt().setExpirationTime(Math.floor(Date.now() / 1000) + 600).sign(Buffer.from(JWT_SECRET));
}
