// Prometheus metrics (prom-client): HTTP requests by verb and status and gRPC calls by method and
// code, their latency, open event streams, request-body bytes in flight.
// Label sets are bounded: verbs come from the route table and statuses from the error table. A
// request counts once answered; one whose client went away before its answer is not counted.
//
// Requests are counted in plain per-verb arrays and handed to prom-client only when /metrics is
// scraped. prom-client's own inc()/observe() hash the label set on every call, even through a
// cached labels() child: at 40k appends/s that was 5 % of the main thread (perf, 2026-11-22).

import { Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Upper bounds (seconds) of the latency histogram's buckets; +Inf is implied. */
const LATENCY_BUCKETS_S = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/** What the HTTP dispatcher reports at scrape time. */
export interface HttpGauges {
  sseOpen(): number;
  bodyBytesInFlight(): number;
}

/** One dependency's state as /metrics shows it (storage/dependency-health.ts). */
export interface DependencyGauge {
  readonly name: string;
  readonly up: boolean;
  readonly errors: number;
  downMs(): number;
}

/** One verb's counters since start, by outcome (an HTTP status, a gRPC status code's name). */
class VerbStats<K> {
  readonly byOutcome = new Map<K, number>();
  /** Non-cumulative counts per bucket; the last slot is +Inf. */
  readonly buckets = new Float64Array(LATENCY_BUCKETS_S.length + 1);
  sumS = 0;
  count = 0;

  constructor(readonly verb: string) {}

  record(outcome: K, seconds: number): void {
    this.byOutcome.set(outcome, (this.byOutcome.get(outcome) ?? 0) + 1);
    let i = 0;
    while (i < LATENCY_BUCKETS_S.length && seconds > LATENCY_BUCKETS_S[i]) i++;
    this.buckets[i]++;
    this.sumS += seconds;
    this.count++;
  }
}

/** One sample; metricName names a histogram's _bucket, _sum and _count series. */
interface Sample { labels: Record<string, string | number>; value: number; metricName?: string }

/** What prom-client's Registry reads from a registered metric when /metrics is scraped. */
interface ScrapedMetric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: 'counter' | 'histogram'; aggregator: 'sum'; values: Sample[] }>;
  reset(): void;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly verbs = new Map<string, VerbStats<number>>();
  private readonly grpcMethods = new Map<string, VerbStats<string>>();

  /** The gauges are read from the HTTP dispatcher when /metrics is scraped. */
  constructor(gauges: HttpGauges = { sseOpen: () => 0, bodyBytesInFlight: () => 0 }, dependencies: () => readonly DependencyGauge[] = () => []) {
    collectDefaultMetrics({ register: this.registry });
    // registerMetric is typed for prom-client's own classes; the Registry only calls get() and reset().
    const scraped = [
      countsMetric('svcd_requests_total', 'HTTP requests by verb and status', this.verbs, { verb: 'verb', outcome: 'status' }),
      latencyMetric('svcd_request_seconds', 'HTTP request latency until the answer is written', this.verbs, 'verb'),
      countsMetric('svcd_grpc_requests_total', 'gRPC calls by method and status code, counted once their status is sent', this.grpcMethods, { verb: 'method', outcome: 'code' }),
      latencyMetric('svcd_grpc_request_seconds', 'gRPC call latency until the server sends its status (a session\'s whole life; calls the client cancelled are not counted)', this.grpcMethods, 'method'),
    ];
    for (const m of scraped) this.registry.registerMetric(m as unknown as Gauge);
    new Gauge({
      name: 'svcd_sse_open', help: 'open SSE subscriptions on this host', registers: [this.registry],
      collect() { this.set(gauges.sseOpen()); },
    });
    new Gauge({
      name: 'svcd_request_body_bytes_in_flight',
      help: 'bytes of request bodies received and not yet done with (the star-wide budget, charged as bytes arrive; past it 429)',
      registers: [this.registry],
      collect() { this.set(gauges.bodyBytesInFlight()); },
    });
    // Each dependency (metadata store, WAL disk, object store): up or down, how long down in all,
    // how many failed operations. prom-client's counters only inc(), so these are gauges read at
    // scrape time from the health objects that count them.
    new Gauge({
      name: 'svcd_dependency_up', help: '1 while the dependency answers, 0 during an outage', labelNames: ['dependency'], registers: [this.registry],
      collect() { for (const d of dependencies()) this.set({ dependency: d.name }, d.up ? 1 : 0); },
    });
    new Gauge({
      name: 'svcd_dependency_down_seconds', help: 'seconds the dependency has been down since start, the current outage included', labelNames: ['dependency'], registers: [this.registry],
      collect() { for (const d of dependencies()) this.set({ dependency: d.name }, d.downMs() / 1000); },
    });
    new Gauge({
      name: 'svcd_dependency_errors', help: 'failed operations against the dependency since start', labelNames: ['dependency'], registers: [this.registry],
      collect() { for (const d of dependencies()) this.set({ dependency: d.name }, d.errors); },
    });
  }

  /** Streams in memory: live (their whole state) and dormant (only their row; a star alone), and how
   *  many went dormant and woke since start. */
  streams(view: { live(): number; dormant(): number; counters: { retired: number; woken: number } }): void {
    new Gauge({
      name: 'svcd_streams', help: 'streams this star holds: live (their whole state in memory) or dormant (only their metadata row)',
      labelNames: ['state'], registers: [this.registry],
      collect() { this.set({ state: 'live' }, view.live()); this.set({ state: 'dormant' }, view.dormant()); },
    });
    new Gauge({
      name: 'svcd_streams_dormancy', help: 'streams that went dormant (retired) or were made live again (woken) since start',
      labelNames: ['event'], registers: [this.registry],
      collect() { this.set({ event: 'retired' }, view.counters.retired); this.set({ event: 'woken' }, view.counters.woken); },
    });
  }

  /** The heap trim's series (src/ops/heap-trim.ts): trims since start and the main thread's time in them. */
  heapTrims(counters: { trims: number; pauseMsTotal: number }): void {
    new Gauge({ name: 'svcd_heap_trims', help: 'memory-reducing collections the star made once quiet, since start', registers: [this.registry], collect() { this.set(counters.trims); } });
    new Gauge({
      name: 'svcd_heap_trim_pause_seconds', help: 'main-thread time those collections took, since start',
      registers: [this.registry], collect() { this.set(counters.pauseMsTotal / 1000); },
    });
  }

  /** Appends decoded, checked and encoded on a parse worker instead of the event loop, by transport:
   *  HTTP bodies past WORKER_PARSE_BYTES_MIN, gRPC messages past GRPC_WORKER_DECODE_BYTES_MIN. */
  workerDecodes(counters: { http: number; grpc: number }): void {
    new Gauge({
      name: 'svcd_append_worker_decodes', help: 'append batches decoded and encoded on a parse worker, since start',
      labelNames: ['transport'], registers: [this.registry],
      collect() { this.set({ transport: 'http' }, counters.http); this.set({ transport: 'grpc' }, counters.grpc); },
    });
  }

  /** The auditor's series: each queue's depth, segments verified and findings since start. */
  audit(view: { depth(name: 'deletions' | 'verifications' | 'findings'): number; counters: { verified: number; findings: number; skipped: number } }): void {
    new Gauge({
      name: 'svcd_audit_queue_depth', help: 'items waiting in each audit queue (deletions: released objects in their read grace; verifications: segments to check; findings: kept findings)',
      labelNames: ['queue'], registers: [this.registry],
      collect() { for (const q of ['deletions', 'verifications', 'findings'] as const) this.set({ queue: q }, view.depth(q)); },
    });
    const counters: [string, string, 'verified' | 'findings' | 'skipped'][] = [
      ['svcd_audit_segments_verified', 'settled segments fetched back and checked since start', 'verified'],
      ['svcd_audit_findings', 'segments found missing, of the wrong length or failing a checksum since start (each logged)', 'findings'],
      ['svcd_audit_verifications_skipped', 'settled segments not queued for verification because the queue was full, since start', 'skipped'],
    ];
    for (const [name, help, k] of counters) new Gauge({ name, help, registers: [this.registry], collect() { this.set(view.counters[k]); } });
  }

  /** A cluster's series: leases held, takeovers, leases lost and released, one-hop proxy hops, whether
   *  the star stepped aside for its object store, and the group commit's two latencies. Returns the
   *  commit observer the commit log calls. */
  cluster(stats: () => { leasesHeld: number; takeovers: number; leasesTaken: number; leasesLost: number; leasesReleased: number; proxyHops: number; proxyFailures: number; steppedAside: boolean }): (putMs: number, commitMs: number) => void {
    const series: [string, string, (x: ReturnType<typeof stats>) => number][] = [
      ['svcd_cluster_leases_held', 'stream leases this star holds now', (x) => x.leasesHeld],
      ['svcd_cluster_leases_taken', 'stream leases taken since start', (x) => x.leasesTaken],
      ['svcd_cluster_takeovers', 'leases taken with an epoch above 1 (from another star, or after a restart) since start', (x) => x.takeovers],
      ['svcd_cluster_leases_lost', 'streams dropped because their lease moved or a commit of them failed, since start', (x) => x.leasesLost],
      ['svcd_cluster_leases_released', 'leases given up (idle, drained, handed over, reconfigured) since start', (x) => x.leasesReleased],
      ['svcd_cluster_stepped_aside', '1 while this star, cut off from the object store that another star reaches, has handed its streams over and takes no lease', (x) => (x.steppedAside ? 1 : 0)],
      ['svcd_cluster_proxy_hops', 'data bridge requests sent one hop to the stream\'s leader since start', (x) => x.proxyHops],
      ['svcd_cluster_proxy_failures', 'hops whose leader did not answer (503 to the caller) since start', (x) => x.proxyFailures],
    ];
    for (const [name, help, read] of series) {
      new Gauge({ name, help, registers: [this.registry], collect() { this.set(read(stats())); } });
    }
    const commit = new Histogram({
      name: 'svcd_cluster_commit_seconds', help: 'group commit latency: the object PUT, then the PostgreSQL statement',
      labelNames: ['phase'], buckets: [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2], registers: [this.registry],
    });
    return (putMs, commitMs) => {
      commit.observe({ phase: 'object_put' }, putMs / 1000);
      commit.observe({ phase: 'postgres' }, commitMs / 1000);
    };
  }

  observe(verb: string, status: number, seconds: number): void {
    record(this.verbs, verb, status, seconds);
  }

  /** One gRPC call, once its status is sent: its method's name and its status code's. */
  observeGrpc(method: string, code: string, seconds: number): void {
    record(this.grpcMethods, method, code, seconds);
  }
}

