// The DS verbs that change a stream: PUT (create, idempotent on the same config), POST (append, close,
// idempotent producers, Stream-Seq) and DELETE. Each runs on the stream's lane (state.ts) and commits
// with one svcd append guarded by match_seq_num at the tail the lane knows, so the producer state a
// decision read is exactly the state the batch extends.

import { ServiceError } from '../../core/errors.ts';
import type { StreamService } from '../../core/service-api.ts';
import type { AppendAck, RecordInput } from '../../protocol/records.ts';
import { DEFAULT_CONTENT_TYPE, mediaType, messagesOf } from './content.ts';
import { dsConflict, dsError, dsInvalid, dsNotFound } from './errors.ts';
import type { HeaderList } from './headers.ts';
import { DS_PRODUCERS_PER_STREAM_MAX } from './limits.ts';
import { formatOffset } from './offsets.ts';
import { judgeProducer, parseProducer } from './producer.ts';
import { closeRecord, dataRecord, goneRecord, metaRecord, refRecord, stampLast, type DsMeta } from './records.ts';
import { applyRecord, expired, type DsState, type DsStates } from './state.ts';
import { forkMeta, forkRecords, parseForkAsk, sourceKeyOf } from './fork.ts';

export interface DsAnswer {
  status: number;
  headers: HeaderList;
  body: string | Buffer;
}

export interface WriteCtx {
  svc: StreamService;
  states: DsStates;
  key: string;
  nowMs: number;
  header(name: string): string | undefined;
  body: Buffer;
  /** The stream's absolute URL, for Location. */
  url: string;
  /** The caller's exp: records not sequenced by then are refused (AppendInput.deadlineMs). */
  deadlineMs?: number;
}

const TTL_RE = /^(0|[1-9]\d*)$/;
/** RFC 3339 date-time, as Stream-Expires-At is specified. */
const RFC3339_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** The stream as it stands for a caller: absent, or expired (then deleted on the spot), is 404. */
export async function liveState(svc: StreamService, states: DsStates, key: string, nowMs: number): Promise<DsState> {
  const st = await states.get(key);
  if (!st || !st.meta) throw dsNotFound();
  if (st.gone) throw dsError('trimmed', 'the stream was deleted; forks of it remain');
  if (expired(st, nowMs)) {
    await removeStream(svc, states, key);
    if (st.meta.fork) await release(svc, states, sourceKeyOf(st.meta.fork.from), key);
    throw dsNotFound('stream expired');
  }
  return st;
}

/** A fork `child` of `parent` is gone: drop its ref; a deleted parent whose last fork that was is
 *  removed, and so on up the chain. Each step runs on that stream's lane. */
async function release(svc: StreamService, states: DsStates, parentKey: string, childKey: string): Promise<void> {
  let parent: string | undefined = parentKey;
  let child = childKey;
  while (parent !== undefined) {
    const key: string = parent;
    const up: string | undefined = await states.lane(key, async () => {
      const st = await states.get(key);
      if (!st?.meta || !st.children.has(child)) return undefined;
      await commit({ svc, states, key }, st, [refRecord(child, -1)]);
      if (!st.gone || st.children.size > 0) return undefined;
      await removeStream(svc, states, key);
      return st.meta.fork ? sourceKeyOf(st.meta.fork.from) : undefined;
    });
    child = key;
    parent = up;
  }
}

async function removeStream(svc: StreamService, states: DsStates, key: string): Promise<void> {
  try {
    await svc.deleteStream(states.bucket, key);
  } catch (err) {
    if (!(err instanceof ServiceError && err.code === 'not_found')) throw err;
  }
  states.forget(key);
}

/** Appends a batch at the state's tail and folds it into the state. */
async function commit(c: Pick<WriteCtx, 'svc' | 'states' | 'key' | 'deadlineMs'>, st: DsState, batch: RecordInput[]): Promise<AppendAck> {
  const ack = await c.svc.append(c.states.bucket, c.key, {
    records: batch, match_seq_num: st.tail, ...(c.deadlineMs !== undefined ? { deadlineMs: c.deadlineMs } : {}),
  });
  batch.forEach((r, i) => applyRecord(st, { seq_num: ack.start.seq_num + i, timestamp_ms: ack.start.timestamp_ms, headers: r.headers, body: r.body }));
  st.tail = ack.end.seq_num;
  return ack;
}

