// The closed-loop load generator's contract: what the parent asks for and what the child answers.

export interface AppendWork {
  kind: 'append';
  /** One path per connection, cycled (several connections may share a stream). */
  paths: string[];
  /** The JSON request body, identical for every request. */
  body: string;
  recordsPerRequest: number;
  /** Content bytes per record (the body string's length), for MB/s. */
  recordBytes: number;
  /** Check the first 200 answer's start/end span equals recordsPerRequest (off for the echo floor). */
  checkSpan: boolean;
}

export interface ReadWork {
  kind: 'read';
  /** /v1/streams/{b}/{k}/records */
  path: string;
  fromSeq: number;
  toSeq: number;
  pageRecords: number;
  recordBytes: number;
}

export interface LoadSpec {
  host: string;
  port: number;
  /** Port of connection c (the same host), when connections go to several servers (a cluster's stars);
   *  default: `port` for every connection. */
  connPorts?: number[];
  conns: number;
  warmupMs: number;
  measureMs: number;
  /** Fill mode: no warm-up, stop once this many records are acked (measureMs is then only a cap). */
  stopAfterRecords?: number;
  work: AppendWork | ReadWork;
}

export interface LoadResult {
  /** Completed in the measurement window. */
  requests: number;
  records: number;
  /** Non-2xx answers and connection errors in the window. */
  errors: number;
  /** Requests still unanswered when the drain time ran out (a hung server shows here). */
  unanswered: number;
  statuses: Record<string, number>;
  firstError?: string;
  /** Request latency histogram (µs), compressed base64. */
  hist: string;
  elapsedMs: number;
  wireBytesIn: number;
  /** The generator's own CPU use over the window, % of one core. */
  cpuPct: number;
}

export type ParentMsg = { type: 'run'; spec: LoadSpec } | { type: 'exit' };
export type ChildMsg =
  | { type: 'ready' }
  | { type: 'measure-start' }
  | { type: 'measure-end' }
  | { type: 'result'; result: LoadResult }
  | { type: 'error'; message: string };
