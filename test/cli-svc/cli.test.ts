// The `svc` command line run as a child process against a real star, for every command: --help, ls,
// create, delete, config get|set, append (stdin, files, each format) and read back byte for byte
// (100,000 lines), read from each kind of start, tail, tail -f across a SIGKILL and restart of the
// star, check-tail, trim, fence, token and credentials (jwt auth, gRPC admin plane), bench; and the
// one-line errors and exit codes for bad input, refusals and unreachable servers.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AmbiguousAppendError, SvcClient, SvcError } from '../../src/client/index.ts';
import { COMMANDS } from '../../src/cli/svc/main.ts';
import { EXIT, describeFailure } from '../../src/cli/svc/exit.ts';
import { REPO_ROOT, svcEntry } from '../helpers/server.ts';
import { Rng } from '../crash/crash-kit.ts';
import { Star, uniq, waitFor } from '../client/kit.ts';
import { closedPort } from '../helpers/ports.ts';

const BIN = join(REPO_ROOT, 'bin', 'svc.mjs');
const MAIN = join(REPO_ROOT, 'src', 'cli', 'svc', 'main.ts');
/** A CLI run that takes longer than this is stuck (a bound, not an assertion on time). */
const RUN_TIMEOUT_MS = 120_000;

let star: Star;
let c: SvcClient;

before(async () => {
  star = await Star.start({ grpc: true });
  c = new SvcClient({ url: star.url });
});
after(async () => { await star.stop(); });

interface Run { code: number; stdout: Buffer; out: string; err: string }

/** `svc ARGS` through bin/svc.mjs, with SVC_URL pointing at the star. */
function svc(args: string[], opts: { input?: Buffer | string; env?: Record<string, string> } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...svcEntry(), ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, SVC_URL: star.url, SVC_GRPC: star.grpcAddress!, ...(opts.env ?? {}) },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`svc ${args.join(' ')} did not finish`)); }, RUN_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out);
      resolve({ code: code ?? -1, stdout, out: stdout.toString('utf8'), err: Buffer.concat(err).toString('utf8') });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(opts.input ?? '');
  });
}

function ok(r: Run, what: string): Run {
  assert.equal(r.code, 0, `${what}: exit ${r.code}\nstderr: ${r.err}`);
  return r;
}

test('--help: the command list, and a usage with flags for every command', async () => {
  const top = ok(await svc(['--help']), 'svc --help');
  for (const cmd of COMMANDS) assert.ok(top.out.includes(`  ${cmd.name} `), `${cmd.name} listed`);
  assert.match(top.out, /Exit codes:/);
  for (const cmd of COMMANDS) {
    const r = ok(await svc([...cmd.name.split(' '), '--help']), `svc ${cmd.name} --help`);
    assert.match(r.out, new RegExp(`^usage: svc ${cmd.name}`), cmd.name);
    assert.match(r.out, /--url URL/);
  }
});