function parseMetaHeaders(c: WriteCtx): DsMeta {
  const ct = c.header('content-type');
  const meta: DsMeta = { contentType: ct === undefined || ct.trim() === '' ? DEFAULT_CONTENT_TYPE : ct.trim(), createdAtMs: c.nowMs };
  const ttl = c.header('stream-ttl');
  const exp = c.header('stream-expires-at');
  if (ttl !== undefined && exp !== undefined) throw dsInvalid('Stream-TTL and Stream-Expires-At exclude each other');
  if (ttl !== undefined) {
    if (!TTL_RE.test(ttl) || !Number.isSafeInteger(Number(ttl))) throw dsInvalid('Stream-TTL must be a whole number of seconds');
    meta.ttlSeconds = Number(ttl);
  }
  if (exp !== undefined) {
    const ms = Date.parse(exp);
    if (!RFC3339_RE.test(exp) || Number.isNaN(ms)) throw dsInvalid('Stream-Expires-At must be an RFC 3339 timestamp');
    meta.expiresAt = exp;
    meta.expiresAtMs = ms;
  }
  return meta;
}

function sameConfig(a: DsMeta, b: DsMeta): boolean {
  return mediaType(a.contentType) === mediaType(b.contentType) && a.ttlSeconds === b.ttlSeconds && a.expiresAtMs === b.expiresAtMs;
}

function stateHeaders(st: DsState): HeaderList {
  const h: HeaderList = [['Stream-Next-Offset', formatOffset(st.tail)]];
  if (st.closed) h.push(['Stream-Closed', 'true']);
  return h;
}

export async function createStream(c: WriteCtx): Promise<DsAnswer> {
  const ask = parseForkAsk(c.header);
  const own = parseMetaHeaders(c);
  const closing = c.header('stream-closed') === 'true';
  await c.states.ensureBucket();
  const answer: DsAnswer = await c.states.lane(c.key, async (): Promise<DsAnswer> => {
    const meta = ask ? forkMeta(c, await forkSource(c, ask.sourceKey), ask, own) : own;
    const messages = c.body.length > 0 ? messagesOf(c.body, meta.contentType, true) : [];
    let st = await c.states.get(c.key);
    if (st?.meta && st.gone) throw dsConflict('the stream was deleted and forks of it remain; its path is taken until they go');
    if (st?.meta && expired(st, c.nowMs)) { await removeStream(c.svc, c.states, c.key); st = undefined; }
    if (st?.meta) {
      if (!sameConfig(st.meta, meta) || (ask && !sameFork(st.meta.fork, ask.fork))) throw dsConflict('the stream exists with another configuration');
      return { status: 200, headers: [['Content-Type', st.meta.contentType], ...stateHeaders(st)], body: '' };
    }
    const copied = ask ? await forkRecords(c, ask, meta.contentType) : [];
    if (!st) {
      try {
        await c.svc.createStream(c.states.bucket, c.key, {});
      } catch (err) {
        if (!(err instanceof ServiceError && err.code === 'already_exists')) throw err;
      }
      st = await c.states.get(c.key);
      if (!st) throw new ServiceError('unavailable', 'the stream vanished while being created; retry');
    }
    // The meta record, a fork's copy and the initial body are one batch: one durable write.
    const batch = [metaRecord(meta), ...copied, ...messages.map((m, i) => dataRecord(m, i > 0)), ...(closing ? [closeRecord()] : [])];
    await commit(c, st, batch);
    st.lastAccessMs = c.nowMs;
    return { status: 201, headers: [['Content-Type', meta.contentType], ['Location', c.url], ...stateHeaders(st)], body: '' };
  });
  // The source learns of its new fork after the fork is durable: a crash between leaves a fork its
  // source does not count, which only lets the source be removed outright (the fork holds a copy).
  if (ask && answer.status === 201) {
    await c.states.lane(ask.sourceKey, async () => {
      const src = await c.states.get(ask.sourceKey);
      if (src?.meta && !src.children.has(c.key)) await commit({ svc: c.svc, states: c.states, key: ask.sourceKey }, src, [refRecord(c.key, 1)]);
    });
  }
  return answer;
}

