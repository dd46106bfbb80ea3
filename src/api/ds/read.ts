// The DS reads: HEAD, catch-up GET by offset (ETag and 304), and the live modes, long-poll and SSE.
// A read maps its offset to an svcd seq_num (offsets.ts), reads a page and answers the data records'
// messages; the next offset is one past the last record the page held, whatever its kind.

import type { StreamService, Subscription, SubscriptionBatch } from '../../core/service-api.ts';
import { contentBytes, type SequencedRecord } from '../../protocol/records.ts';
import { awaitDrain, type SseSink } from '../exchange.ts';
import { isJson, isText, readBody } from './content.ts';
import { dsError, dsInvalid } from './errors.ts';
import { nextCursor, type HeaderList } from './headers.ts';
import { DS_READ_BYTES_MAX, DS_READ_PARTS_MAX, DS_READ_RECORDS_MAX, DS_SSE_CONNECTION_MS } from './limits.ts';
import { formatOffset, parseOffset } from './offsets.ts';
import { kindOf } from './records.ts';
import type { DsState, DsStates } from './state.ts';
import type { DsAnswer } from './write.ts';

export interface ReadCtx {
  svc: StreamService;
  states: DsStates;
  key: string;
  st: DsState;
  query: URLSearchParams;
  header(name: string): string | undefined;
  nowMs: () => number;
  longPollMs: number;
  /** An event stream whose consumer has not drained for this long is cut (--sse-stall-ms). */
  sseStallMs: number;
  /** The caller's exp: a live read ends at it (a long-poll answers 204, as at its timeout; an event
   *  stream ends), so no DS subscription outlives its credential. */
  expiresAtMs?: number;
  /** Calls `cb` when the star stops (at once if it has): a long-poll answers as if it timed out, an
   *  event stream ends. Returns how to take `cb` back, which the read does when it ends. */
  onStop(cb: () => void): () => void;
}

export type LiveMode = 'none' | 'long-poll' | 'sse';

/** The one `offset` parameter (absent: the start); an empty or repeated one is 400. */
export function offsetParam(q: URLSearchParams): string | undefined {
  const all = q.getAll('offset');
  if (all.length > 1) throw dsInvalid('offset is given more than once');
  if (all.length === 1 && all[0] === '') throw dsInvalid('offset is empty');
  return all[0];
}

export function liveParam(q: URLSearchParams): LiveMode {
  const v = q.get('live');
  if (v === null) return 'none';
  if (v === 'long-poll' || v === 'sse') {
    if (q.get('offset') === null) throw dsInvalid(`live=${v} needs an offset`);
    return v;
  }
  throw dsInvalid('live must be long-poll or sse');
}

/** The svcd seq_num an offset starts at; past the tail is 400. */
export function startSeq(raw: string | undefined, st: DsState): number {
  const o = parseOffset(raw ?? '-1');
  if (o.kind === 'start') return 0;
  if (o.kind === 'now') return st.tail;
  if (o.seq > st.tail) throw dsInvalid('offset is past the end of the stream');
  return o.seq;
}

export interface Page {
  messages: Uint8Array[];
  next: number;
  tail: number;
  closedSeen: boolean;
}

function pageOf(records: SequencedRecord[], start: number, tail: number): Page {
  const messages: Uint8Array[] = [];
  let closedSeen = false;
  for (const r of records) {
    const k = kindOf(r);
    if (k === 'data') messages.push(r.body);
    else if (k === 'close') closedSeen = true;
  }
  const next = records.length > 0 ? records[records.length - 1].seq_num + 1 : start;
  return { messages, next, tail, closedSeen };
}

/** One DS page from `start`: svcd reads joined across the settled frontier, up to the tail, within
 *  DS_READ_RECORDS_MAX records and DS_READ_BYTES_MAX bytes (the first record always). */
export async function readPage(c: ReadCtx, start: number): Promise<Page> {
  const records: SequencedRecord[] = [];
  let bytes = 0;
  let at = start;
  let tail = start;
  for (let part = 0; part < DS_READ_PARTS_MAX; part++) {
    let r;
    try {
      r = await c.svc.read(c.states.bucket, c.key, {
        start: { kind: 'seq_num', value: at }, limit: DS_READ_RECORDS_MAX - records.length, maxBytes: DS_READ_BYTES_MAX - bytes, clamp: false,
      });
    } catch (err) {
      if (part === 0) throw err;
      break; // trimmed or deleted since the first part: answer what was read; the next read tells
    }
    tail = r.tail.seq_num;
    for (const rec of r.records) {
      const size = contentBytes(rec);
      if (records.length > 0 && bytes + size > DS_READ_BYTES_MAX) return pageOf(records, start, tail);
      records.push(rec);
      bytes += size;
    }
    if (r.records.length === 0) break;
    at = r.records[r.records.length - 1].seq_num + 1;
    if (at >= tail || records.length >= DS_READ_RECORDS_MAX || bytes >= DS_READ_BYTES_MAX) break;
  }
  return pageOf(records, start, tail);
}