test('create, ls, config get|set and delete for buckets and streams', async () => {
  const b = uniq('cb');
  ok(await svc(['create', `svc://${b}`, 'create_stream_on_append=true']), 'create bucket');
  ok(await svc(['create', `svc://${b}/orders%2Feu`, 'retention_max_age_ms=60000']), 'create stream');
  ok(await svc(['create', `svc://${b}/plain`]), 'create stream');
  assert.ok(ok(await svc(['ls']), 'ls').out.split('\n').includes(`svc://${b}`));
  assert.deepEqual(ok(await svc(['ls', `svc://${b}`]), 'ls bucket').out.trim().split('\n'), [`svc://${b}/orders%2Feu`, `svc://${b}/plain`]);
  const listed = ok(await svc(['ls', `svc://${b}`, '--json']), 'ls --json').out.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(listed[0].key, 'orders/eu');

  const got = ok(await svc(['config', 'get', `svc://${b}/orders%2Feu`]), 'config get').out;
  assert.match(got, /^retention_max_age_ms=60000$/m);
  assert.match(got, /^fencing_token=$/m);
  const set = ok(await svc(['config', 'set', `svc://${b}/orders%2Feu`, 'retention_max_age_ms=0', 'timestamping_mode=arrival']), 'config set').out;
  assert.match(set, /^timestamping_mode=arrival$/m);
  assert.equal((await c.getStream({ bucket: b, key: 'orders/eu' })).timestamping_mode, 'arrival');
  ok(await svc(['config', 'set', `svc://${b}`, 'location=eu']), 'config set bucket');
  const bucket = await c.getBucket({ bucket: b });
  assert.equal(bucket.location, 'eu');
  assert.equal(bucket.create_stream_on_append, true, 'the other fields kept');
  assert.match(ok(await svc(['config', 'get', `svc://${b}`, '--json']), 'config get bucket').out, /"location":"eu"/);

  const bad = await svc(['config', 'set', `svc://${b}/plain`, 'nonsense=1']);
  assert.equal(bad.code, EXIT.USAGE);
  const busy = await svc(['delete', `svc://${b}`]);
  assert.equal(busy.code, EXIT.REFUSED, 'a bucket with streams is refused');
  ok(await svc(['delete', `svc://${b}/orders%2Feu`]), 'delete stream');
  ok(await svc(['delete', `svc://${b}/plain`]), 'delete stream');
  ok(await svc(['delete', `svc://${b}`]), 'delete bucket');
  assert.equal((await svc(['config', 'get', `svc://${b}`])).code, EXIT.REFUSED);
});

test('100,000 lines piped through append and back through read are byte-identical', async () => {
  const b = uniq('big');
  await c.createBucket({ bucket: b });
  const rng = new Rng(0xc11);
  const parts: Buffer[] = [];
  for (let i = 0; i < 100_000; i++) {
    const r = rng.int(0, 99);
    if (r === 0) parts.push(Buffer.from([0xff, 0xfe, 0x41, 0x0d])); // not UTF-8, and a CR kept as a byte
    else if (r === 1) parts.push(Buffer.alloc(0)); // an empty line is an empty record
    else parts.push(Buffer.from(rng.text(rng.int(1, 60)).replace(/\n/g, ' '), 'utf8'));
    parts.push(Buffer.from('\n'));
  }
  const input = Buffer.concat(parts);
  const addr = `svc://${b}/lines`;
  await c.createStream({ bucket: b, key: 'lines' });
  const appended = ok(await svc(['append', addr], { input }), 'append');
  assert.match(appended.out, /^appended 100000 records at 0\.\.99999; tail 100000$/m);
  const read = ok(await svc(['read', addr]), 'read');
  assert.equal(read.stdout.length, input.length);
  assert.ok(read.stdout.equals(input), 'byte-identical');
});

test('append from files and in json and base64; read from each start, with limit and until, in each format', async () => {
  const b = uniq('fmt');
  await c.createBucket({ bucket: b });
  const addr = `svc://${b}/k`;
  await c.createStream({ bucket: b, key: 'k' }, { timestamping_mode: 'client-require' });
  const file = join(star.dataDir, '..', `${uniq('in')}.jsonl`);
  writeFileSync(file, [0, 1, 2].map((i) => JSON.stringify({ body: `j${i}`, timestamp_ms: 1000 + i, headers: [{ name: 'h', value: `${i}` }] })).join('\n'));
  ok(await svc(['append', addr, '--format', 'json', file]), 'append json file');
  const b64 = ['b3', 'b4'].map((s, i) => JSON.stringify({ body_b64: Buffer.from(s).toString('base64'), timestamp_ms: 2000 + i })).join('\n');
  const j = ok(await svc(['append', addr, '--format', 'json', '--json'], { input: b64 }), 'append json stdin');
  assert.deepEqual(JSON.parse(j.out).tail.seq_num, 5);

  const text = ok(await svc(['read', addr, '--seq-num', '1', '--limit', '3']), 'read').out;
  assert.equal(text, 'j1\nj2\nb3\n');
  const json = ok(await svc(['read', addr, '--format', 'json', '--tail', '1']), 'read json').out.trim();
  assert.deepEqual(JSON.parse(json), { seq_num: 4, timestamp_ms: 2001, body: 'b4' });
  assert.equal(ok(await svc(['read', addr, '--format', 'base64', '--limit', '1']), 'read base64').out, `${Buffer.from('j0').toString('base64')}\n`);
  assert.equal(ok(await svc(['read', addr, '--timestamp-ms', '1002', '--until', '2001']), 'read by time').out, 'j2\nb3\n');
  const headers = JSON.parse(ok(await svc(['read', addr, '--format', 'json', '--limit', '1']), 'read headers').out);
  assert.deepEqual(headers.headers, [{ name: 'h', value: '0' }]);

  const since = uniq('since');
  await c.createBucket({ bucket: since });
  await c.createStream({ bucket: since, key: 'k' });
  await c.append({ bucket: since, key: 'k' }, [{ body: 'recent' }]);
  assert.equal(ok(await svc(['read', `svc://${since}/k`, '--since', '10m']), 'read --since').out, 'recent\n');
  ok(await svc(['append', `svc://${since}/k`, '--format', 'base64'], { input: `${Buffer.from([0, 1, 255]).toString('base64')}\n` }), 'append base64');
  assert.deepEqual([...ok(await svc(['read', `svc://${since}/k`, '--tail', '1']), 'read bytes').stdout], [0, 1, 255, 10]);
});

