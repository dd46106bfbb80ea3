// Points in time on the command line: `10m` (that long ago: ms, s, m, h, d), an ISO 8601 date, or
// milliseconds since the epoch.

import { UsageError } from './args.ts';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration like `500ms`, `30s`, `10m`, `2h`, `1d`, in ms. */
export function parseDurationMs(v: string, flag: string): number {
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(v);
  if (!m) throw new UsageError(`--${flag}: expected a duration like 30s, 10m, 2h, 1d; got ${JSON.stringify(v)}`);
  return Number(m[1]) * UNIT_MS[m[2]];
}

/** `10m` (ago), an ISO date, or epoch milliseconds, as epoch milliseconds. */
export function parseTimeMs(v: string, flag: string, nowMs: number): number {
  if (/^\d+$/.test(v)) return Number(v);
  if (/^\d+(ms|s|m|h|d)$/.test(v)) return nowMs - parseDurationMs(v, flag);
  const t = Date.parse(v);
  if (Number.isNaN(t)) throw new UsageError(`--${flag}: expected 10m (ago), an ISO date or epoch ms; got ${JSON.stringify(v)}`);
  return t;
}
