// Failures that a dependency being away causes (the object store, the metadata store), from loops
// that retry: logged at most once per OUTAGE_LOG_INTERVAL_MS for each kind of work, in one line with
// how many were left out, never with a stack. The dependency's own health logs when the outage begins
// and ends; logging every retry drowned that (a star wrote 3,200 lines in 35 s of an S3 outage, chaos
// audit F3). Any other failure is logged whole, every time: it may be a bug.

import { OUTAGE_LOG_INTERVAL_MS } from '../config/limits.ts';
import { isDependencyOutage } from './errors.ts';

type LogError = (msg: string, err?: unknown) => void;

export class OutageLog {
  /** By kind of work (a fixed string per call site, so the map stays as small as the call sites). */
  private readonly last = new Map<string, { atMs: number; leftOut: number }>();

  constructor(private readonly log: LogError | undefined, private readonly nowMs: () => number) {}

  /** Logs `message` with `err`; `kind` names the work, for the rate bound (the message may name a stream). */
  error(kind: string, message: string, err: unknown): void {
    if (!isDependencyOutage(err)) {
      this.log?.(message, err);
      return;
    }
    const now = this.nowMs();
    const seen = this.last.get(kind);
    if (seen !== undefined && now - seen.atMs < OUTAGE_LOG_INTERVAL_MS) {
      seen.leftOut += 1;
      return;
    }
    const more = seen !== undefined && seen.leftOut > 0 ? ` (and ${seen.leftOut} more like it in the last ${Math.round((now - seen.atMs) / 1000)} s)` : '';
    this.last.set(kind, { atMs: now, leftOut: 0 });
    this.log?.(`${message}: ${(err as Error).message}${more}`);
  }
}
