// CPU time of another process (all its threads) from /proc/<pid>/stat, so a table can show how much of
// a core the server used during a measurement window.
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ; 100 on every Linux we run on). */
const USER_HZ = 100;

/** utime + stime of a process in ms, or NaN when /proc is not readable. */
export function procCpuMs(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); utime is field 14, stime field 15.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ;
  } catch {
    return NaN;
  }
}

/** Starts a CPU window for a pid; the returned function gives the % of one core used since. */
export function cpuWindow(pid: number | undefined): () => number {
  const c0 = procCpuMs(pid);
  const t0 = performance.now();
  return () => ((procCpuMs(pid) - c0) / (performance.now() - t0)) * 100;
}

/** Waits until a process uses less than `idleCpuPct` of a core over one `sampleMs` sample, for at
 *  most `maxMs`; false if it never did. A server just started can still be busy (a svcd star burns
 *  about a core for 1.5 s after its listening line), and a cell measured then measures its start. */
export async function waitIdle(pid: number | undefined, opts: { idleCpuPct: number; sampleMs: number; maxMs: number }): Promise<boolean> {
  const deadline = performance.now() + opts.maxMs;
  for (;;) {
    const used = cpuWindow(pid);
    await new Promise((r) => setTimeout(r, opts.sampleMs));
    if (!(used() >= opts.idleCpuPct)) return true;
    if (performance.now() > deadline) return false;
  }
}