test('tail, check-tail, trim and fence (appends without the token exit 1 with the installed token)', async () => {
  const b = uniq('tl');
  await c.createBucket({ bucket: b });
  const addr = `svc://${b}/k`;
  await c.createStream({ bucket: b, key: 'k' });
  ok(await svc(['append', addr], { input: Array.from({ length: 20 }, (_, i) => `r${i}`).join('\n') }), 'append');
  assert.equal(ok(await svc(['tail', addr, '-n', '3']), 'tail').out, 'r17\nr18\nr19\n');
  assert.equal(ok(await svc(['check-tail', addr]), 'check-tail').out, '20\n');
  assert.equal(JSON.parse(ok(await svc(['check-tail', addr, '--json']), 'check-tail json').out).seq_num, 20);
  ok(await svc(['trim', addr, '--seq-num', '15']), 'trim');
  assert.equal((await svc(['read', addr])).code, EXIT.REFUSED, 'a read below the watermark is refused');
  assert.equal(ok(await svc(['read', addr, '--clamp', '--limit', '1']), 'read --clamp').out, 'r15\n');
  // tail asks with clamp: the last ten of a stream holding five show those five, never a 410.
  assert.equal(ok(await svc(['tail', addr, '-n', '10']), 'tail past the watermark').out, 'r15\nr16\nr17\nr18\nr19\n');
  ok(await svc(['fence', addr, 'epoch-7']), 'fence');
  const refused = await svc(['append', addr], { input: 'x\n' });
  assert.equal(refused.code, EXIT.REFUSED);
  assert.match(refused.err, /^svc: .*installed fencing token "epoch-7"/);
  assert.equal(refused.err.trim().split('\n').length, 1, 'one line');
  ok(await svc(['append', addr, '--fencing-token', 'epoch-7', '--match-seq-num', '20'], { input: 'x\n' }), 'append with the token');
  const miss = await svc(['append', addr, '--fencing-token', 'epoch-7', '--match-seq-num', '5', '--json'], { input: 'y\n' });
  assert.equal(miss.code, EXIT.REFUSED);
  assert.equal(JSON.parse(miss.err).kind, 'seq_mismatch');
  assert.equal(JSON.parse(miss.err).tail.seq_num, 21);
  ok(await svc(['fence', addr]), 'unfence');
  ok(await svc(['append', addr, '--transport', 'grpc'], { input: 'z\n' }), 'append over a gRPC session');
  assert.equal(ok(await svc(['tail', addr, '-n', '2']), 'tail').out, 'x\nz\n');
});

