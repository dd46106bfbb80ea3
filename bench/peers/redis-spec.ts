// The Redis XADD driver's contract (bench/peers/redis-xadd.ts, a child like the svcd load
// generator): what the parent asks for. The child answers with the load generator's messages
// (loadgen/spec.ts: ready, measure-start, measure-end, result with a LoadResult, error).

export interface RedisXaddSpec {
  host: string;
  port: number;
  /** Connections, each in closed loop with one XADD in flight: the producers of svcd's cell. */
  conns: number;
  warmupMs: number;
  measureMs: number;
  /** The stream every connection appends to (svcd's cell also puts all producers on one stream). */
  key: string;
  /** Bytes of the one field value of each entry: svcd's record body size. */
  valueBytes: number;
}

export type RedisDriverMsg = { type: 'run'; spec: RedisXaddSpec } | { type: 'exit' };
