// Gives the V8 heap a burst grew back to the system once the star is quiet again.
//
// A burst of creations or appends grows the heap (every live stream's state, its records until they
// settle), and once the streams settle and go dormant most of it is garbage. V8 keeps the pages it
// grew: with no allocation there is no collection, and its memory reducer only acts tens of seconds
// later, if at all. Measured (bench/streams-at-scale.ts, 100,000 streams of one record): once all
// were dormant the heap held 209 MB committed for 83 MB in use. The trim asks V8 for the collection
// a low-memory notification makes (every page it can free is released, new space shrunk); the
// inspector's HeapProfiler.collectGarbage is Node's way to ask for it (`--expose-gc`'s gc() frees the
// objects but keeps the pages). It pauses the main thread (160-290 ms at 100,000 streams), so it runs
// only when no append has been sequenced for HEAP_TRIM_QUIET_MS, the heap is past
// HEAP_TRIM_HEAP_BYTES_MIN, and there is something to give back: streams went dormant, the heap
// grew, or a collection left old space free, since the last trim; and at most
// HEAP_TRIM_CPU_SHARE_MAX of the thread's time.
import { Session } from 'node:inspector/promises';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import {
  HEAP_TRIM_CHECK_MS, HEAP_TRIM_CPU_SHARE_MAX, HEAP_TRIM_GROWTH_BYTES_MIN, HEAP_TRIM_HEAP_BYTES_MIN, HEAP_TRIM_INTERVAL_MS_MIN, HEAP_TRIM_QUIET_MS,
} from '../config/limits.ts';

/** What the trimmer reads from the star and the heap each check. */
export interface HeapTrimSample {
  nowMs: number;
  /** Changes whenever an append is sequenced (the log's end offset). */
  logEnd: number;
  /** Streams that went dormant since start (grows only). */
  retired: number;
  /** V8's committed heap, bytes. */
  heapTotalBytes: number;
  /** Committed old space no object uses: what the last full collection freed and V8 kept. (Its in-use
   *  figure counts garbage until a collection finds it, so this is seen only after one.) */
  oldSpaceFreeBytes: number;
}

/** The trimmer's memory between checks. */
export interface HeapTrimState {
  lastLogEnd: number;
  quietSinceMs: number;
  lastTrimMs: number;
  /** How long after the last trim the next may come: its pause, scaled so trims take at most
   *  HEAP_TRIM_CPU_SHARE_MAX of the main thread, and never under HEAP_TRIM_INTERVAL_MS_MIN. */
  nextTrimAfterMs: number;
  retiredAtTrim: number;
  heapTotalAtTrim: number;
}

/** The state at start. The heap counts as grown from nothing: a star that loaded many rows at start
 *  (their parse left garbage behind) trims once it is quiet. */
export function heapTrimStart(s: HeapTrimSample): HeapTrimState {
  return {
    lastLogEnd: s.logEnd, quietSinceMs: s.nowMs, lastTrimMs: s.nowMs - HEAP_TRIM_INTERVAL_MS_MIN, nextTrimAfterMs: HEAP_TRIM_INTERVAL_MS_MIN,
    retiredAtTrim: s.retired, heapTotalAtTrim: 0,
  };
}

/** Whether to trim now; updates the state's quiet clock (the caller records a trim with `heapTrimmed`).
 *  Due on a quiet star whose heap is past HEAP_TRIM_HEAP_BYTES_MIN when, since the last trim, a stream
 *  went dormant (its state became garbage no collection will run for), the heap grew, or a collection
 *  left old space pages free. */
export function heapTrimDue(st: HeapTrimState, s: HeapTrimSample): boolean {
  if (s.logEnd !== st.lastLogEnd) {
    st.lastLogEnd = s.logEnd;
    st.quietSinceMs = s.nowMs;
    return false;
  }
  if (s.nowMs - st.quietSinceMs < HEAP_TRIM_QUIET_MS || s.nowMs - st.lastTrimMs < st.nextTrimAfterMs) return false;
  if (s.heapTotalBytes < HEAP_TRIM_HEAP_BYTES_MIN) return false;
  return s.retired !== st.retiredAtTrim
    || s.heapTotalBytes - st.heapTotalAtTrim >= HEAP_TRIM_GROWTH_BYTES_MIN
    || s.oldSpaceFreeBytes >= HEAP_TRIM_GROWTH_BYTES_MIN;
}

/** Records a trim made on sample `s`: the committed heap it left, and how long it paused the thread. */
export function heapTrimmed(st: HeapTrimState, s: HeapTrimSample, heapTotalAfterBytes: number, pauseMs: number): void {
  st.lastTrimMs = s.nowMs;
  st.nextTrimAfterMs = Math.max(HEAP_TRIM_INTERVAL_MS_MIN, pauseMs / HEAP_TRIM_CPU_SHARE_MAX);
  st.retiredAtTrim = s.retired;
  st.heapTotalAtTrim = heapTotalAfterBytes;
}

/** One full, memory-reducing collection of this thread's heap; resolves with the committed heap after it. */
export async function trimHeap(): Promise<number> {
  const session = new Session();
  session.connect();
  try {
    await session.post('HeapProfiler.collectGarbage');
  } finally {
    session.disconnect();
  }
  return getHeapStatistics().total_heap_size;
}

function heapNow(): { heapTotalBytes: number; oldSpaceFreeBytes: number } {
  const old = getHeapSpaceStatistics().find((sp) => sp.space_name === 'old_space');
  return { heapTotalBytes: getHeapStatistics().total_heap_size, oldSpaceFreeBytes: old ? old.space_size - old.space_used_size : 0 };
}

export interface HeapTrimmerDeps {
  logEnd(): number;
  retired(): number;
  log(line: string): void;
  logError(msg: string, err?: unknown): void;
}

/** Trims made since start and the main thread's time they took (/metrics). */
export interface HeapTrimCounters { trims: number; pauseMsTotal: number }

/** Checks every HEAP_TRIM_CHECK_MS; returns how to stop it and its counters. */
export function startHeapTrimmer(d: HeapTrimmerDeps): { stop(): void; counters: HeapTrimCounters } {
  const counters: HeapTrimCounters = { trims: 0, pauseMsTotal: 0 };
  const sample = (): HeapTrimSample => ({ nowMs: Date.now(), logEnd: d.logEnd(), retired: d.retired(), ...heapNow() });
  const state = heapTrimStart(sample());
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    const s = sample();
    if (!heapTrimDue(state, s)) return;
    running = true;
    const t0 = performance.now();
    trimHeap().then((after) => {
      const pauseMs = performance.now() - t0;
      heapTrimmed(state, s, after, pauseMs);
      counters.trims += 1;
      counters.pauseMsTotal += pauseMs;
      const mib = (b: number): string => `${(b / 2 ** 20).toFixed(0)} MiB`;
      d.log(`svcd: quiet; heap trimmed from ${mib(s.heapTotalBytes)} to ${mib(after)} in ${pauseMs.toFixed(0)} ms`);
    }, (err: unknown) => {
      // Not worth failing anything for: the heap stays as it was and the next window tries again.
      heapTrimmed(state, s, s.heapTotalBytes, performance.now() - t0);
      d.logError('heap trim failed', err);
    }).finally(() => { running = false; });
  }, HEAP_TRIM_CHECK_MS);
  timer.unref();
  return { stop: () => clearInterval(timer), counters };
}
