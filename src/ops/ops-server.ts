// The ops listener (--metrics-listen): /metrics, /healthz, /readyz and /debug/pprof/ on a separate
// port, without authentication, for trusted networks only (spec: Ops listener). The admin bridge and
// dashboard (admin-routes.ts) plug in through `extra`.

import { createServer, type Server } from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import { Session } from 'node:inspector/promises';
import { CONTROL_BODY_BYTES_MAX } from '../config/limits.ts';
import type { Metrics } from './metrics.ts';

/** Longest CPU profile /debug/pprof/profile will take. */
const PPROF_SECONDS_MAX = 30;

/** Request bodies the ops listener reads (admin bridge requests are small JSON objects). */
export const OPS_BODY_BYTES_MAX = CONTROL_BODY_BYTES_MAX;

export interface OpsServer { port: number; close(): void }

/** An answer of an extra route. */
export interface OpsAnswer {
  status: number;
  type: string;
  body: string | Buffer;
  headers?: Record<string, string>;
}

export interface OpsOptions {
  metrics: Metrics;
  /** Host names answered besides IP literals, localhost and the listen host (--ops-allowed-hosts). */
  allowedHosts?: readonly string[];
  ready: () => boolean;
  /** Extra routes (the admin bridge and dashboard) tried before 404; undefined: not theirs. */
  extra?: (method: string, path: string, body: Buffer) => Promise<OpsAnswer | undefined>;
}

async function cpuProfile(seconds: number): Promise<string> {
  const s = new Session();
  s.connect();
  try {
    await s.post('Profiler.enable');
    await s.post('Profiler.start');
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const { profile } = await s.post('Profiler.stop');
    return JSON.stringify(profile);
  } finally {
    s.disconnect();
  }
}

/** A Host header's name: lower case, without the port, brackets or a trailing dot. */
function hostName(header: string): string {
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']'));
  const colon = h.indexOf(':');
  const name = colon < 0 ? h : h.slice(0, colon);
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

/**
 * DNS rebinding: a page on attacker.example whose name is made to resolve to this listener can read
 * it in a browser, but the browser still sends `Host: attacker.example`. So only names nobody can
 * rebind are answered: IP literals, localhost (RFC 6761: always loopback), this listener's own host
 * and the operator's --ops-allowed-hosts.
 */
export function hostAllowed(header: string | undefined, allowed: ReadonlySet<string>): boolean {
  if (header === undefined || header === '') return false; // HTTP/1.1 requires Host
  const name = hostName(header);
  return isIP(name) !== 0 || name === 'localhost' || name.endsWith('.localhost') || allowed.has(name);
}

/** Content types a browser may POST cross-origin without a preflight (CORS "simple" requests): the
 *  admin bridge takes JSON, and refusing these keeps a cross-site form or fetch from reaching it. */
const SIMPLE_POST_TYPES = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data'];

/** Why a request is refused before it is served (Host, Origin, content type); undefined: serve it. */
export function opsRefusal(method: string, headers: { host?: string; origin?: string; 'content-type'?: string }, allowed: ReadonlySet<string>): { status: number; error: string } | undefined {
  if (!hostAllowed(headers.host, allowed)) {
    return { status: 403, error: `host ${JSON.stringify(headers.host ?? '')} is not served by the ops listener (--ops-allowed-hosts)` };
  }
  if (method === 'GET' || method === 'HEAD') return undefined;
  // A browser sends Origin on a cross-origin POST; only this listener's own pages (the dashboard,
  // same origin) may post to it.
  const origin = headers.origin;
  if (origin !== undefined && origin !== `http://${headers.host}` && origin !== `https://${headers.host}`) {
    return { status: 403, error: `origin ${JSON.stringify(origin)} may not post to the ops listener` };
  }
  const type = (headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (SIMPLE_POST_TYPES.includes(type)) return { status: 415, error: `content type ${type} is not accepted: send application/json` };
  return undefined;
}

/** The ops listener's own routes, which only read: another method is 405, as on the dashboard. */
function isReadOnlyOpsPath(path: string): boolean {
  return path === '/metrics' || path === '/healthz' || path === '/readyz' || path === '/debug/pprof' || path.startsWith('/debug/pprof/');
}

export function startOpsServer(host: string, port: number, opts: OpsOptions): Promise<OpsServer> {
  const allowed = new Set([...(opts.allowedHosts ?? []), host].map((h) => hostName(h)).filter((h) => h !== ''));
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://ops');
    const send = (status: number, type: string, body: string | Buffer, headers: Record<string, string> = {}): void => {
      res.writeHead(status, { ...headers, 'Content-Type': type });
      res.end(body);
    };
    const chunks: Buffer[] = [];
    let bytes = 0;
    let refused = false;
    req.on('data', (c: Buffer) => {
      if (refused) return;
      bytes += c.length;
      if (bytes <= OPS_BODY_BYTES_MAX) { chunks.push(c); return; }
      // Refused while read: the connection is closed rather than drained.
      refused = true;
      chunks.length = 0;
      res.writeHead(400, { 'Content-Type': 'application/json', Connection: 'close' });
      res.end(JSON.stringify({ error: `request body is over ${OPS_BODY_BYTES_MAX} bytes` }), () => req.destroy());
    });
    req.on('end', () => {
      if (refused) return;
      void (async () => {
        try {
          const refused = opsRefusal(req.method ?? 'GET', req.headers, allowed);
          if (refused) return send(refused.status, 'application/json', JSON.stringify({ error: refused.error }));
          const method = req.method ?? 'GET';
          if (isReadOnlyOpsPath(url.pathname) && method !== 'GET' && method !== 'HEAD') {
            return send(405, 'application/json', JSON.stringify({ error: `${method} is not supported here: GET or HEAD` }), { Allow: 'GET, HEAD' });
          }
          if (url.pathname === '/metrics') return send(200, opts.metrics.registry.contentType, await opts.metrics.registry.metrics());
          if (url.pathname === '/healthz') return send(200, 'application/json', '{"status":"ok"}');
          if (url.pathname === '/readyz') {
            return opts.ready() ? send(200, 'application/json', '{"status":"ready"}') : send(503, 'application/json', '{"error":"not ready"}');
          }
          if (url.pathname === '/debug/pprof/' || url.pathname === '/debug/pprof') {
            return send(200, 'text/plain', 'profile: GET /debug/pprof/profile?seconds=N (V8 .cpuprofile JSON)\nheap: GET /debug/pprof/heap\n');
          }
          if (url.pathname === '/debug/pprof/profile') {
            const secs = Math.min(Math.max(Number(url.searchParams.get('seconds') ?? '5') || 5, 1), PPROF_SECONDS_MAX);
            return send(200, 'application/json', await cpuProfile(secs));
          }
          if (url.pathname === '/debug/pprof/heap') return send(200, 'application/json', JSON.stringify(process.memoryUsage()));
          const extra = await opts.extra?.(req.method ?? 'GET', url.pathname, Buffer.concat(chunks));
          if (extra) return send(extra.status, extra.type, extra.body, extra.headers);
          send(404, 'application/json', '{"error":"no such path"}');
        } catch (err) {
          send(500, 'application/json', JSON.stringify({ error: (err as Error).message }));
        }
      })();
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve({ port: (server.address() as AddressInfo).port, close: () => server.close() }));
  });
}
