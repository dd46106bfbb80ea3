// Parent side of the closed-loop load generator child (bench/loadgen/closed-loop.ts).
import { cpuWindow } from './cpu.ts';
import { startChild, type BenchChild } from './child.ts';
import { decodeHistogram, type Histogram } from './hist.ts';
import type { ChildMsg, LoadResult, LoadSpec } from '../loadgen/spec.ts';

export interface Measured extends Omit<LoadResult, 'hist'> {
  hist: Histogram;
  /** The server process's CPU over the window, % of one core (NaN when not sampled); with several
   *  server pids, their sum. */
  serverCpuPct: number;
  /** This (the orchestrating) process's CPU over the window, % of one core: what an in-process
   *  helper such as s3rver used. */
  selfCpuPct: number;
}

export interface Loadgen {
  /** Runs one spec; serverPid, when given, has its CPU sampled over the measurement window (several
   *  pids: summed). */
  run(spec: LoadSpec, serverPid?: number | (number | undefined)[]): Promise<Measured>;
  stop(): Promise<void>;
}

export async function startLoadgen(): Promise<Loadgen> {
  const child: BenchChild = startChild('loadgen/closed-loop.ts');
  await child.next('ready');
  return {
    async run(spec, serverPid) {
      let endCpu: (() => number)[] = [];
      let serverCpuPct = NaN;
      let self0 = process.cpuUsage();
      let selfT0 = 0;
      let selfCpuPct = NaN;
      const pids = serverPid === undefined ? [] : Array.isArray(serverPid) ? serverPid : [serverPid];
      const onMsg = (m: { type: string }): void => {
        if (m.type === 'measure-start') {
          endCpu = pids.map((p) => cpuWindow(p));
          self0 = process.cpuUsage();
          selfT0 = performance.now();
        }
        if (m.type === 'measure-end') {
          if (endCpu.length) serverCpuPct = endCpu.reduce((sum, end) => sum + end(), 0);
          const d = process.cpuUsage(self0);
          selfCpuPct = ((d.user + d.system) / 1000 / (performance.now() - selfT0)) * 100;
        }
      };
      const off = child.onMessage(onMsg);
      child.send({ type: 'run', spec });
      const msg = await child.next<ChildMsg>('result', 'error').finally(off);
      if (msg.type === 'error') throw new Error(`load generator: ${msg.message}`);
      if (msg.type !== 'result') throw new Error('load generator: unexpected message');
      return { ...msg.result, hist: decodeHistogram(msg.result.hist), serverCpuPct, selfCpuPct };
    },
    stop: () => child.stop(),
  };
}
