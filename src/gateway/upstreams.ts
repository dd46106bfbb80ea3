// The stars a Gateway forwards to (spec: Deployment shape; the Gateway follows redirects itself).
// Which one first: a request for a stream starts at the star its address hashes to, so one stream's
// requests keep going to one star. That star takes the stream's lease when it is vacant, which
// spreads leases over the stars by hash and spares a redirect on every later request. Requests that
// name no stream (buckets, the exchange) go round robin. A star is put last while either of two
// marks holds: it refused a connection less than GATEWAY_UPSTREAM_DOWN_MS ago (seen by a request), or
// it failed its latest health probe (health.ts; held until a probe passes, which also clears an
// older refused-connect mark). When every star is marked they are all tried anyway, since a mark is
// only a guess and a 503 is no better than one more refused connect.

import { GATEWAY_UPSTREAM_DOWN_MS, GATEWAY_UPSTREAM_WEDGED_PROBES } from '../config/limits.ts';

/** One upstream entry: `host:port` (http) or `http(s)://host:port`. Throws with the reason. */
export function parseUpstream(entry: string): URL {
  const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(entry) ? entry : `http://${entry}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`'${entry}' is not host:port or an http(s)://host:port URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`'${entry}' must be http:// or https://`);
  if (url.hostname === '') throw new Error(`'${entry}' names no host`);
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.username !== '') {
    throw new Error(`'${entry}' must be a bare host:port (no path, query or credentials)`);
  }
  return new URL(url.origin);
}

/** The bridge a 421 names (`host:port`, from svcd-leader), reached with the protocol of the star that
 *  named it: a cluster's bridges all speak one protocol. Undefined for a value that is not host:port. */
export function leaderUrl(address: string | undefined, like: URL): URL | undefined {
  if (address === undefined || !/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+):\d{1,5}$/i.test(address.trim())) return undefined;
  try {
    return new URL(`${like.protocol}//${address.trim()}`);
  } catch {
    return undefined;
  }
}

/** 32-bit FNV-1a: cheap, stable across processes and restarts, and well spread for short keys. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

export class Upstreams {
  private readonly downUntilMs: number[];
  /** When each star's refused-connect mark was set (0: never), so a probe sent before it cannot clear it. */
  private readonly markedAtMs: number[];
  /** Failed its latest health probe: last until a probe passes. */
  private readonly unhealthy: boolean[];
  /** When the latest health probes failed in a row were sent, oldest first: at most
   *  GATEWAY_UPSTREAM_WEDGED_PROBES of them (empty while passing). */
  private readonly failedSentMs: number[][];
  private next = 0;

  constructor(readonly urls: readonly URL[], private readonly nowMs: () => number = Date.now) {
    if (urls.length === 0) throw new Error('at least one upstream is needed');
    this.downUntilMs = urls.map(() => 0);
    this.markedAtMs = urls.map(() => 0);
    this.unhealthy = urls.map(() => false);
    this.failedSentMs = urls.map(() => []);
  }

  /** The upstreams in the order to try them for a request; `stream` is its `bucket/key`, if any. */
  order(stream?: string): URL[] {
    const n = this.urls.length;
    const first = stream !== undefined ? fnv1a(stream) % n : this.next++ % n;
    if (this.next >= n) this.next = 0;
    const now = this.nowMs();
    const live: URL[] = [];
    const down: URL[] = [];
    for (let i = 0; i < n; i++) {
      const at = (first + i) % n;
      (this.unhealthy[at] || this.downUntilMs[at] > now ? down : live).push(this.urls[at]);
    }
    return [...live, ...down];
  }

  /** A star that refused a connection goes last for a while. Leaders outside the list are not tracked. */
  markDown(url: URL): void {
    const at = this.indexOf(url);
    if (at < 0) return;
    const now = this.nowMs();
    this.downUntilMs[at] = now + GATEWAY_UPSTREAM_DOWN_MS;
    this.markedAtMs[at] = now;
  }

  /**
   * A health probe's verdict on one star, sent at `sentAtMs`. A failure puts it last until a later
   * probe passes; a pass also lifts a refused-connect mark set before the probe went out (the star
   * answered since). Answers whether the probe verdict changed, so transitions can be logged once.
   */
  probed(url: URL, healthy: boolean, sentAtMs: number): boolean {
    const at = this.indexOf(url);
    if (at < 0) return false;
    const changed = this.unhealthy[at] === healthy;
    this.unhealthy[at] = !healthy;
    if (healthy && this.markedAtMs[at] <= sentAtMs) this.downUntilMs[at] = 0;
    const sent = this.failedSentMs[at];
    if (healthy) {
      sent.length = 0;
    } else {
      sent.push(sentAtMs);
      if (sent.length > GATEWAY_UPSTREAM_WEDGED_PROBES) sent.shift();
    }
    return changed;
  }

  /** For a star that failed GATEWAY_UPSTREAM_WEDGED_PROBES probes in a row: when the first of the
   *  latest that many was sent (what was sent to it before then has gone unanswered through all of
   *  them). It moves on with each failed probe, so a request sent to the star after it was first
   *  taken for wedged (a 421 followed to a stopped leader) is given up a few probes later, not
   *  left to GATEWAY_UPSTREAM_HEAD_MS_MAX. */
  wedgedSince(url: URL): number | undefined {
    const at = this.indexOf(url);
    return at >= 0 && this.failedSentMs[at].length >= GATEWAY_UPSTREAM_WEDGED_PROBES ? this.failedSentMs[at][0] : undefined;
  }

  private indexOf(url: URL): number {
    return this.urls.findIndex((u) => u.origin === url.origin);
  }
}