test('tail -f follows across a SIGKILL and restart of the star: no line lost or repeated', async () => {
  const b = uniq('tf');
  await c.createBucket({ bucket: b });
  const a = { bucket: b, key: 'k' };
  await c.createStream(a);
  // Run the CLI's module directly (its bundle, or its source through tsx; not the bin shim).
  const entry = process.env.SVCD_SERVER_ENTRY === 'bundle' ? svcEntry() : ['--import', 'tsx', MAIN];
  const child: ChildProcess = spawn(process.execPath, [...entry, 'tail', '-f', '-n', '1000000', `svc://${b}/k`, '--heartbeat-silence-ms', '5000'], {
    cwd: REPO_ROOT, env: { ...process.env, SVC_URL: star.url }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => { out += d.toString('utf8'); });
  child.stderr!.on('data', (d: Buffer) => { err += d.toString('utf8'); });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const lineCount = (): number => out.split('\n').length - 1;
  try {
    const put = async (from: number, to: number): Promise<void> => {
      for (let i = from; i < to; i += 100) await c.append(a, Array.from({ length: Math.min(100, to - i) }, (_, j) => ({ body: `line ${i + j}` })));
    };
    await put(0, 1000);
    await waitFor(`tail -f printed 1000 lines (stderr: ${err})`, () => lineCount() >= 1000);
    await star.killAndRestart();
    await put(1000, 2000);
    await waitFor(`tail -f printed 2000 lines after the restart (stderr: ${err})`, () => lineCount() >= 2000);
  } finally {
    child.kill('SIGTERM');
  }
  assert.equal(await exited, 0, `tail -f ends cleanly on SIGTERM: ${err}`);
  assert.deepEqual(out.trim().split('\n'), Array.from({ length: 2000 }, (_, i) => `line ${i}`));
});

test('token and credentials under jwt auth (gRPC admin plane)', async () => {
  const secured = await Star.start({
    grpc: true,
    args: ['--auth', 'jwt', '--insecure-auth', '--root-key-id', 'ck_root'],
    env: { SVCD_JWT_HMAC_SECRET: 'a-test-secret-of-at-least-32-bytes!!', SVCD_ROOT_SECRET: 'root-password-for-the-svc-cli-tests-0123' },
  });
  try {
    const env = { SVC_URL: secured.url, SVC_GRPC: secured.grpcAddress! };
    const denied = await svc(['ls'], { env });
    assert.equal(denied.code, EXIT.REFUSED);
    assert.match(denied.err, /401/);
    const admin = ok(await svc(['token', '--key-id', 'ck_root', '--scope', 'svc:admin'], { env: { ...env, SVC_SECRET: 'root-password-for-the-svc-cli-tests-0123' } }), 'token').out.trim();
    const asAdmin = { ...env, SVC_TOKEN: admin };
    ok(await svc(['ls'], { env: asAdmin }), 'ls with the token');
    const created = JSON.parse(ok(await svc(['credentials', 'create', '--scope', 'svc:read:*:*', '--key-id', 'ck_reader', '--json'], { env: asAdmin }), 'credentials create').out);
    assert.equal(created.credential.key_id, 'ck_reader');
    const list = ok(await svc(['credentials', 'list'], { env: asAdmin }), 'credentials list').out;
    assert.match(list, /^ck_reader\tactive\tsvc:read:\*:\*$/m);
    const t = JSON.parse(ok(await svc(['token', '--key-id', 'ck_reader', '--scope', 'svc:read:*:*', '--ttl-seconds', '60', '--json'], { env: { ...env, SVC_SECRET: created.secret } }), 'token json').out);
    assert.ok(t.expires_at_unix_ms > Date.now());
    ok(await svc(['credentials', 'revoke', 'ck_reader'], { env: asAdmin }), 'credentials revoke');
    assert.match(ok(await svc(['credentials', 'list'], { env: asAdmin }), 'credentials list').out, /^ck_reader\trevoked/m);
    assert.equal((await svc(['token', '--key-id', 'ck_reader', '--scope', 'svc:read:*:*'], { env: { ...env, SVC_SECRET: created.secret } })).code, EXIT.REFUSED);
  } finally {
    await secured.stop();
  }
});

test('bench appends, delivers and reads back, and prints throughput and latency', async () => {
  const b = uniq('bench');
  await c.createBucket({ bucket: b });
  await c.createStream({ bucket: b, key: 'k' });
  const r = JSON.parse(ok(await svc(['bench', `svc://${b}/k`, '--records', '3000', '--record-bytes', '64', '--json']), 'bench').out);
  assert.equal(r.records, 3000);
  assert.equal(r.end_to_end_latency.complete, true);
  assert.equal(r.read.records, 3000);
  assert.ok(r.append.records_per_s > 0);
  assert.equal((await c.checkTail({ bucket: b, key: 'k' })).seq_num, 3000);
});

test('errors: one line and an exit code scripts can trust', async () => {
  const bad = await svc(['read', 'svc://-nope/k']);
  assert.equal(bad.code, EXIT.USAGE);
  assert.match(bad.err, /^svc: bad address/);
  assert.equal((await svc(['read', 'http://x/y'])).code, EXIT.USAGE);
  assert.equal((await svc(['frobnicate'])).code, EXIT.USAGE);
  assert.equal((await svc(['read', 'svc://b/k', '--nope'])).code, EXIT.USAGE);
  assert.equal((await svc(['config'])).code, EXIT.USAGE);
  const missing = await svc(['check-tail', `svc://${uniq('none')}/k`]);
  assert.equal(missing.code, EXIT.REFUSED);
  assert.match(missing.err, /^svc: .*404/);
  assert.equal(missing.err.trim().split('\n').length, 1);
  const down = await svc(['check-tail', 'svc://b/k'], { env: { SVC_URL: `http://127.0.0.1:${await closedPort()}` } });
  assert.equal(down.code, EXIT.UNREACHABLE);
  assert.match(down.err, /^svc: connection refused/);
  assert.equal(down.err.trim().split('\n').length, 1);
  const input = await svc(['append', 'svc://b/k', '--format', 'json'], { input: 'not json\n' });
  assert.equal(input.code, EXIT.USAGE);
  assert.match(input.err, /stdin:1: not JSON/);
  // An ambiguous append (its own tests are in test/client) maps to 4.
  assert.equal(describeFailure(new AmbiguousAppendError(new SvcError('connection', 'cut', { ambiguous: true }), 3)).code, EXIT.AMBIGUOUS);
});

test('a reader that goes away (`| head`) ends the command quietly with 0; the keys . and .. exit 2 with nothing sent', async () => {
  const b = uniq('pipe');
  ok(await svc(['create', `svc://${b}`, 'create_stream_on_append=true']), 'create');
  const lines = Array.from({ length: 200_000 }, (_, i) => `line ${i}`).join('\n');
  ok(await svc(['append', `svc://${b}/s`], { input: `${lines}\n` }), 'append');
  // stdout closes after the first chunk, as `head -1` does: the next write fails with EPIPE.
  const { code, err } = await new Promise<{ code: number; err: string }>((resolve, reject) => {
    // Through the bin shim (bin/svc.mjs), which users run: the other runs may use the bundle.
    const child = spawn(process.execPath, [BIN, 'read', `svc://${b}/s`, '--seq-num', '0'], { cwd: REPO_ROOT, env: { ...process.env, SVC_URL: star.url }, stdio: ['ignore', 'pipe', 'pipe'] });
    const errs: Buffer[] = [];
    child.stderr.on('data', (d: Buffer) => errs.push(d));
    child.stdout.once('data', () => child.stdout.destroy());
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error('svc read did not end after its reader went away')); }, RUN_TIMEOUT_MS);
    child.on('close', (c) => { clearTimeout(timer); resolve({ code: c ?? -1, err: Buffer.concat(errs).toString() }); });
  });
  assert.equal(code, EXIT.OK, err);
  assert.equal(err, '');
  for (const key of ['.', '..']) {
    const r = await svc(['fence', `svc://${b}/${key}`, 'token']);
    assert.equal(r.code, EXIT.USAGE, r.err);
  }
  const listed = ok(await svc(['ls', `svc://${b}`]), 'ls');
  assert.deepEqual(listed.out.trim().split('\n').map((l) => l.trim().split(/\s+/)[0]), [`svc://${b}/s`], 'no stream made by a folded path');
});

