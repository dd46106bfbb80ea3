// `svcd credentials create|list|revoke` in a child process against a data dir, then a real star on
// the same dir: the created credential exchanges; after a revoke and a restart it is 403.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT, starEntry, tempDir, removeDir } from '../helpers/server.ts';
import { assertStatus, bearer, claimsOf, request, startStar, streamPath, type Star } from '../auth-http/kit.ts';

const SECRET = 'cli-suite-secret-0123456789abcdefghijkl';

interface Run { code: number | null; stdout: string; stderr: string }

function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVCD_')) base[k] = v;
  // `svcd credentials …`, as main.ts dispatches it (the built bundle under npm test).
  const proc = spawn(process.execPath, [...starEntry(), 'credentials', ...args], { cwd: REPO_ROOT, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
  proc.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
  return new Promise((resolve) => {
    const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
    proc.once('exit', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

const jsonLines = (s: string): any[] => s.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l));

const starArgs = ['--auth', 'jwt', '--insecure-auth'];
const starEnv = { SVCD_JWT_HMAC_SECRET: SECRET };

describe('svcd credentials', () => {
  let dataDir: string;
  let star: Star | undefined;
  before(() => { dataDir = tempDir('svcd-cli-'); });
  after(async () => { await star?.stop(); removeDir(dataDir); });

  test('create, list, exchange on a star, revoke, restart: 403', async () => {
    const created = await cli(['create', '--data-dir', dataDir, '--scope', 'svc:read:logs:* svc:append:logs:app%2F*']);
    assert.equal(created.code, 0, created.stderr);
    const cred = JSON.parse(created.stdout.trim());
    assert.match(cred.key_id, /^ck_[0-9a-f]{16}$/);
    assert.equal(typeof cred.secret, 'string');
    assert.ok(cred.secret.length >= 40, 'a long random secret');
    assert.equal(cred.state, 'active');
    assert.equal(cred.scope, 'svc:read:logs:* svc:append:logs:app%2F*');
    assert.equal(cred.secret_hash, undefined, 'never the hash');

    const second = await cli(['create', `--data-dir=${dataDir}`, '--scope=svc:admin']);
    assert.equal(second.code, 0, second.stderr);
    const admin = JSON.parse(second.stdout.trim());

    const listed = await cli(['list', '--data-dir', dataDir]);
    assert.equal(listed.code, 0, listed.stderr);
    const rows = jsonLines(listed.stdout);
    assert.deepEqual(rows.map((r) => r.key_id).sort(), [cred.key_id, admin.key_id].sort());
    for (const r of rows) {
      assert.equal(r.secret, undefined, 'list never shows the secret');
      assert.equal(r.secret_hash, undefined, 'list never shows the hash');
      assert.equal(r.state, 'active');
      assert.ok(Number.isInteger(r.created_at_unix_ms));
    }
    assert.ok(!listed.stdout.includes(cred.secret));

    star = await startStar({ engine: 'node', dataDir, args: starArgs, env: starEnv });
    const adminTok = await request(star.baseUrl, 'POST', '/v1/token/exchange', { body: { key_id: admin.key_id, secret: admin.secret, bucket: 'logs' } });
    assertStatus(adminTok, 200, 'admin exchange');
    assertStatus(await request(star.baseUrl, 'POST', '/v1/buckets/logs', { body: {}, headers: bearer(adminTok.body.token) }), 201, 'bucket');
    assertStatus(await request(star.baseUrl, 'POST', streamPath('logs', 'app/web'), { body: {}, headers: bearer(adminTok.body.token) }), 201, 'stream');

    const ex = await request(star.baseUrl, 'POST', '/v1/token/exchange', { body: { key_id: cred.key_id, secret: cred.secret, bucket: 'logs' } });
    assertStatus(ex, 200, 'exchange with the CLI-made credential');
    assert.equal(claimsOf(ex.body.token).sub, cred.key_id);
    assertStatus(await request(star.baseUrl, 'POST', `${streamPath('logs', 'app/web')}/records`, { body: { records: [{ body: 'x' }] }, headers: bearer(ex.body.token) }), 200, 'append');
    assertStatus(await request(star.baseUrl, 'POST', '/v1/token/exchange', { body: { key_id: cred.key_id, secret: 'wrong', bucket: 'logs' } }), 401, 'wrong secret');
    await star.stop();
    star = undefined;

    const revoked = await cli(['revoke', '--data-dir', dataDir, '--key-id', cred.key_id]);
    assert.equal(revoked.code, 0, revoked.stderr);
    const row = JSON.parse(revoked.stdout.trim());
    assert.equal(row.state, 'revoked');
    assert.ok(Number.isInteger(row.revoked_at_unix_ms));
    assert.equal((await cli(['revoke', '--data-dir', dataDir, '--key-id', cred.key_id])).code, 0, 'revoke is idempotent');

    star = await startStar({ engine: 'uws', dataDir, args: starArgs, env: starEnv });
    assertStatus(await request(star.baseUrl, 'POST', '/v1/token/exchange', { body: { key_id: cred.key_id, secret: cred.secret, bucket: 'logs' } }), 403, 'revoked after restart');
    assertStatus(await request(star.baseUrl, 'POST', '/v1/token/exchange', { body: { key_id: admin.key_id, secret: admin.secret, scope: 'svc:admin' } }), 200, 'the other credential still works');
    await star.stop(); // the CLI needs the data dir to itself
    star = undefined;
    const after = jsonLines((await cli(['list', '--data-dir', dataDir])).stdout);
    assert.equal(after.find((r) => r.key_id === cred.key_id)?.state, 'revoked');
  });

  test('usage errors exit 2, operational errors exit 1, each with a reason on stderr', async () => {
    const empty = tempDir('svcd-cli-empty-');
    try {
      const cases: [string[], number, RegExp, Record<string, string>?][] = [
        [[], 2, /missing command/],
        [['frobnicate', '--data-dir', empty], 2, /unknown command 'frobnicate'/],
        [['list'], 2, /needs --data-dir/],
        [['create', '--data-dir', empty], 2, /create needs --scope/],
        [['revoke', '--data-dir', dataDir], 2, /revoke needs --key-id/],
        [['list', '--data-dir', dataDir, '--scope', 'svc:admin'], 2, /--scope does not apply to list/],
        [['list', '--data-dir', dataDir, '--bogus', 'x'], 2, /unknown flag --bogus/],
        [['create', '--data-dir', empty, '--scope', Array.from({ length: 65 }, (_, i) => `svc:read:b${i}:*`).join(' ')], 1, /scope has 65 svc: scope tokens/],
        [['revoke', '--data-dir', dataDir, '--key-id', 'ck_0000000000000000'], 1, /credential not found/],
        [['list', '--data-dir', join(empty, 'nowhere')], 1, /holds no star metadata/],
      ];
      const runs = await Promise.all(cases.map(([args, , , env]) => cli(args, env)));
      cases.forEach(([args, code, reason], i) => {
        assert.equal(runs[i].code, code, `${args.join(' ')}: exit ${runs[i].code}\n${runs[i].stderr}`);
        assert.match(runs[i].stderr, reason, args.join(' '));
        assert.equal(runs[i].stdout, '', `${args.join(' ')}: nothing on stdout`);
      });
      const help = await cli(['--help']);
      assert.equal(help.code, 0);
      assert.match(help.stdout, /usage: svcd credentials/);
      const viaEnv = await cli(['list'], { SVCD_DATA_DIR: dataDir });
      assert.equal(viaEnv.code, 0, viaEnv.stderr);
      assert.equal(jsonLines(viaEnv.stdout).length, 2, 'SVCD_DATA_DIR stands in for --data-dir');
    } finally {
      removeDir(empty);
    }
  });

  test('create --key-id registers the id as given; a taken or malformed id exits 1; the star exchanges it', async () => {
    const dir = tempDir('svcd-cli-keyid-');
    try {
      const made = await cli(['create', '--data-dir', dir, '--scope', 'svc:read:logs:*', '--key-id', 'deploy-bot.1']);
      assert.equal(made.code, 0, made.stderr);
      const cred = JSON.parse(made.stdout.trim());
      assert.equal(cred.key_id, 'deploy-bot.1');
      const cases: [string[], number, RegExp][] = [
        [['create', '--data-dir', dir, '--scope', 'svc:admin', '--key-id', 'deploy-bot.1'], 1, /credential deploy-bot\.1 already exists/],
        [['create', '--data-dir', dir, '--scope', 'svc:admin', '--key-id', 'no spaces'], 1, /key_id must be 1-128 characters of A-Z a-z 0-9 _ \. -/],
        [['list', '--data-dir', dir, '--key-id', 'deploy-bot.1'], 2, /--key-id does not apply to list/],
      ];
      for (const [args, code, reason] of cases) {
        const r = await cli(args);
        assert.equal(r.code, code, `${args.join(' ')}: exit ${r.code}\n${r.stderr}`);
        assert.match(r.stderr, reason, args.join(' '));
        assert.equal(r.stdout, '');
      }
      const generated = await cli(['create', '--data-dir', dir, '--scope', 'svc:admin', '--key-id=']);
      assert.equal(generated.code, 0, generated.stderr);
      assert.match(JSON.parse(generated.stdout.trim()).key_id, /^ck_[0-9a-f]{16}$/, 'an empty --key-id generates one');
      assert.deepEqual(jsonLines((await cli(['list', '--data-dir', dir])).stdout).map((r) => r.key_id).filter((k) => !k.startsWith('ck_')), ['deploy-bot.1']);

      const running = await startStar({ engine: 'node', dataDir: dir, args: starArgs, env: starEnv });
      try {
        const ex = await request(running.baseUrl, 'POST', '/v1/token/exchange', { body: { key_id: 'deploy-bot.1', secret: cred.secret, bucket: 'logs' } });
        assertStatus(ex, 200, 'exchange with the named credential');
        assert.equal(claimsOf(ex.body.token).sub, 'deploy-bot.1');
      } finally {
        await running.stop();
      }
    } finally {
      removeDir(dir);
    }
  });

  test('a data dir has one owner: the CLI and a second star refuse while a star runs, and work after it stops', async () => {
    const dir = tempDir('svcd-cli-lock-');
    try {
      const running = await startStar({ engine: 'node', dataDir: dir, args: starArgs, env: starEnv });
      try {
        const refused = await cli(['list', '--data-dir', dir]);
        assert.equal(refused.code, 1, refused.stderr);
        assert.match(refused.stderr, /in use by process \d+/);
        await assert.rejects(startStar({ engine: 'node', dataDir: dir, args: starArgs, env: starEnv }), /in use by process/);
      } finally {
        await running.stop();
      }
      const ok = await cli(['create', '--data-dir', dir, '--scope', 'svc:admin']);
      assert.equal(ok.code, 0, ok.stderr);
    } finally {
      removeDir(dir);
    }
  });
});