function metaHeaders(st: DsState): HeaderList {
  const h: HeaderList = [['Content-Type', st.meta!.contentType]];
  if (st.meta!.ttlSeconds !== undefined) h.push(['Stream-TTL', String(st.meta!.ttlSeconds)]);
  if (st.meta!.expiresAt !== undefined) h.push(['Stream-Expires-At', st.meta!.expiresAt]);
  return h;
}

export function headStream(st: DsState): DsAnswer {
  const h = metaHeaders(st);
  h.push(['Stream-Next-Offset', formatOffset(st.tail)], ['Cache-Control', 'no-store']);
  if (st.closed) h.push(['Stream-Closed', 'true']);
  return { status: 200, headers: h, body: '' };
}

/** A page's answer: body, offsets, up-to-date and closure, ETag (304 when the client holds it). */
function pageAnswer(c: ReadCtx, start: number, p: Page, extra: HeaderList): DsAnswer {
  const upToDate = p.next >= p.tail;
  const closed = upToDate && (c.st.closed || p.closedSeen);
  const etag = `"${formatOffset(start)}:${formatOffset(p.next)}${closed ? ':c' : ''}"`;
  const h: HeaderList = [['Content-Type', c.st.meta!.contentType], ['Stream-Next-Offset', formatOffset(p.next)], ['ETag', etag], ...extra];
  if (upToDate) h.push(['Stream-Up-To-Date', 'true']);
  if (closed) h.push(['Stream-Closed', 'true']);
  // Bytes below the tail never change, so a page short of it may be cached; the tail's may not.
  h.push(['Cache-Control', upToDate ? 'no-store' : 'public, max-age=60, stale-while-revalidate=300']);
  if (c.header('if-none-match') === etag) return { status: 304, headers: h, body: '' };
  return { status: 200, headers: h, body: readBody(p.messages, c.st.meta!.contentType) };
}

export async function readCatchUp(c: ReadCtx, start: number): Promise<DsAnswer> {
  return pageAnswer(c, start, await readPage(c, start), []);
}

/** Milliseconds until the caller's credential expires (never negative; Infinity without one). */
function untilExpiry(c: ReadCtx): number {
  return c.expiresAtMs === undefined ? Infinity : Math.max(0, c.expiresAtMs - c.nowMs());
}

/** Long-poll: data at the offset answers at once; at the tail it waits for the next commit, or
 *  answers 204 after longPollMs. A closed stream at its tail answers 204 with Stream-Closed at once. */
export async function readLongPoll(c: ReadCtx, start: number): Promise<DsAnswer> {
  const cursor: HeaderList = [['Stream-Cursor', nextCursor(c.nowMs(), c.query.get('cursor'))]];
  const first = await readPage(c, start);
  if (first.messages.length > 0) return pageAnswer(c, start, first, cursor);
  if (c.st.closed || first.closedSeen) {
    return { status: 204, headers: [['Stream-Next-Offset', formatOffset(first.next)], ['Stream-Up-To-Date', 'true'], ['Stream-Closed', 'true'], ...cursor], body: '' };
  }
  const sub = await c.svc.subscribe(c.states.bucket, c.key, { kind: 'seq_num', value: first.next });
  let timer: NodeJS.Timeout | undefined;
  let offStop = (): void => {};
  try {
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), Math.min(c.longPollMs, untilExpiry(c)));
      offStop = c.onStop(() => resolve(undefined));
    });
    for (let at = first.next; ;) {
      const batch = await Promise.race([sub.next(), timeout]);
      if (!batch) {
        return { status: 204, headers: [['Stream-Next-Offset', formatOffset(at)], ['Stream-Up-To-Date', 'true'], ...cursor], body: '' };
      }
      const p = pageOf(batch.records, at, batch.tail.seq_num);
      if (p.messages.length > 0) return pageAnswer(c, at, p, cursor);
      if (p.closedSeen) {
        return { status: 204, headers: [['Stream-Next-Offset', formatOffset(p.next)], ['Stream-Up-To-Date', 'true'], ['Stream-Closed', 'true'], ...cursor], body: '' };
      }
      at = p.next;
    }
  } finally {
    clearTimeout(timer);
    offStop();
    sub.close();
  }
}

// ------------------------------------------------------------------ SSE

