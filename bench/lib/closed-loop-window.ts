// The closed loop and its measurement window, shared by the load generators that speak different
// protocols (loadgen/closed-loop.ts: svcd over HTTP/1.1; peers/redis-xadd.ts: Redis over RESP). Each
// connection sends its next request as soon as the previous answer is whole; answers before the
// window opens (the warm-up) are discarded, only answers that complete inside it count, and
// latency runs from the write to the whole answer, in µs in an hdr histogram.
import { encodeHistogram, newHistogram, recordNs } from './hist.ts';
import type { LoadResult } from '../loadgen/spec.ts';

/** How long in-flight requests may take to finish after the window closes. */
const DRAIN_MS_MAX = 5000;

/** One answer as the protocol's driver judged it. */
export type Answer =
  /** A good answer: how many records it carried, its bytes on the wire, and a check of its content
   *  run only inside the window (it may look at just the first answer it is given). */
  | { ok: true; status: string; records: number; wireBytes: number; check?: () => string | undefined }
  /** An answer that is a failure (a bad status, a wrong reply): counted as an error. */
  | { ok: false; status: string; error: string };

export interface ClosedLoop {
  conns: number;
  warmupMs: number;
  measureMs: number;
  /** Measure from the first request until this many records were answered (no warm-up). */
  stopAfterRecords?: number;
  /** Sends connection c's next request; `answered` gets the answer, or an Error when the
   *  connection died (it then stays dead). */
  send(c: number, answered: (a: Answer | Error) => void): void;
  /** Reports to the parent when the window opens and closes. */
  marks(kind: 'measure-start' | 'measure-end'): void;
}

export function runClosedLoop(loop: ClosedLoop): Promise<LoadResult> {
  const hist = newHistogram();
  const statuses: Record<string, number> = {};
  const fill = loop.stopAfterRecords !== undefined;
  let firstError: string | undefined;
  let requests = 0;
  let records = 0;
  let errors = 0;
  let wireBytesIn = 0;
  let measuring = false;
  let stopping = false;
  let inFlight = 0;
  let tStart = 0;
  let tEnd = 0;
  let cpu0 = process.cpuUsage();
  let drained: () => void = () => {};

  const startWindow = (): void => {
    measuring = true;
    tStart = performance.now();
    cpu0 = process.cpuUsage();
    loop.marks('measure-start');
  };
  const endWindow = (): void => {
    if (stopping) return;
    measuring = false;
    stopping = true;
    tEnd = performance.now();
    loop.marks('measure-end');
    if (inFlight === 0) drained();
    else setTimeout(() => drained(), DRAIN_MS_MAX).unref();
  };

  const fire = (c: number): void => {
    if (stopping) return;
    const t0 = process.hrtime.bigint();
    inFlight++;
    loop.send(c, (a) => {
      inFlight--;
      const dt = Number(process.hrtime.bigint() - t0);
      if (measuring) {
        if (a instanceof Error) {
          errors++;
          statuses.conn_error = (statuses.conn_error ?? 0) + 1;
          firstError ??= a.message;
        } else {
          statuses[a.status] = (statuses[a.status] ?? 0) + 1;
          if (a.ok) {
            const bad = a.check?.();
            if (bad) { errors++; firstError ??= bad; }
            records += a.records;
            requests++;
            wireBytesIn += a.wireBytes;
            recordNs(hist, dt);
            if (fill && records >= loop.stopAfterRecords!) endWindow();
          } else {
            errors++;
            firstError ??= a.error;
          }
        }
      }
      if (a instanceof Error) { if (inFlight === 0 && stopping) drained(); return; } // a dead connection stays dead
      if (stopping) { if (inFlight === 0) drained(); return; }
      fire(c);
    });
  };

  return (async () => {
    const done = new Promise<void>((resolve) => { drained = resolve; });
    if (fill) startWindow();
    for (let c = 0; c < loop.conns; c++) fire(c);
    const warm = fill ? undefined : setTimeout(startWindow, loop.warmupMs);
    const stopAt = setTimeout(endWindow, (fill ? 0 : loop.warmupMs) + loop.measureMs);
    await done;
    clearTimeout(warm);
    clearTimeout(stopAt);
    const cpu = process.cpuUsage(cpu0);
    const elapsedMs = tEnd - tStart;
    return {
      requests, records, errors, statuses, firstError, unanswered: inFlight,
      hist: encodeHistogram(hist),
      elapsedMs,
      wireBytesIn,
      cpuPct: ((cpu.user + cpu.system) / 1000 / elapsedMs) * 100,
    };
  })();
}
