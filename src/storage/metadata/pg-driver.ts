// The pg driver, loaded when the first PostgreSQL metadata store or cluster is made: a star on the
// embedded default starts without it. Also what the store's connection and the cluster's pool share:
// how a connection is opened, how a dead one is told from a refused statement, and how it is dropped.

import type pg from 'pg';
import {
  POSTGRES_ALIVE_CHECK_MS_MAX, POSTGRES_ANSWER_CHECK_MS, POSTGRES_ANSWER_MS_MAX, POSTGRES_ANSWER_SLOW_MS, POSTGRES_CONFLICT_PAUSE_MS_MAX, POSTGRES_CONFLICT_RETRIES_MAX, POSTGRES_CONNECT_MS_MAX, POSTGRES_KEEPALIVE_IDLE_MS,
  POSTGRES_STATEMENT_MS_MAX,
} from '../../config/limits.ts';

export type PgDriver = typeof pg;

let loading: Promise<PgDriver> | undefined;

export function loadPg(): Promise<PgDriver> {
  loading ??= import('pg').then((m) => m.default);
  return loading;
}

/** How every svcd connection to PostgreSQL is opened. The server cancels a statement past
 *  POSTGRES_STATEMENT_MS_MAX; the client gives one up past POSTGRES_ANSWER_MS_MAX (its connection
 *  is then dead without having said so: see isConnectionFailure); TCP keepalive finds an idle one
 *  whose peer vanished. */
export function pgConnectionOptions(url: string, applicationName: string): pg.ClientConfig {
  return {
    connectionString: url,
    connectionTimeoutMillis: POSTGRES_CONNECT_MS_MAX,
    statement_timeout: POSTGRES_STATEMENT_MS_MAX,
    query_timeout: POSTGRES_ANSWER_MS_MAX,
    keepAlive: true,
    keepAliveInitialDelayMillis: POSTGRES_KEEPALIVE_IDLE_MS,
    application_name: applicationName,
  };
}

/** Whether a failed statement means its connection is gone (and its outcome unknown): anything but a
 *  statement error the server answered (a socket error, the driver's own answer timeout), or one of
 *  classes 08 (connection exception) and 57P (the server ended the session: pg_terminate_backend, a
 *  shutdown). A plain statement error leaves the connection usable. */
export function isConnectionFailure(driver: PgDriver | undefined, err: unknown): boolean {
  if (driver === undefined || !(err instanceof driver.DatabaseError)) return true;
  const code = err.code ?? '';
  return code.startsWith('08') || code.startsWith('57P');
}

/** Whether a statement the server refused was refused for the server's state, not for the statement:
 *  cancelled (57014: statement_timeout, pg_cancel_backend), out of resources (class 53: too many
 *  connections, disk full, out of memory), a lock not granted (55P03), a read-only server (25006: a
 *  standby, a failover under way), a system or I/O error (class 58), a conflict still there after
 *  the retries (class 40). The same statement may well pass shortly: the caller is told the store is
 *  unavailable (503, retry), not a bug (500). Anything else (a syntax or constraint error) is svcd's. */
export function isServerTrouble(driver: PgDriver | undefined, err: unknown): boolean {
  if (driver === undefined || !(err instanceof driver.DatabaseError)) return false;
  const code = err.code ?? '';
  return code === '57014' || code === '55P03' || code === '25006' || code.startsWith('53') || code.startsWith('58') || code.startsWith('40');
}

/** Whether a statement failed only because PostgreSQL chose it to break a deadlock (40P01) or a
 *  serialization conflict (40001) with another: it was rolled back whole, and svcd's statements each
 *  run alone (autocommit), so sending it again is safe. The cluster's statements lock lease rows in
 *  whatever order their plans visit them (a renewal, a group commit and a guarded row write of one
 *  star can run at once), so two of them can deadlock; the loser goes again. */
export function isConflict(driver: PgDriver | undefined, err: unknown): boolean {
  if (driver === undefined || !(err instanceof driver.DatabaseError)) return false;
  return err.code === '40P01' || err.code === '40001';
}

/** Runs `statement`, again after a short pause each time PostgreSQL rolled it back to break a
 *  conflict (isConflict), at most POSTGRES_CONFLICT_RETRIES_MAX times. */
export async function retryingConflicts<T>(driver: () => PgDriver | undefined, statement: () => Promise<T>): Promise<T> {
  for (let conflicts = 0; ; conflicts++) {
    try {
      return await statement();
    } catch (err) {
      if (!isConflict(driver(), err) || conflicts >= POSTGRES_CONFLICT_RETRIES_MAX) throw err;
      await new Promise((r) => setTimeout(r, Math.random() * POSTGRES_CONFLICT_PAUSE_MS_MAX));
    }
  }
}

