// The one kind of failure a start is refused with: a reason the operator can fix (a port in use, a
// data dir that is a file, a TLS file missing, PostgreSQL away, a damaged journal), said by main in
// one line with exit 2, never a stack trace. A leaf module, so every layer that checks something at
// start (config, auth, storage, api) can throw it without pointing outward.

export class BootError extends Error {}

/** How a start-time check waits for a dependency that is away for a moment. */
export interface BootWait {
  /** How long the check is tried again before its last failure refuses the start. */
  waitMs: number;
  /** The pause between two tries. */
  retryMs: number;
}

/** Runs a start-time check until it passes. A failure `temporary` judges passing (the dependency did
 *  not answer, or failed on its side) is tried again every `bounds.retryMs` for up to
 *  `bounds.waitMs`, `onWait` told the first time, so a star restarted during a short outage of what
 *  it needs (a rolling restart of S3 or PostgreSQL) comes up once that is back rather than exiting;
 *  any other failure (credentials, a missing bucket or database) and the last one are thrown. */
export async function waitAtBoot<T>(attempt: () => Promise<T>, temporary: (err: unknown) => boolean, bounds: BootWait, onWait?: (err: unknown) => void): Promise<T> {
  const deadline = Date.now() + bounds.waitMs;
  for (let waited = false; ; waited = true) {
    try {
      return await attempt();
    } catch (err) {
      if (!temporary(err) || Date.now() + bounds.retryMs > deadline) throw err;
      if (!waited) onWait?.(err);
      await new Promise((r) => setTimeout(r, bounds.retryMs));
    }
  }
}
