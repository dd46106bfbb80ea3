// The read-only dashboard's static files (src/ops/dashboard/: HTML, one vanilla JS file, CSS, icon), served
// at /admin/ on the ops listener. The page calls the admin bridge with fetch and renders every value
// as text. The files are read once at start, from the nearest src/ops/dashboard above this module,
// so the sources (src/ops/) and the esbuild bundle (src/main.bundle.mjs) both find them.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OpsAnswer } from './ops-server.ts';

export const DASHBOARD_PREFIX = '/admin/';

/** Every file the dashboard serves, by its path under /admin/ ('' is the page itself). */
const FILES: Readonly<Record<string, { file: string; type: string }>> = {
  '': { file: 'index.html', type: 'text/html; charset=utf-8' },
  'app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  'style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
  'favicon.svg': { file: 'favicon.svg', type: 'image/svg+xml' },
};

/** The page loads only its own script and style and talks only to its own origin. */
const HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-cache',
};

/** The nearest `src/ops/dashboard` (holding index.html) at or above `from`. */
export function findDashboardDir(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'src', 'ops', 'dashboard');
    if (existsSync(join(candidate, 'index.html'))) return candidate;
    if (dirname(dir) === dir) throw new Error(`src/ops/dashboard not found above ${from}`);
  }
}

/** The dashboard's routes: answers /admin and every path under /admin/ (but the bridge's), undefined otherwise. */
export function dashboard(dir = findDashboardDir(dirname(fileURLToPath(import.meta.url)))): (method: string, path: string) => OpsAnswer | undefined {
  const files = new Map(Object.entries(FILES).map(([path, f]) => [path, { type: f.type, body: readFileSync(join(dir, f.file)) }]));
  return (method, path): OpsAnswer | undefined => {
    if (path === '/admin') return { status: 308, type: 'text/plain', body: 'see /admin/\n', headers: { Location: DASHBOARD_PREFIX } };
    if (!path.startsWith(DASHBOARD_PREFIX)) return undefined;
    const f = files.get(path.slice(DASHBOARD_PREFIX.length));
    if (!f) return { status: 404, type: 'application/json', body: '{"error":"no such path"}' };
    if (method !== 'GET' && method !== 'HEAD') {
      return { status: 405, type: 'application/json', body: '{"error":"the dashboard takes GET"}', headers: { Allow: 'GET, HEAD' } };
    }
    return { status: 200, type: f.type, body: f.body, headers: { ...HEADERS } };
  };
}