/** A fork's source: absent is 404, deleted (with forks left) is 409. */
async function forkSource(c: WriteCtx, key: string): Promise<DsState> {
  try {
    return await liveState(c.svc, c.states, key, c.nowMs);
  } catch (err) {
    if (err instanceof ServiceError && err.code === 'trimmed') throw dsConflict('the source stream was deleted');
    throw err;
  }
}

const sameFork = (a: DsMeta['fork'], b: DsMeta['fork']): boolean => a?.from === b?.from && a?.offset === b?.offset && a?.sub === b?.sub;

export async function appendStream(c: WriteCtx): Promise<DsAnswer> {
  const closing = c.header('stream-closed') === 'true';
  const producer = parseProducer(c.header);
  const streamSeq = c.header('stream-seq');
  if (c.body.length === 0 && !closing) throw dsInvalid('an append needs a body (or Stream-Closed: true)');
  const ct = c.header('content-type');
  if (c.body.length > 0 && (ct === undefined || ct.trim() === '')) throw dsInvalid('an append needs a Content-Type');
  return c.states.lane(c.key, async () => {
    const st = await liveState(c.svc, c.states, c.key, c.nowMs);
    const meta = st.meta!;
    if (c.body.length > 0 && mediaType(ct!) !== mediaType(meta.contentType)) {
      throw dsConflict(`the stream's content type is ${meta.contentType}`);
    }
    const messages = c.body.length > 0 ? messagesOf(c.body, meta.contentType, false) : [];
    if (producer) {
      const verdict = judgeProducer(producer, st.producers.get(producer.id));
      if (verdict.kind === 'duplicate') {
        return {
          status: 204,
          headers: [...stateHeaders(st), ['Producer-Epoch', String(verdict.epoch)], ['Producer-Seq', String(verdict.highestSeq)]],
          body: '',
        };
      }
    }
    if (st.closed) {
      // Closing a closed stream again is idempotent; appending to it is a conflict.
      if (messages.length === 0 && !producer) return { status: 204, headers: stateHeaders(st), body: '' };
      throw dsConflict('the stream is closed', stateHeaders(st));
    }
    if (streamSeq !== undefined && st.streamSeq !== undefined && streamSeq <= st.streamSeq) {
      throw dsConflict(`Stream-Seq ${streamSeq} is not after ${st.streamSeq}`);
    }
    if (producer && !st.producers.has(producer.id) && st.producers.size >= DS_PRODUCERS_PER_STREAM_MAX) {
      throw dsError('resource_exhausted', `a stream remembers at most ${DS_PRODUCERS_PER_STREAM_MAX} producers`);
    }
    const batch = [...messages.map((m, i) => dataRecord(m, i > 0)), ...(closing ? [closeRecord()] : [])];
    stampLast(batch, producer, streamSeq);
    await commit(c, st, batch);
    st.lastAccessMs = c.nowMs;
    const headers = stateHeaders(st);
    if (producer) headers.push(['Producer-Epoch', String(producer.epoch)], ['Producer-Seq', String(producer.seq)]);
    return { status: producer && messages.length > 0 ? 200 : 204, headers, body: '' };
  });
}

export async function deleteStream(c: WriteCtx): Promise<DsAnswer> {
  const parent = await c.states.lane(c.key, async () => {
    const st = await liveState(c.svc, c.states, c.key, c.nowMs);
    if (st.children.size > 0) {
      // Forks hold copies, but the protocol keeps a deleted source visible as 410 while they live.
      await commit(c, st, [goneRecord()]);
      return undefined;
    }
    await removeStream(c.svc, c.states, c.key);
    return st.meta?.fork ? sourceKeyOf(st.meta.fork.from) : undefined;
  });
  if (parent !== undefined) await release(c.svc, c.states, parent, c.key);
  return { status: 204, headers: [], body: '' };
}
