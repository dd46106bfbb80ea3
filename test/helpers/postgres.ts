// The PostgreSQL the metadata tests run against (SVCD_TEST_POSTGRES_URL, default the local server's
// `test` database), and fresh schemas in it. Without a reachable server the tests skip and say why;
// under CI=true they must run, so an unreachable server fails them instead.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const TEST_POSTGRES_URL = process.env.SVCD_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** How long the reachability probe waits for a connection. Under CI, where the tests must run, a slow
 *  server (a loaded machine) must not fail a whole file; elsewhere a missing one is skipped quickly. */
const PROBE_CONNECT_MS = process.env.CI ? 15_000 : 3000;

/** Undefined when PostgreSQL answers; otherwise why the tests skip. Throws under CI. */
export async function postgresSkipReason(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: PROBE_CONNECT_MS });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (err) {
    const why = `no PostgreSQL at ${TEST_POSTGRES_URL} (${(err as Error).message}); set SVCD_TEST_POSTGRES_URL or start it`;
    if (process.env.CI) throw new Error(`${why}; under CI=true the PostgreSQL tests must run`);
    return why;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A schema name no other test uses. */
export function freshSchema(prefix = 'svcd_test'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}