test('append input that turns bad: the records before the bad line land and the note says up to where; both body and body_b64 is refused', async () => {
  const b = uniq('badin');
  ok(await svc(['create', `svc://${b}`, 'create_stream_on_append=true']), 'create');
  const r = await svc(['append', `svc://${b}/s`, '--format', 'json'], { input: '{"body":"a"}\n{"body":"b"}\nnot json\n' });
  assert.equal(r.code, EXIT.USAGE);
  assert.match(r.err, /stdin:3: not JSON/);
  assert.match(r.err, /acknowledged before the failure: records up to seq_num 1/);
  assert.equal((await c.checkTail({ bucket: b, key: 's' })).seq_num, 2, 'exactly the two records before the bad line');
  const both = await svc(['append', `svc://${b}/t`, '--format', 'json'], { input: '{"body":"a","body_b64":"YQ=="}\n' });
  assert.equal(both.code, EXIT.USAGE);
  assert.match(both.err, /both body and body_b64/);
  const header = await svc(['append', `svc://${b}/t`, '--format', 'json'], { input: '{"body":"a","headers":[{"name":"h","value":"v","value_b64":"dg=="}]}\n' });
  assert.match(header.err, /both value and value_b64/);
});

test('read --json prints a JSON object per record; append of a missing file is a usage error with nothing sent', async () => {
  const b = uniq('jsonout');
  ok(await svc(['create', `svc://${b}`, 'create_stream_on_append=true']), 'create');
  ok(await svc(['append', `svc://${b}/s`], { input: 'one\ntwo\n' }), 'append');
  const read = ok(await svc(['read', `svc://${b}/s`, '--json']), 'read --json');
  assert.deepEqual(read.out.trim().split('\n').map((l) => (JSON.parse(l) as { seq_num: number; body: string })).map((r) => [r.seq_num, r.body]), [[0, 'one'], [1, 'two']]);
  const missing = await svc(['append', `svc://${b}/s`, join(REPO_ROOT, 'no-such-input-file')]);
  assert.equal(missing.code, EXIT.USAGE, missing.err);
  assert.match(missing.err, /cannot read .*no-such-input-file: ENOENT/);
  assert.equal((await c.checkTail({ bucket: b, key: 's' })).seq_num, 2, 'nothing sent');
});

