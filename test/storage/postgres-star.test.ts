// A real star with `--metadata postgres`: its buckets, streams and credentials live in the schema's
// tables (nothing under <data-dir>/meta), a second star on the same schema is refused at start with a
// one-line reason while the first runs, and the credentials CLI reaches the same rows through
// SVCD_METADATA. Skipped with the reason when no PostgreSQL answers; required under CI.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { REPO_ROOT, removeDir, starEntry, startServer, tempDir, waitForOutput } from '../helpers/server.ts';
import { dropSchema, freshSchema, postgresSkipReason, TEST_POSTGRES_URL } from '../helpers/postgres.ts';

/** How long a refused star may take to exit. */
const REFUSAL_WAIT_MS = 20_000;

const skip = await postgresSkipReason();

/** Runs `node src/main.ts …args` to its exit: the code and everything it printed. */
function runStar(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string; stdout: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...starEntry(), ...args], {
      cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let stdout = '';
    proc.stdout.on('data', (c: Buffer) => { out += c.toString(); stdout += c.toString(); });
    proc.stderr.on('data', (c: Buffer) => { out += c.toString(); });
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`still running after ${REFUSAL_WAIT_MS} ms:\n${out}`)); }, REFUSAL_WAIT_MS);
    proc.once('exit', (code) => { clearTimeout(timer); resolve({ code, out, stdout }); });
  });
}