function sseData(messages: Uint8Array[], contentType: string): string {
  let payload: string;
  if (!isText(contentType)) payload = Buffer.concat(messages).toString('base64');
  else if (isJson(contentType)) payload = readBody(messages, contentType).toString('utf8');
  else payload = Buffer.concat(messages).toString('utf8');
  // Every line of the payload is its own data: field, so no byte of it can end the event early.
  // `data:` bare, as the protocol's conformance suite requires: an SSE parser then strips a line's
  // own leading space (the reference server's encoding, with the same loss; README, /ds).
  return `event: data\n${payload.split(/\r\n|\r|\n/).map((l) => `data:${l}`).join('\n')}\n\n`;
}

function sseControl(next: number, upToDate: boolean, closed: boolean, cursor: string): string {
  const body: Record<string, unknown> = { streamNextOffset: formatOffset(next) };
  if (closed) body.streamClosed = true;
  else body.streamCursor = cursor;
  if (upToDate) body.upToDate = true;
  return `event: control\ndata:${JSON.stringify(body)}\n\n`;
}

export function sseHeaders(st: DsState): HeaderList {
  const h: HeaderList = [['Content-Type', 'text/event-stream'], ['Cache-Control', 'no-cache']];
  if (!isText(st.meta!.contentType)) h.push(['Stream-SSE-Data-Encoding', 'base64']);
  return h;
}

/** Writes one chunk, waiting (at most `stallMs`) while the socket is backpressured; false when the
 *  stream is over: the sink closed, the consumer was cut, or `ended` (the star stops, the stream's
 *  life or its credential ran out) came first, which takes the wait back. */
function write(sink: SseSink, chunk: string, stallMs: number, ended: Promise<undefined>): Promise<boolean> {
  if (sink.closed) return Promise.resolve(false);
  if (sink.write(chunk)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const cancel = awaitDrain(sink, stallMs, () => resolve(!sink.closed), () => resolve(false));
    void ended.then(() => { cancel(); resolve(false); });
  });
}

/** Pumps a stream as SSE from `start`: catch-up pages, then live batches, a control event after each
 *  data event; ends at closure, after DS_SSE_CONNECTION_MS, or when the client goes. `first` is the
 *  page at `start`, read before the answer began (so a start below the trim watermark is 410, as a
 *  long-poll's is, not a 200 that ends at once in an error event). */
export async function pumpSse(c: ReadCtx, sink: SseSink, start: number, onEnd: () => void, first: Page): Promise<void> {
  const ct = c.st.meta!.contentType;
  const lifeMs = Math.min(DS_SSE_CONNECTION_MS, untilExpiry(c));
  const deadline = c.nowMs() + lifeMs;
  let sub: Subscription | undefined;
  let timer: NodeJS.Timeout | undefined;
  let offStop = (): void => {};
  const ended = new Promise<undefined>((resolve) => {
    sink.onClose(() => resolve(undefined));
    offStop = c.onStop(() => resolve(undefined));
    timer = setTimeout(() => resolve(undefined), lifeMs);
  });
  try {
    let at = start;
    let caughtUp = false;
    let read: Page | undefined = first;
    for (;;) {
      if (sink.closed || c.nowMs() >= deadline) return;
      let p: Page;
      if (!caughtUp) {
        p = read ?? await readPage(c, at);
        read = undefined;
      } else {
        sub ??= await c.svc.subscribe(c.states.bucket, c.key, { kind: 'seq_num', value: at });
        const batch: SubscriptionBatch | undefined = await Promise.race([sub.next(), ended]);
        if (!batch) return;
        p = pageOf(batch.records, at, batch.tail.seq_num);
      }
      const upToDate = p.next >= p.tail;
      const closed = upToDate && (c.st.closed || p.closedSeen);
      const cursor = nextCursor(c.nowMs(), c.query.get('cursor'));
      let out = '';
      if (p.messages.length > 0) out += sseData(p.messages, ct);
      if (p.messages.length > 0 || upToDate || closed) out += sseControl(p.next, upToDate, closed, cursor);
      if (out !== '' && !(await write(sink, out, c.sseStallMs, ended))) return;
      at = p.next;
      if (closed) return;
      if (upToDate) caughtUp = true;
    }
  } catch (err) {
    // A stream deleted or trimmed under the reader ends the event stream; the client reconnects.
    if (!sink.closed) sink.write(`event: error\ndata:${JSON.stringify({ error: dsError('unavailable', String((err as Error).message)).message })}\n\n`);
  } finally {
    clearTimeout(timer);
    offStop();
    sub?.close();
    sink.end();
    onEnd();
  }
}
