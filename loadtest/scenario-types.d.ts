// The shape of scenarios.json, for the k6 scripts (JSDoc) and the Node runner alike.

export interface Stage {
  /** k6 duration: "500ms", "10s", "1m30s". */
  duration: string;
  /** Virtual users (= keep-alive producer connections) at the end of the stage, reached linearly. */
  target: number;
}

/** Metric name → k6 threshold expressions ("p(99)<50", "rate<0.001", "count==0"). */
export type Thresholds = Record<string, string[]>;

export interface AppendScenario {
  name: string;
  stream: string;
  recordBytes: number;
  recordsPerRequest: number;
  stages: Stage[];
  thresholds: Thresholds;
}

export interface SseScenario {
  name: string;
  stream: string;
  subscribers: number;
  /** Subscribers connect evenly over this time; the producer starts when it ends. */
  connectRamp: string;
  /** How long the producer appends. */
  hold: string;
  /** How long subscribers stay after the producer stops, for stragglers. */
  grace: string;
  batchesPerS: number;
  recordsPerBatch: number;
  recordBytes: number;
  /** The first record of batch i starts with `${marker}${i}:${sendTime}:`. */
  marker: string;
  thresholds: Thresholds;
}

export interface Scenarios {
  bucket: string;
  append: AppendScenario[];
  sse: SseScenario[];
}
