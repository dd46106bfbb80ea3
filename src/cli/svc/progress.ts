// A one-line progress display on stderr (records, records/s, MB/s), redrawn in place; only when
// stdout is a terminal, so pipes and scripts never see it.

/** Redraw period. */
export const PROGRESS_INTERVAL_MS = 250;

export class Progress {
  private records = 0;
  private bytes = 0;
  private readonly startMs = Date.now();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly label: string, private readonly enabled: boolean) {
    if (enabled) {
      this.timer = setInterval(() => this.draw(), PROGRESS_INTERVAL_MS);
      this.timer.unref();
    }
  }

  add(records: number, bytes: number): void {
    this.records += records;
    this.bytes += bytes;
  }

  private draw(): void {
    const s = Math.max(0.001, (Date.now() - this.startMs) / 1000);
    const line = `${this.label} ${this.records.toLocaleString('en-US')} records  ${Math.round(this.records / s).toLocaleString('en-US')} rec/s  ${(this.bytes / s / 1e6).toFixed(2)} MB/s`;
    process.stderr.write(`\r${line}\x1b[K`);
  }

  done(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.draw();
    process.stderr.write('\n');
  }
}