test('--json shows a stream the same way everywhere: key is the key (as the spec names it), address the svc:// form', async () => {
  const b = uniq('keyjson');
  ok(await svc(['create', `svc://${b}`]), 'create bucket');
  const created = JSON.parse(ok(await svc(['create', `svc://${b}/orders%2Feu`, '--json']), 'create').out) as { key: string; address: string };
  const got = JSON.parse(ok(await svc(['config', 'get', `svc://${b}/orders%2Feu`, '--json']), 'config get').out) as { key: string; address: string };
  const set = JSON.parse(ok(await svc(['config', 'set', `svc://${b}/orders%2Feu`, 'retention_max_bytes=0', '--json']), 'config set').out) as { key: string; address: string };
  const listed = JSON.parse(ok(await svc(['ls', `svc://${b}`, '--json']), 'ls').out.trim()) as { key: string; address: string };
  for (const s of [created, got, set, listed]) assert.deepEqual([s.key, s.address], ['orders/eu', `svc://${b}/orders%2Feu`]);
});

test('usage and reach, as exit codes: a bad --url is 2, an unknown command under --json answers JSON, a gRPC verb with nothing listening is 3, bench --mode grpc without --grpc is 2 and exits', async () => {
  const zeroBatch = await svc(['append', 'svc://b/k', '--batch-records-max', '0'], { input: 'a\n' });
  assert.equal(zeroBatch.code, EXIT.USAGE, zeroBatch.err);
  assert.match(zeroBatch.err, /--batch-records-max must be at least 1/);
  const badUrl = await svc(['check-tail', 'svc://b/k', '--url', 'foo']);
  assert.equal(badUrl.code, EXIT.USAGE, badUrl.err);
  assert.match(badUrl.err, /--url \(or SVC_URL\) must be http/);
  const unknown = await svc(['bogus', '--json']);
  assert.equal(unknown.code, EXIT.USAGE);
  assert.deepEqual(Object.keys(JSON.parse(unknown.err) as object).sort(), ['error', 'kind']);
  const down = await svc(['credentials', 'list', '--grpc', `127.0.0.1:${await closedPort()}`]);
  assert.equal(down.code, EXIT.UNREACHABLE, down.err);
  assert.match(down.err, /could not connect \(connect ECONNREFUSED [^)]+\): nothing was sent/);
  // The subscription bench opens first used to stay open after this usage error, and the process never ended.
  const b = uniq('benchusage');
  ok(await svc(['create', `svc://${b}`]), 'create bucket');
  ok(await svc(['create', `svc://${b}/k`]), 'create stream');
  const bench = await svc(['bench', `svc://${b}/k`, '--records', '10', '--mode', 'grpc'], { env: { SVC_GRPC: '' } });
  assert.equal(bench.code, EXIT.USAGE, bench.err);
  assert.match(bench.err, /give --grpc HOST:PORT/);
});

