// Response headers every DS answer carries (browser security, CORS), and the cursor the protocol
// uses to bust caches on live reads.

import type { HopHeaders } from '../proxy.ts';
import { DS_CORS_MAX_AGE_S, DS_CURSOR_EPOCH_MS, DS_CURSOR_INTERVAL_MS } from './limits.ts';

export type HeaderList = [string, string][];

/** Headers a browser client must be allowed to read. */
const EXPOSED_NAMES = [
  'Stream-Next-Offset', 'Stream-Cursor', 'Stream-Up-To-Date', 'Stream-Closed', 'Stream-TTL', 'Stream-Expires-At',
  'Stream-SSE-Data-Encoding', 'Producer-Epoch', 'Producer-Seq', 'Producer-Expected-Seq', 'Producer-Received-Seq',
  'ETag', 'Location', 'Content-Type',
];
const EXPOSED = EXPOSED_NAMES.join(', ');

/** Request headers a browser client may send. */
const ALLOWED_NAMES = [
  'Authorization', 'Content-Type', 'If-None-Match', 'Stream-TTL', 'Stream-Expires-At', 'Stream-Seq', 'Stream-Closed',
  'Stream-Forked-From', 'Stream-Fork-Offset', 'Stream-Fork-Sub-Offset', 'Producer-Id', 'Producer-Epoch', 'Producer-Seq', 'Last-Event-ID',
];
const ALLOWED = ALLOWED_NAMES.join(', ');

/** What a hop to the stream's leader carries (a cluster): every protocol header both ways, and the
 *  caller's Host, so a Location names the star the client asked. The CORS headers are the asking
 *  star's own (baseHeaders), not relayed. */
export const DS_HOP_HEADERS: HopHeaders = {
  request: [...ALLOWED_NAMES.map((h) => h.toLowerCase()), 'origin', 'host', 'accept'],
  response: new Set([...EXPOSED_NAMES.map((h) => h.toLowerCase()), 'cache-control', 'retry-after', 'allow', 'x-accel-buffering']),
};

export const DS_METHODS = 'GET, HEAD, PUT, POST, DELETE, OPTIONS';

/** Every answer: no MIME sniffing of stream bytes, readable cross-origin (DS is a browser protocol:
 *  bearer tokens are not ambient credentials, so `*` lets no site act as a visitor). */
export function baseHeaders(origin: string | undefined): HeaderList {
  return [
    ['X-Content-Type-Options', 'nosniff'],
    ['Cross-Origin-Resource-Policy', 'cross-origin'],
    ['Access-Control-Allow-Origin', origin ?? '*'],
    ['Access-Control-Expose-Headers', EXPOSED],
    ...(origin ? [['Vary', 'Origin'] as [string, string]] : []),
  ];
}

export function preflightHeaders(origin: string | undefined): HeaderList {
  return [
    ...baseHeaders(origin),
    ['Access-Control-Allow-Methods', DS_METHODS],
    ['Access-Control-Allow-Headers', ALLOWED],
    ['Access-Control-Max-Age', String(DS_CORS_MAX_AGE_S)],
  ];
}

/** The live-read cursor: the current interval number, moved past the client's own when it already
 *  holds this one, so a cache keyed on the URL never answers a live request from a stale entry. */
export function nextCursor(nowMs: number, clientCursor: string | null): string {
  let c = Math.floor((nowMs - DS_CURSOR_EPOCH_MS) / DS_CURSOR_INTERVAL_MS);
  if (clientCursor !== null && /^\d{1,15}$/.test(clientCursor)) {
    const prev = Number(clientCursor);
    if (prev >= c) c = prev + 1;
  }
  return String(c);
}