/** Statements whose answer is overdue (past POSTGRES_ANSWER_SLOW_MS, long before the driver gives
 *  them up): the store and the cluster's pool are not ready while any is. `onChange` is told when the
 *  first falls overdue and when the last is answered. */
export class OverdueAnswers {
  count = 0;

  constructor(private readonly onChange?: (overdue: boolean) => void) {}

  /** Watches one statement from now; the function returned is called once it is answered or failed. */
  watch(): () => void {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      if (this.count++ === 0) this.onChange?.(true);
    }, POSTGRES_ANSWER_SLOW_MS);
    return () => {
      clearTimeout(timer);
      if (late && --this.count === 0) this.onChange?.(false);
    };
  }
}

/** Where a watched statement was sent: the client, and how to reach its server to look its session up. */
export interface WatchedSession {
  client: pg.Client;
  driver: PgDriver | undefined;
  url: string;
  /** The application name its connection was opened with (deadSession matches it). */
  applicationName: string;
}

/** Sends one statement (`send`) on `at.client`. If it still has no answer POSTGRES_ANSWER_CHECK_MS
 *  after it was sent, its server session is looked up (deadSession); when the server says it is dead,
 *  `giveUp(why)` is called (the caller drops the connection, so the statement fails as on a lost
 *  connection, outcome unknown) rather than waiting out POSTGRES_ANSWER_MS_MAX. Only while this very
 *  statement still waits: a look that comes back after the answer (the session idle because it
 *  answered, its connection maybe serving another statement now) decides nothing. */
export function sendWatched<T>(send: () => Promise<T>, at: WatchedSession, giveUp: (why: string) => void): Promise<T> {
  let waiting = true;
  const timer = setTimeout(() => {
    const pid = backendPid(at.client);
    if (pid === undefined || at.driver === undefined) return;
    void deadSession(at.driver, at.url, at.applicationName, pid).then((dead) => {
      if (dead !== undefined && waiting) giveUp(`no answer for ${POSTGRES_ANSWER_CHECK_MS} ms, and ${dead}`);
    });
  }, POSTGRES_ANSWER_CHECK_MS);
  return send().finally(() => {
    waiting = false;
    clearTimeout(timer);
  });
}

/** Bytes of a name PostgreSQL keeps (NAMEDATALEN - 1). */
const PG_NAME_BYTES_MAX = 63;

/** The server session of a node-pg client (its backend pid; not in its types). */
export function backendPid(client: pg.Client): number | undefined {
  const pid = (client as unknown as { processID?: unknown }).processID;
  return typeof pid === 'number' ? pid : undefined;
}

/** Why the connection whose server session is `pid` is dead although it has said nothing, asked of
 *  the server over a fresh connection: its session (by pid and application name) is idle while a
 *  statement sent on it waits for its answer. Undefined while the session works on something (a
 *  statement running or waiting on a lock), when no such session is seen (behind a pooler or a proxy
 *  the pid a connection was given is not a server session's, so an absent one proves nothing), or
 *  when the server could not be asked within POSTGRES_ALIVE_CHECK_MS_MAX (a route to it gone
 *  silent): the answer bound decides then. */
export async function deadSession(driver: PgDriver, url: string, applicationName: string, pid: number): Promise<string | undefined> {
  const probe = new driver.Client({
    ...pgConnectionOptions(url, applicationName),
    connectionTimeoutMillis: POSTGRES_ALIVE_CHECK_MS_MAX,
    query_timeout: POSTGRES_ALIVE_CHECK_MS_MAX,
  });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    const rows = (await probe.query<{ state: string | null; application_name: string }>(
      'SELECT state, application_name FROM pg_stat_activity WHERE pid = $1', [pid])).rows;
    // PostgreSQL keeps the first PG_NAME_BYTES_MAX bytes of an application name.
    const shown = Buffer.from(applicationName).subarray(0, PG_NAME_BYTES_MAX).toString();
    if (rows[0]?.application_name !== shown || rows[0].state !== 'idle') return undefined;
    return `its server session ${pid} is idle: the statement never reached it, or its answer was lost`;
  } catch {
    return undefined;
  } finally {
    dropClient(probe);
  }
}

/** The socket under a node-pg client (not in its types). */
interface ClientSocket { connection?: { stream?: { destroy(): void } } }

/** Drops a client whose connection failed. end() alone says goodbye and waits for the server, which
 *  on a connection that stopped answering never comes; the socket is destroyed as well. */
export function dropClient(client: pg.Client): void {
  void client.end().catch(() => undefined);
  (client as unknown as ClientSocket).connection?.stream?.destroy();
}
