// Bounds of the Durable Streams surface (src/api/ds/), each a named constant with its unit. They sit
// here rather than in src/config/limits.ts because nothing outside this module reads them.

const KiB = 1024;
const MiB = 1024 * KiB;

/** The path prefix the data bridge serves the protocol under: a client's base URL is `http://HOST:PORT/ds`. */
export const DS_PREFIX = '/ds';
/** Streams live at `/ds/v1/stream/<path>`; `<path>` (still percent-encoded) is the svcd key. */
export const DS_STREAM_PATH = '/v1/stream/';

/** A DS append body (PUT initial body or POST): the svcd batch cap, 100 MiB, plus JSON's slack. */
export const DS_BODY_BYTES_MAX = 100 * MiB;
/** A byte-stream append is cut into records of at most this much (svcd caps a record at 1 MiB of
 *  content, headers included; the rest is room for the DS headers a record carries). */
export const DS_RECORD_CHUNK_BYTES_MAX = 1 * MiB - 4 * KiB;
/** One catch-up read answers at most this many bytes of messages (a client pages on with the offset). */
export const DS_READ_BYTES_MAX = 4 * MiB;
/** … and at most this many svcd records. */
export const DS_READ_RECORDS_MAX = 8192;
/** … gathered in at most this many svcd reads. A svcd read stops at the settled frontier (its spec:
 *  a page never spans it); a DS page need not, and a client that asks once (the reference client's
 *  `live: false`) must get what is committed up to the tail when it fits. */
export const DS_READ_PARTS_MAX = 4;
/** Loading a stream's DS state scans its records in pages of this many bytes. */
export const DS_SCAN_PAGE_BYTES_MAX = 8 * MiB;

/** Streams whose DS state (metadata, producers, closure) is cached; past it the least recently used
 *  is dropped and rebuilt from its records on next use. */
export const DS_STATE_CACHE_STREAMS_MAX = 10_000;
/** Producer ids remembered per stream (the state is durable in the records; this bounds memory).
 *  Past it a stream refuses new producer ids with 429 rather than forget one silently. */
export const DS_PRODUCERS_PER_STREAM_MAX = 10_000;
/** Mutations queued on one stream's lane (they run one at a time); past it 429. */
export const DS_LANE_WAITERS_MAX = 1024;
/** A write whose guarded append finds the stream moved past the tail its cached state knew (records
 *  written through svcd's own API, or by another star that led it) reloads the state from the records
 *  and is decided again, at most this many times in all. */
export const DS_STALE_STATE_ATTEMPTS_MAX = 3;

/** An SSE connection is ended after this long; the client reconnects from its last offset
 *  (the protocol expects it, so caches can collapse connections). */
export const DS_SSE_CONNECTION_MS = 60_000;
/** Live requests (long-polls and SSE) open at once on this star; past it 503 with Retry-After. */
export const DS_LIVE_CONNECTIONS_MAX = 4096;
/** Stream-Cursor intervals (the protocol's cache-busting cursor): one step per this many ms. */
export const DS_CURSOR_INTERVAL_MS = 20_000;
/** Cursors count intervals from this instant (2024-10-09T00:00:00Z, the protocol's suggested epoch). */
export const DS_CURSOR_EPOCH_MS = Date.UTC(2024, 9, 9);
/** A fork copies at most this many bytes of its source (the copy is made at creation); past it 400. */
export const DS_FORK_COPY_BYTES_MAX = 256 * MiB;
/** CORS preflight cache lifetime. */
export const DS_CORS_MAX_AGE_S = 600;
