// Parent side of the closed-loop load generator child (bench/loadgen/closed-loop.ts).
import { cpuWindow } from './cpu.ts';
import { startChild, type BenchChild } from './child.ts';
import { decodeHistogram, type Histogram } from './hist.ts';
import type { ChildMsg, LoadResult, LoadSpec } from '../loadgen/spec.ts';

export interface Measured extends Omit<LoadResult, 'hist'> {
  hist: Histogram;
  /** The server process's CPU over the window, % of one core (NaN when not sampled). */
  serverCpuPct: number;
}

export interface Loadgen {
  /** Runs one spec; serverPid, when given, has its CPU sampled over the measurement window. */
  run(spec: LoadSpec, serverPid?: number): Promise<Measured>;
  stop(): Promise<void>;
}

export async function startLoadgen(): Promise<Loadgen> {
  const child: BenchChild = startChild('loadgen/closed-loop.ts');
  await child.next('ready');
  return {
    async run(spec, serverPid) {
      let endCpu: (() => number) | undefined;
      let serverCpuPct = NaN;
      const onMsg = (m: { type: string }): void => {
        if (m.type === 'measure-start' && serverPid !== undefined) endCpu = cpuWindow(serverPid);
        if (m.type === 'measure-end' && endCpu) serverCpuPct = endCpu();
      };
      const off = child.onMessage(onMsg);
      child.send({ type: 'run', spec });
      const msg = await child.next<ChildMsg>('result', 'error').finally(off);
      if (msg.type === 'error') throw new Error(`load generator: ${msg.message}`);
      if (msg.type !== 'result') throw new Error('load generator: unexpected message');
      return { ...msg.result, hist: decodeHistogram(msg.result.hist), serverCpuPct };
    },
    stop: () => child.stop(),
  };
}
