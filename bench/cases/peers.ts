// Peers and earlier floors, quoted from /work/shared/research/perf-baselines.md (measured on this
// machine, 2026-11-21, medians; NATS is not rerun here). Redis XADD with appendfsync always at
// 64 connections is also measured live in every run of the peers case (redis-peer.ts).

export const PEERS_SOURCE = 'perf-baselines.md';

export interface PeerRow {
  system: string;
  config: string;
  clients: string;
  opsPerS: number;
  p50Ms: number;
  p99Ms: number;
  durable: string;
}

export const PEER_ROWS: readonly PeerRow[] = [
  { system: 'Redis 7.0 XADD 100 B', config: 'appendfsync always', clients: '1', opsPerS: 2655, p50Ms: 0.367, p99Ms: 0.639, durable: 'yes (fdatasync per event-loop pass)' },
  { system: 'Redis 7.0 XADD 100 B', config: 'appendfsync always', clients: '50', opsPerS: 43378, p50Ms: 0.991, p99Ms: 1.839, durable: 'yes' },
  { system: 'Redis 7.0 XADD 100 B', config: 'appendfsync always, pipeline 16', clients: '50', opsPerS: 274348, p50Ms: 2.439, p99Ms: 7.543, durable: 'yes' },
  { system: 'Redis 7.0 XADD 100 B', config: 'appendfsync everysec', clients: '50', opsPerS: 81090, p50Ms: 0.335, p99Ms: 0.759, durable: 'no (≤1 s loss)' },
  { system: 'NATS JetStream 2.9.10 publish+ack 100 B', config: 'file storage', clients: '1 in flight', opsPerS: 4482, p50Ms: 0.205, p99Ms: 0.637, durable: 'no (0 fsync calls)' },
  { system: 'NATS JetStream 2.9.10 publish+ack 100 B', config: 'file storage', clients: '64 in flight', opsPerS: 16588, p50Ms: 3.207, p99Ms: 18.495, durable: 'no' },
  { system: 'bare uWS.js small POST (wrk)', config: 'server pinned to 1 core', clients: '64', opsPerS: 82214, p50Ms: 0.684, p99Ms: 1.66, durable: '–' },
  { system: 'bare uWS.js small POST (wrk)', config: 'unpinned', clients: '64', opsPerS: 68039, p50Ms: 0.9, p99Ms: 3.94, durable: '–' },
  { system: 'bare uWS.js small POST (wrk)', config: 'server pinned to 1 core', clients: '1', opsPerS: 9541, p50Ms: 0.094, p99Ms: 0.37, durable: '–' },
];

/** Floors quoted for comparison with this run's own. */
export const BASELINE_FDATASYNC_4K = { p50Ms: 0.237, p99Ms: 0.454, opsPerS: 4006 };
export const BASELINE_SSE_UWS_1000 = { p50Ms: 7.57, p99Ms: 20.86, note: '200 B × 10/s to 1000 clients, bare uWS broadcast, delay from tick start' };
