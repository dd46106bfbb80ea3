// Parent side of the closed-loop load generator child (bench/loadgen/closed-loop.ts).
import { loadavg } from 'node:os';
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
  /** The 1-minute load average when the window closed (2 cores: above ~3, others shared the box). */
  loadAvg1: number;
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
    run: (spec, serverPid) => runMeasured(child, { type: 'run', spec }, serverPid),
    stop: () => child.stop(),
  };
}

/** Sends one run message to a load-generating child that speaks loadgen/spec.ts's ChildMsg (the
 *  closed-loop generator, the Redis driver) and waits for its result; the servers' CPU and this
 *  process's are sampled between the child's measure-start and measure-end. */
export async function runMeasured<M extends { type: 'run' }>(child: BenchChild, runMsg: M, serverPid?: number | (number | undefined)[]): Promise<Measured> {
  let endCpu: (() => number)[] = [];
  let serverCpuPct = NaN;
  let self0 = process.cpuUsage();
  let selfT0 = 0;
  let selfCpuPct = NaN;
  let loadAvg1 = NaN;
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
      loadAvg1 = loadavg()[0];
    }
  };
  const off = child.onMessage(onMsg);
  child.send(runMsg);
  const msg = await child.next<ChildMsg>('result', 'error').finally(off);
  if (msg.type === 'error') throw new Error(`load generator: ${msg.message}`);
  if (msg.type !== 'result') throw new Error('load generator: unexpected message');
  return { ...msg.result, hist: decodeHistogram(msg.result.hist), serverCpuPct, selfCpuPct, loadAvg1 };
}