describe('a star on the postgres metadata backend', { skip }, () => {
  const schema = freshSchema();
  const pgArgs = ['--metadata', 'postgres', '--postgres-url', TEST_POSTGRES_URL, '--postgres-schema', schema];
  const dirs: string[] = [];
  let sql: pg.Client;
  before(async () => {
    sql = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await sql.connect();
  });
  after(async () => {
    await sql.end();
    await dropSchema(schema);
    for (const d of dirs) removeDir(d);
  });

  test('keeps its metadata in the schema, a second star joins it as a cluster, and the CLI reaches the same rows', { timeout: 60_000 }, async () => {
    const dataDir = tempDir();
    dirs.push(dataDir);
    const star = await startServer({ dataDir, args: pgArgs });
    let streamId = '';
    try {
      const u = star.baseUrl;
      assert.equal((await fetch(`${u}/v1/buckets/pgb`, { method: 'POST', body: '{}' })).status, 201);
      const created = await fetch(`${u}/v1/streams/pgb/orders%2Feu`, { method: 'POST', body: '{"creation_token":"c1"}' });
      assert.equal(created.status, 201);
      streamId = ((await created.json()) as { stream_id: string }).stream_id;
      const ack = await fetch(`${u}/v1/streams/pgb/orders%2Feu/records`, { method: 'POST', body: '{"records":[{"body":"a"}]}' });
      assert.equal(ack.status, 200);
      const rows = await sql.query<{ doc: string }>(`SELECT doc FROM ${schema}.streams WHERE bucket = 'pgb' AND key = $1`, [Buffer.from('orders/eu')]);
      assert.equal(rows.rows.length, 1, 'the stream row is in PostgreSQL');
      assert.equal((JSON.parse(rows.rows[0].doc) as { creation_token: string }).creation_token, 'c1');
      assert.equal((await sql.query(`SELECT 1 FROM ${schema}.buckets WHERE name = 'pgb'`)).rows.length, 1);
      assert.equal(existsSync(join(dataDir, 'meta')), false, 'nothing is kept under the data dir\'s meta/');

      // A second star on the same schema joins the cluster (it does not own the database): it knows
      // the bucket, and a request for the stream hops to the first star, which leads it.
      const otherDir = tempDir();
      dirs.push(otherDir);
      const second = await startServer({ dataDir: otherDir, args: pgArgs });
      try {
        const got = await fetch(`${second.baseUrl}/v1/streams/pgb/orders%2Feu`);
        assert.equal(got.status, 200, await got.clone().text());
        assert.equal(((await got.json()) as { stream_id: string }).stream_id, streamId);
        const stars = await sql.query<{ star_id: string }>(`SELECT star_id FROM ${schema}.stars`);
        assert.equal(stars.rows.length, 2, 'both stars are members');
      } finally {
        await second.stop();
      }
    } finally {
      await star.stop();
    }

    const cli = await runStar(['credentials', 'create', '--data-dir', dataDir, '--scope', 'svc:read:pgb:*'], {
      SVCD_METADATA: 'postgres', SVCD_POSTGRES_URL: TEST_POSTGRES_URL, SVCD_POSTGRES_SCHEMA: schema,
    });
    assert.equal(cli.code, 0, cli.out);
    const created = JSON.parse(cli.stdout.split('\n')[0]) as { key_id: string };
    const creds = await sql.query<{ key_id: string }>(`SELECT key_id FROM ${schema}.credentials`);
    assert.deepEqual(creds.rows.map((r) => r.key_id), [created.key_id]);

    const again = await startServer({ dataDir, args: pgArgs }); // the first star's lock went with it
    try {
      const got = await (await fetch(`${again.baseUrl}/v1/streams/pgb/orders%2Feu`)).json() as { stream_id: string };
      assert.equal(got.stream_id, streamId);
      const read = await (await fetch(`${again.baseUrl}/v1/streams/pgb/orders%2Feu/records?seq_num=0`)).json() as { records: { body: string }[] };
      assert.deepEqual(read.records.map((r) => r.body), ['a']);
    } finally {
      await again.stop();
    }
  });

  test('a star whose PostgreSQL connection is lost stops being ready (/readyz 503), answers writes 503, and is ready again once it reconnects', { timeout: 60_000 }, async () => {
    const lostSchema = freshSchema();
    const dataDir = tempDir();
    dirs.push(dataDir);
    const star = await startServer({ dataDir, args: ['--metadata', 'postgres', '--postgres-url', TEST_POSTGRES_URL, '--postgres-schema', lostSchema, '--metrics-listen', '127.0.0.1:0'] });
    try {
      const ops = `http://127.0.0.1:${(await waitForOutput(star, /svcd ops on http:\/\/127\.0\.0\.1:(\d+)/))[1]}`;
      assert.equal((await fetch(`${ops}/readyz`)).status, 200);
      // End the star's session and take the schema's lock exclusively in the test's own, so the star's
      // reconnection attempts find the schema held and the outage lasts until the test lets go (the star
      // reconnects within 100 ms otherwise, and the checks below would race it).
      let held = false;
      for (let tries = 0; !held && tries < 100; tries++) {
        const killed = await sql.query(
          `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = hashtext($1)::oid AND granted`, [`svcd:${lostSchema}`],
        );
        if (tries === 0) assert.equal(killed.rows.length, 1, 'the star holds the schema\'s lock (shared)');
        held = (await sql.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [`svcd:${lostSchema}`])).rows[0].ok;
      }
      assert.ok(held, 'the test holds the schema lock');
      const deadline = Date.now() + REFUSAL_WAIT_MS;
      let status = 200;
      while (status === 200 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        status = (await fetch(`${ops}/readyz`)).status;
      }
      assert.equal(status, 503);
      assert.equal((await fetch(`${ops}/healthz`)).status, 200, 'alive, but not ready');
      const create = await fetch(`${star.baseUrl}/v1/buckets/after`, { method: 'POST', body: '{}' });
      assert.equal(create.status, 503, 'a write the store cannot take is 503, not a 500 bug');
      assert.equal(create.headers.get('retry-after'), '1');
      assert.equal(typeof ((await create.json()) as { error: unknown }).error, 'string');
      // Let go: the star reconnects by itself and is ready again.
      await sql.query('SELECT pg_advisory_unlock(hashtext($1))', [`svcd:${lostSchema}`]);
      const back = Date.now() + REFUSAL_WAIT_MS;
      while (status !== 200 && Date.now() < back) {
        await new Promise((r) => setTimeout(r, 50));
        status = (await fetch(`${ops}/readyz`)).status;
      }
      assert.equal(status, 200, 'ready again once the schema is free');
      assert.equal((await fetch(`${star.baseUrl}/v1/buckets/after`, { method: 'POST', body: '{}' })).status, 201);
      assert.doesNotMatch(star.output(), /bug: unmapped error/);
    } finally {
      await star.stop();
      await dropSchema(lostSchema);
    }
  });
});