/** `svc append ADDRESS` with its stdin left open (as `tail -f log | svc append` has it), to be
 *  interrupted: lines are written to it, signals sent, and its stderr watched. */
function openAppend(address: string, env: Record<string, string> = {}, flags: string[] = []): { child: ChildProcess; err: () => string; closed: Promise<number> } {
  const child = spawn(process.execPath, [...svcEntry(), 'append', address, ...flags], { cwd: REPO_ROOT, env: { ...process.env, SVC_URL: star.url, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const errs: Buffer[] = [];
  child.stderr!.on('data', (d: Buffer) => errs.push(d));
  child.stdin!.on('error', () => {});
  const closed = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`svc append ${address} did not end when interrupted`)); }, RUN_TIMEOUT_MS);
    // A process ended by the signal itself (the old behaviour) has no code: -1.
    child.on('close', (code) => { clearTimeout(timer); resolve(code ?? -1); });
  });
  return { child, err: () => Buffer.concat(errs).toString(), closed };
}

test('an interrupted append (Ctrl-C) says what landed and exits 130: everything read once acknowledged; a second interrupt stops a stuck one at once', async () => {
  const b = uniq('intr');
  ok(await svc(['create', `svc://${b}`, 'create_stream_on_append=true']), 'create');
  const run = openAppend(`svc://${b}/s`);
  run.child.stdin!.write('one\ntwo\nthree\n');
  await waitFor('the three lines appended', async () => (await c.checkTail({ bucket: b, key: 's' }).catch(() => ({ seq_num: 0 }))).seq_num === 3);
  run.child.kill('SIGINT');
  assert.equal(await run.closed, EXIT.INTERRUPTED, run.err());
  assert.match(run.err(), /interrupted: all 3 records read were appended at 0\.\.2/);
  assert.equal((await c.checkTail({ bucket: b, key: 's' })).seq_num, 3);

  // Nothing listening: the producer retries the connection. The first interrupt waits for what was
  // read; the second ends it at once, saying nothing was acknowledged.
  const stuck = openAppend('svc://b/k', { SVC_URL: `http://127.0.0.1:${await closedPort()}` }, ['--json']);
  stuck.child.stdin!.write('one\n');
  await waitFor('a retry note', () => /retrying in/.test(stuck.err()));
  stuck.child.kill('SIGINT');
  await waitFor('the note that it waits', () => /interrupted: waiting up to \d+ s for the 1 records read/.test(stuck.err()));
  stuck.child.kill('SIGINT');
  assert.equal(await stuck.closed, EXIT.INTERRUPTED, stuck.err());
  assert.match(stuck.err(), /stopped: no record was acknowledged; later records may or may not have landed/);
  // Under --json the last word is JSON too, as every other error.
  const last = JSON.parse(stuck.err().trim().split('\n').at(-1)!) as { kind: string; error: string };
  assert.equal(last.kind, 'aborted', stuck.err());
});
