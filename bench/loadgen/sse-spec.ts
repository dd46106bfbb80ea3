// The SSE swarm's contract: the marker the producer puts in the first record of every batch, and
// the messages between the parent and the swarm child.

/** First record of batch i starts with `${SSE_MARK}${i}:${sendNs}:`, sendNs relative to the run's base. */
export const SSE_MARK = 'bench:';

export interface SwarmStart {
  type: 'start';
  host: string;
  port: number;
  /** /v1/streams/{b}/{k}/records/subscribe?seq_num=N */
  path: string;
  /** Several streams instead of `path`: subscriber i opens paths[i mod S], and batch b is appended to
   *  the stream of paths[b mod S]. */
  paths?: string[];
  subscribers: number;
  batches: number;
  /** The marker prefix to scan for (SSE_MARK unless a scenario says otherwise). */
  mark: string;
  /** Spread the connection waves over this long (0: as fast as possible). */
  connectOverMs: number;
  /** process.hrtime.bigint() of the run's base, as a decimal string (CLOCK_MONOTONIC is shared by processes). */
  baseNs: string;
}

export interface SwarmFinish {
  type: 'finish';
  /** ackNs[i]: when the producer saw batch i's ack, ns after base (-1: never acked). */
  ackNs: number[];
  /** How long to wait for stragglers before counting. */
  graceMs: number;
}

export interface SwarmResult {
  type: 'result';
  subscribers: number;
  connected: number;
  batches: number;
  delivered: number;
  expected: number;
  /** Subscribers that received every batch exactly once. */
  complete: number;
  /** Batches that arrived after a later-numbered one (sequenced in another order than sent). */
  outOfOrder: number;
  /** Batches received twice by the same subscriber (an error). */
  duplicates: number;
  /** Batches received by a subscriber of another stream (an error). */
  misrouted: number;
  disconnects: number;
  /** Deliveries that arrived before the producer had read the ack (recorded as 0 delay from ack). */
  beforeAck: number;
  /** µs histograms, compressed base64. */
  fromAck: string;
  fromSend: string;
  clientCpuPct: number;
}
