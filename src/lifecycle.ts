// Ordered start and stop for the composition root (server.ts). Each part of a star, once started,
// says how it stops and in which phase. Stopping runs the phases in the order below, and within a
// phase the parts in reverse of their start. A start that fails part-way stops what had started, in
// the same order, so a refused boot (bad auth settings, a locked schema, an unreachable store)
// leaves no lock, pool, socket or connection behind.

import { BootError } from './config/boot-error.ts';

/** Runs one step of a start; any failure becomes a BootError saying `what` and the cause's message
 *  (or code; a BootError already is one). */
export async function refusedAs<T>(what: string, step: () => Promise<T> | T): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof BootError) throw err;
    throw new BootError(`${what}: ${reasonOf(err)}`, { cause: err });
  }
}

/** A failure in one line: its message's first, or its code. */
export function reasonOf(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return e instanceof Error && e.message !== '' ? e.message.split('\n')[0] : e?.code ?? String(err);
}

/** The order a star stops in: no new callers first; then the requests already in; then the log
 *  commits what it holds (every append it made durable is acknowledged); then the core; then the
 *  leases (given up at once, so the next leaders need not wait them out); then the worker threads,
 *  the stores, and last the data dir's lock. */
export const STOP_PHASES = ['listeners', 'requests', 'log', 'core', 'leadership', 'workers', 'stores', 'data-dir'] as const;
export type StopPhase = (typeof STOP_PHASES)[number];

interface Part { name: string; phase: StopPhase; stop: () => unknown }

export class Lifecycle {
  private readonly parts: Part[] = [];
  private stopping: Promise<void> | undefined;

  constructor(private readonly logError: (msg: string, err?: unknown) => void) {}

  /** Records a part that has started, and how it stops. */
  started(name: string, phase: StopPhase, stop: () => unknown): void {
    this.parts.push({ name, phase, stop });
  }

  /** Runs `start`; when it throws, stops what had started and throws the start's error. */
  async boot<T>(start: () => Promise<T>): Promise<T> {
    try {
      return await start();
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  /** Stops every part, once, in phase order. A part that fails to stop is logged and the rest
   *  still stop: one stuck connection must not keep the data dir locked. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      for (const phase of STOP_PHASES) {
        for (let i = this.parts.length - 1; i >= 0; i--) {
          const p = this.parts[i];
          if (p.phase !== phase) continue;
          try {
            await p.stop();
          } catch (err) {
            this.logError(`stopping ${p.name} failed`, err);
          }
        }
      }
    })();
    return this.stopping;
  }
}
