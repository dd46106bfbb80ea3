// Prometheus metrics (prom-client): requests by verb and status, request latency, open event streams.
// Label sets are bounded: verbs come from the route table and statuses from the error table.

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'verb' | 'status'>;
  private readonly latency: Histogram<'verb'>;
  readonly sseOpen: Gauge;

  /** `sseOpen` reports the open event streams when /metrics is scraped. */
  constructor(sseOpen: () => number = () => 0) {
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({ name: 'svcd_requests_total', help: 'HTTP requests by verb and status', labelNames: ['verb', 'status'], registers: [this.registry] });
    this.latency = new Histogram({
      name: 'svcd_request_seconds', help: 'HTTP request latency until the answer is written', labelNames: ['verb'], registers: [this.registry],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    });
    this.sseOpen = new Gauge({
      name: 'svcd_sse_open', help: 'open SSE subscriptions on this host', registers: [this.registry],
      collect() { this.set(sseOpen()); },
    });
  }

  /** Labelled children cached by verb and status: resolving labels on every request shows in profiles. */
  private readonly children = new Map<string, { count: { inc(): void }; time: { observe(v: number): void } }>();

  observe(verb: string, status: number, seconds: number): void {
    const k = `${verb} ${status}`;
    let c = this.children.get(k);
    if (!c) {
      c = { count: this.requests.labels(verb, String(status)), time: this.latency.labels(verb) };
      this.children.set(k, c);
    }
    c.count.inc();
    c.time.observe(seconds);
  }
}
