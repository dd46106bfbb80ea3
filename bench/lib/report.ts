// What the cases measured, gathered for the final tables and the targets.
import type { ClusterOutcome } from '../cases/cluster.ts';
import type { FsyncFloor } from '../floors/fsync.ts';
import type { SseCellName } from './config.ts';
import type { Histogram } from './hist.ts';
import type { Measured } from './loadgen.ts';

export interface AppendCell {
  recordBytes: number;
  batch: number;
  producers: number;
}

export const cellKey = (c: AppendCell): string => `${c.recordBytes}/${c.batch}/${c.producers}`;

export interface ReadRow {
  label: string;
  recordBytes: number;
  readers: number;
  range: [number, number];
  m: Measured;
}

export interface SseOutcome {
  /** floor: the bare uWS broadcaster (no appends: from-ack and producer figures are absent). */
  cell: SseCellName;
  subscribers: number;
  streams: number;
  connected: number;
  batches: number;
  batchesPerS: number;
  recordsPerBatch: number;
  recordBytes: number;
  delivered: number;
  expected: number;
  complete: number;
  outOfOrder: number;
  duplicates: number;
  misrouted: number;
  disconnects: number;
  beforeAck: number;
  fromAck: Histogram | undefined;
  fromSend: Histogram;
  ackHist: Histogram | undefined;
  serverCpuPct: number;
  clientCpuPct: number;
  /** Appends that failed or were skipped (the producer had CONNS_MAX unacked): their batches never
   *  existed, so they show as missing for every subscriber without being the fan-out's fault. */
  appendErrors: number;
  /** The server's CPU (svcd: all threads) from the first append until the swarm had every delivery
   *  (the floor: its broadcasting window). */
  serverCpuMs: number;
  /** The 1-minute load average when the case ended (2 cores: above ~3, others shared the box). */
  loadAvg1: number;
}

/** The live peer: Redis XADD with appendfsync always under svcd's 100 B / 1 record / 64 producers
 *  load, in the same run as svcd's cell. */
export interface RedisPeerOutcome {
  svcd: Measured;
  /** Which case measured svcd's cell: the append case's own, or the peers case when append did not
   *  run it. */
  svcdFrom: 'append case' | 'peers case';
  redis: Measured;
  redisVersion: string;
  /** The options that matter, as the running server reported them. */
  redisConfig: string;
}

export interface Report {
  fsync?: FsyncFloor;
  echo: Map<string, Measured>;
  append: Map<string, Measured>;
  read: ReadRow[];
  sse: SseOutcome[];
  cluster?: ClusterOutcome;
  redis?: RedisPeerOutcome;
  /** Problems worth printing under the tables (errors, fallbacks). */
  notes: string[];
}

export function newReport(): Report {
  return { echo: new Map(), append: new Map(), read: [], sse: [], notes: [] };
}
