// What a star depends on (the metadata store, the WAL's disk, the object store) as one up/down state
// each: how often it failed, how long it has been down in all, and one log line when an episode
// starts and one when it ends (not one per failed attempt). /metrics exposes every one of them.

export class DependencyHealth {
  private isUp = true;
  private downSinceMs = 0;
  private downMsBefore = 0;
  private errorCount = 0;

  /** `log` gets the episode lines; pass undefined where another part logs them (the flusher). */
  constructor(
    readonly name: string,
    private readonly log: ((line: string) => void) | undefined,
    private readonly nowMs: () => number = () => Date.now(),
  ) {}

  get up(): boolean { return this.isUp; }
  get errors(): number { return this.errorCount; }

  /** Milliseconds down in all, including the episode under way. */
  downMs(): number {
    return this.downMsBefore + (this.isUp ? 0 : this.nowMs() - this.downSinceMs);
  }

  /** An operation failed; the first failure of an episode is logged. */
  failed(cause: string): void {
    this.errorCount += 1;
    if (!this.isUp) return;
    this.isUp = false;
    this.downSinceMs = this.nowMs();
    this.log?.(`${this.name} is unavailable (${cause}); retrying with backoff`);
  }

  /** An operation succeeded: an episode under way ends, and is logged with its length. */
  succeeded(): void {
    if (this.isUp) return;
    const ms = this.nowMs() - this.downSinceMs;
    this.downMsBefore += ms;
    this.isUp = true;
    this.log?.(`${this.name} is available again after ${ms} ms`);
  }

  /** A failure of background work on the dependency that is no outage (its operations go on). */
  warn(what: string): void {
    this.log?.(`${this.name}: ${what}`);
  }
}
