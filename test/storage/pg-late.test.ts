// A star started while its PostgreSQL does not answer (a short outage during a rolling restart, the
// database still starting) waits for it and comes up once it answers, as it does for S3, rather than
// exiting and staying down with no supervisor to restart it. One PostgreSQL answers no (a database
// that does not exist) still refuses at once, in one line. A real star and the real PostgreSQL,
// reached through a TCP relay in this process that starts listening on the star's port only after
// the star started.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import { bootToExit, removeDir, startServer, tempDir } from '../helpers/server.ts';
import { dropSchema, freshSchema, postgresSkipReason, TEST_POSTGRES_URL } from '../helpers/postgres.ts';
import { closedPort } from '../helpers/ports.ts';
import { POSTGRES_BOOT_WAIT_MS_MAX } from '../../src/config/limits.ts';

const pgSkip = await postgresSkipReason();

/** The star's line saying it waits for PostgreSQL: the relay starts listening once it is printed (not
 *  after a fixed delay, which a loaded machine's star may not have used to look yet). */
const WAITING_LINE = /metadata: PostgreSQL \(--postgres-url 127\.0\.0\.1:\d+\/\w+\) did not answer: .*ECONNREFUSED.*; waiting up to \d+ s for it/;

/** Relays every connection on `port` to PostgreSQL. */
async function relayToPostgres(port: number): Promise<Server> {
  const target = new URL(TEST_POSTGRES_URL);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => { sockets.delete(s); client.destroy(); upstream.destroy(); });
    }
    client.pipe(upstream).pipe(client);
  });
  server.on('close', () => { for (const s of sockets) s.destroy(); });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

describe('PostgreSQL at a star\'s start', { timeout: 180_000 }, () => {
  const cleanups: Array<() => unknown> = [];
  after(async () => { for (const c of cleanups.reverse()) await c(); });

  test(`a star whose PostgreSQL answers only once it waits for it (up to ${POSTGRES_BOOT_WAIT_MS_MAX / 1000} s) starts and serves`, { skip: pgSkip }, async () => {
    const port = await closedPort();
    const schema = freshSchema();
    const dataDir = tempDir();
    cleanups.push(() => removeDir(dataDir), () => dropSchema(schema));
    const url = new URL(TEST_POSTGRES_URL);
    url.host = `127.0.0.1:${port}`;
    let relay: Promise<Server> | undefined;
    cleanups.push(async () => { const r = await relay; if (r) await new Promise((done) => r.close(done)); });
    const starting = startServer({
      dataDir, args: ['--metadata', 'postgres', '--postgres-url', url.toString(), '--postgres-schema', schema],
      onOutput: (out) => { if (relay === undefined && WAITING_LINE.test(out)) relay = relayToPostgres(port); },
    });
    // Seen by the test as a rejection if the star exits before listening.
    starting.catch(() => undefined);
    const star = await starting;
    cleanups.push(() => star.stop());
    assert.match(star.output(), WAITING_LINE);
    const post = (path: string, body: unknown): Promise<Response> => fetch(`${star.baseUrl}${path}`, { method: 'POST', body: JSON.stringify(body) });
    assert.equal((await post('/v1/buckets/b', {})).status, 201);
    assert.equal((await post('/v1/streams/b/s', {})).status, 201);
    assert.equal((await post('/v1/streams/b/s/records', { records: [{ body: 'x' }] })).status, 200);
  });

  test('a star whose PostgreSQL answers that the database does not exist refuses to start at once, in one line', { skip: pgSkip }, async () => {
    const dataDir = tempDir();
    cleanups.push(() => removeDir(dataDir));
    const url = new URL(TEST_POSTGRES_URL);
    url.pathname = '/svcd_no_such_database';
    const r = await bootToExit(['--listen', '127.0.0.1:0', '--data-dir', dataDir, '--metadata', 'postgres', '--postgres-url', url.toString(), '--postgres-schema', 'svcd_boot_refusal']);
    assert.equal(r.code, 2, r.err);
    const lines = r.err.trim().split('\n').filter((l) => l.startsWith('svcd: '));
    assert.equal(lines.length, 1, r.err);
    assert.match(lines[0], /metadata: PostgreSQL \(--postgres-url .*\/svcd_no_such_database\) did not answer: .*does not exist/);
    assert.doesNotMatch(r.err, /waiting up to/);
  });
});
