// SIGINT and SIGTERM for a command that must say where it stopped (append): the first signal is
// turned into a value the command's waits can race against, so it can finish what it already sent
// and report it; a second signal ends the process at once, as a user pressing Ctrl-C twice expects.

import { EXIT } from './exit.ts';

/** How long an interrupted append waits for the records it already read to be acknowledged before
 *  it reports what it knows and exits (a second interrupt stops the wait at once). */
export const INTERRUPT_FLUSH_MS_MAX = 5_000;

export const INTERRUPTED = Symbol('interrupted');

export class Interrupt {
  fired = false;
  /** The races under way, each told of the first signal and taken out when it settles (a reaction
   *  on one long-lived promise per race would pile up over a long append: one per line read). */
  private readonly waiters = new Set<() => void>();
  /** Said on stderr before a second signal ends the process (where the command had got to). */
  lastWords: () => string = () => '';

  private readonly onSignal = (): void => {
    if (this.fired) {
      const words = this.lastWords();
      if (words !== '') process.stderr.write(`${words}\n`);
      process.exit(EXIT.INTERRUPTED);
    }
    this.fired = true;
    for (const w of [...this.waiters]) w();
    this.waiters.clear();
  };

  constructor() {
    process.on('SIGINT', this.onSignal);
    process.on('SIGTERM', this.onSignal);
  }

  /** `p`, or INTERRUPTED if the first signal comes before it settles. */
  race<T>(p: Promise<T>): Promise<T | typeof INTERRUPTED> {
    if (this.fired) return Promise.resolve(INTERRUPTED);
    return new Promise<T | typeof INTERRUPTED>((resolve, reject) => {
      const waiter = (): void => resolve(INTERRUPTED);
      this.waiters.add(waiter);
      p.then(
        (v) => { this.waiters.delete(waiter); resolve(v); },
        (e: unknown) => { this.waiters.delete(waiter); reject(e); },
      );
    });
  }

  /** Waits for `p` for at most `ms`; true when it settled in time, whatever its outcome. */
  async within(p: Promise<unknown>, ms: number): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<false>((resolve) => { timer = setTimeout(() => resolve(false), ms); });
    try {
      return await Promise.race([p.then(() => true, () => true), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  dispose(): void {
    process.off('SIGINT', this.onSignal);
    process.off('SIGTERM', this.onSignal);
  }
}
