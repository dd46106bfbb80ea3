// Waiting on a log's durable signal without a lost wakeup: the signal is read *before* the condition
// is checked, so a commit that lands between the check and the wait changes the value the wait is
// on, and the wait returns at once. Read after the check (`while (!cond) await waitDurable(signal())`)
// a commit in between is missed, and with nothing more to commit the wait never ends (it hung CI once,
// in test/storage/flusher-ring.test.ts, with everything durable and the flusher asleep).

export interface DurableSignal {
  durableSignal(): number;
  waitDurable(seen: number): Promise<unknown>;
}

/** Runs `attempt` until it answers true, waiting for the next group commit between tries. */
export async function untilDurable(log: DurableSignal, attempt: () => boolean): Promise<void> {
  for (;;) {
    const seen = log.durableSignal();
    if (attempt()) return;
    await log.waitDurable(seen);
  }
}