function record<K>(stats: Map<string, VerbStats<K>>, verb: string, outcome: K, seconds: number): void {
  let v = stats.get(verb);
  if (!v) { v = new VerbStats<K>(verb); stats.set(verb, v); }
  v.record(outcome, seconds);
}

/** A counter of calls by verb and outcome, read from `stats` at scrape time. */
function countsMetric<K>(name: string, help: string, stats: Map<string, VerbStats<K>>, labels: { verb: string; outcome: string }): ScrapedMetric {
  return {
    name, help, type: 'counter', aggregator: 'sum',
    async get() {
      const values: Sample[] = [];
      for (const v of stats.values()) {
        for (const [outcome, n] of v.byOutcome) values.push({ labels: { [labels.verb]: v.verb, [labels.outcome]: String(outcome) }, value: n });
      }
      return { name, help, type: 'counter', aggregator: 'sum', values };
    },
    reset() { stats.clear(); },
  };
}

/** A latency histogram by verb, read from `stats` at scrape time. */
function latencyMetric<K>(name: string, help: string, stats: Map<string, VerbStats<K>>, verbLabel: string): ScrapedMetric {
  return {
    name, help, type: 'histogram', aggregator: 'sum',
    async get() {
      const values: Sample[] = [];
      for (const v of stats.values()) {
        let cumulative = 0;
        for (let i = 0; i < v.buckets.length; i++) {
          cumulative += v.buckets[i];
          const le = i < LATENCY_BUCKETS_S.length ? LATENCY_BUCKETS_S[i] : '+Inf';
          values.push({ metricName: `${name}_bucket`, labels: { le, [verbLabel]: v.verb }, value: cumulative });
        }
        values.push({ metricName: `${name}_sum`, labels: { [verbLabel]: v.verb }, value: v.sumS });
        values.push({ metricName: `${name}_count`, labels: { [verbLabel]: v.verb }, value: v.count });
      }
      return { name, help, type: 'histogram', aggregator: 'sum', values };
    },
    reset() { stats.clear(); },
  };
}
