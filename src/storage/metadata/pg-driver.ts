// The pg driver, loaded when the first PostgreSQL metadata store or cluster is made: a star on the
// embedded default starts without it.

import type pg from 'pg';

export type PgDriver = typeof pg;

let loading: Promise<PgDriver> | undefined;

export function loadPg(): Promise<PgDriver> {
  loading ??= import('pg').then((m) => m.default);
  return loading;
}
