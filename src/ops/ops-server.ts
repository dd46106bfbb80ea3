// The ops listener (--metrics-listen): /metrics, /healthz, /readyz and /debug/pprof/ on a separate
// port, without authentication, for trusted networks only (spec: Ops listener). The admin bridge and
// dashboard (admin-routes.ts) plug in through `extra`.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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

export function startOpsServer(host: string, port: number, opts: OpsOptions): Promise<OpsServer> {
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
