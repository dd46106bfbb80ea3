// Health probes of the Gateway's upstream stars. A refused connect already puts a star last, but a
// star can fail without refusing anything: a stopped or wedged process still completes TCP handshakes
// from its listen backlog, and a request sent there waits out GATEWAY_UPSTREAM_HEAD_MS_MAX before the
// caller gets a 503. So each star's data bridge is asked GET /healthz (an open route: no credential,
// which the Gateway does not hold) every GATEWAY_HEALTH_INTERVAL_MS; a probe that gets no 200 within
// GATEWAY_HEALTH_TIMEOUT_MS marks the star unhealthy (tried last, upstreams.ts) until one passes.
// One probe per star at a time, each on a connection of its own (a pooled socket could stay open to
// a star whose listener is gone, and would not test the connect requests depend on).

import { request as httpRequest, type ClientRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { GATEWAY_HEALTH_INTERVAL_MS, GATEWAY_HEALTH_TIMEOUT_MS } from '../config/limits.ts';
import type { Upstreams } from './upstreams.ts';

/** The bridge route probed: answered by every star, unauthenticated, without touching storage. */
export const HEALTH_PATH = '/healthz';

/** `answered`: the star sent an answer (not 200: it is not ready); false when none came at all. */
export type ProbeResult = { healthy: true } | { healthy: false; why: string; answered: boolean };

/** One probe: resolves (never rejects) within `timeoutMs`, or when cancelled (as unhealthy). */
export function probeOnce(url: URL, timeoutMs: number): { result: Promise<ProbeResult>; cancel(): void } {
  let req: ClientRequest | undefined;
  let settle: (r: ProbeResult) => void = () => undefined;
  const result = new Promise<ProbeResult>((resolve) => {
    let done = false;
    const timer = setTimeout(() => finish({ healthy: false, why: `no answer in ${timeoutMs} ms`, answered: false }), timeoutMs);
    function finish(r: ProbeResult): void {
      if (done) return;
      done = true;
      clearTimeout(timer);
      // The status decides: the body is not needed, and dropping the connection keeps nothing open.
      req?.destroy();
      resolve(r);
    }
    settle = finish;
    req = (url.protocol === 'https:' ? httpsRequest : httpRequest)({
      protocol: url.protocol, hostname: url.hostname, port: url.port, method: 'GET', path: HEALTH_PATH,
      headers: { host: url.host }, agent: false,
    });
    req.on('response', (res) => {
      res.resume();
      finish(res.statusCode === 200 ? { healthy: true } : { healthy: false, why: `${HEALTH_PATH} answered ${res.statusCode ?? 0}`, answered: true });
    });
    req.on('error', (err: NodeJS.ErrnoException) => finish({ healthy: false, why: err.code ?? err.message, answered: false }));
    req.end();
  });
  return { result, cancel: () => settle({ healthy: false, why: 'cancelled', answered: false }) };
}

export interface HealthOptions {
  intervalMs?: number;
  timeoutMs?: number;
  /** One line per change of a star's verdict (never per probe). */
  log?: (line: string) => void;
  /** After each failed probe of a star taken for wedged (Upstreams.wedgedSince): give up what was
   *  sent to it before `sinceMs` and is still unanswered. `silent`: this probe got no answer at all
   *  (the star is stopped or cut off, not merely not ready). */
  onWedged?: (url: URL, sinceMs: number, silent: boolean) => void;
}

export class HealthProbes {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<() => void>();
  private closed = false;
  private readonly intervalMs: number;
  private readonly timeoutMs: number;

  constructor(private readonly upstreams: Upstreams, private readonly o: HealthOptions = {}, private readonly nowMs: () => number = Date.now) {
    this.intervalMs = o.intervalMs ?? GATEWAY_HEALTH_INTERVAL_MS;
    this.timeoutMs = o.timeoutMs ?? GATEWAY_HEALTH_TIMEOUT_MS;
  }

  /** Probes every star now, then every interval after each probe ends (so probes never pile up). */
  start(): void {
    for (const url of this.upstreams.urls) this.run(url);
  }

  private run(url: URL): void {
    if (this.closed) return;
    const sentAtMs = this.nowMs();
    const probe = probeOnce(url, this.timeoutMs);
    this.inFlight.add(probe.cancel);
    void probe.result.then((r) => {
      this.inFlight.delete(probe.cancel);
      if (this.closed) return;
      if (this.upstreams.probed(url, r.healthy, sentAtMs)) {
        this.o.log?.(r.healthy
          ? `upstream ${url.origin} answers its health probe again: back in rotation`
          : `upstream ${url.origin} failed its health probe (${r.why}): tried last until it answers`);
      }
      const wedgedSinceMs = r.healthy ? undefined : this.upstreams.wedgedSince(url);
      if (wedgedSinceMs !== undefined && !r.healthy) this.o.onWedged?.(url, wedgedSinceMs, !r.answered);
      const timer = setTimeout(() => { this.timers.delete(timer); this.run(url); }, this.intervalMs);
      this.timers.add(timer);
    });
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const cancel of this.inFlight) cancel();
    this.inFlight.clear();
  }
}
