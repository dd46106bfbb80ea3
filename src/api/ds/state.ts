// The DS view of each stream (metadata, tail, closure, producers, last Stream-Seq), derived from the
// stream's own records (records.ts) and cached. The records are the truth: a state dropped from the
// cache, or lost with a restart, is rebuilt by scanning them, so nothing here is only in memory except
// the sliding-TTL clock (last access), which restarts from the load time (see README: Durable Streams).
// Mutations of one stream run one at a time on its lane, so a producer check and the append it admits
// cannot interleave with another's.

import { ServiceError } from '../../core/errors.ts';
import type { StreamService } from '../../core/service-api.ts';
import type { ReadResult } from '../../core/types.ts';
import type { SequencedRecord } from '../../protocol/records.ts';
import { DS_LANE_WAITERS_MAX, DS_SCAN_PAGE_BYTES_MAX, DS_STALE_STATE_ATTEMPTS_MAX, DS_READ_RECORDS_MAX, DS_STATE_CACHE_STREAMS_MAX } from './limits.ts';
import { kindOf, parseMeta, producerOf, refOf, streamSeqOf, type DsMeta, type ProducerTuple } from './records.ts';

export interface ProducerState {
  epoch: number;
  seq: number;
}

export interface DsState {
  /** The svcd stream this state describes: a stream deleted and made again is a new one. */
  streamId: string;
  /** Undefined while the stream exists in svcd but its meta record was never written (a creation cut
   *  by a crash between CreateStream and the meta append): it reads as absent, and a PUT completes it. */
  meta: DsMeta | undefined;
  /** svcd tail: the seq_num the next record gets. */
  tail: number;
  closed: boolean;
  /** The producer tuple of the append that closed the stream, if one did (a retry of it is a duplicate). */
  closedBy: ProducerTuple | undefined;
  producers: Map<string, ProducerState>;
  streamSeq: string | undefined;
  /** Forks of this stream still alive (their keys), from its ref records. */
  children: Set<string>;
  /** Deleted while forks lived: 410 until the last fork goes, then removed. */
  gone: boolean;
  /** Sliding TTL: last read or write (HEAD does not count), in ms. */
  lastAccessMs: number;
}

export class DsStates {
  private readonly cache = new Map<string, DsState>();
  private readonly lanes = new Map<string, { tail: Promise<unknown>; waiters: number }>();
  private bucketReady: Promise<void> | undefined;

  constructor(private readonly svc: StreamService, readonly bucket: string, private readonly nowMs: () => number) {}

  /** The bucket exists (made at first use, from defaults). */
  ensureBucket(): Promise<void> {
    this.bucketReady ??= this.svc.createBucket(this.bucket, {}).then(() => undefined, (err: unknown) => {
      if (err instanceof ServiceError && err.code === 'already_exists') return;
      this.bucketReady = undefined;
      throw err;
    });
    return this.bucketReady;
  }

  /** The stream's state, loading it when not cached; undefined when the svcd stream does not exist. */
  async get(key: string): Promise<DsState | undefined> {
    let info: { stream_id: string };
    try {
      info = await this.svc.getStream(this.bucket, key);
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'not_found') { this.cache.delete(key); return undefined; }
      throw err;
    }
    const cached = this.cache.get(key);
    if (cached && cached.streamId === info.stream_id) {
      const current = await this.catchUp(key, cached);
      if (current) return current;
    }
    const state = await this.load(key, info.stream_id);
    this.remember(key, state);
    return state;
  }

  /** A cached state brought up to the stream's tail: the records appended since it was made (through
   *  svcd's own API, or by another star that led the stream meanwhile) are folded, in order, into a
   *  copy, which replaces the cached one unless that moved further meanwhile. The cached object is
   *  never changed here: a write on the stream's lane decided on it, and appends guarded by its tail,
   *  so its decision and its guard stay one. Undefined when the records after it were trimmed away
   *  (the caller reloads it whole). */
  private async catchUp(key: string, cached: DsState): Promise<DsState | undefined> {
    const readFrom = (seq: number): Promise<ReadResult> =>
      this.svc.read(this.bucket, key, { start: { kind: 'seq_num', value: seq }, limit: DS_READ_RECORDS_MAX, maxBytes: DS_SCAN_PAGE_BYTES_MAX, clamp: true });
    let page = await readFrom(cached.tail);
    if (page.tail.seq_num <= cached.tail) {
      this.remember(key, this.cache.get(key) ?? cached);
      return cached;
    }
    const next: DsState = { ...cached, producers: new Map(cached.producers), children: new Set(cached.children) };
    for (;;) {
      for (const r of page.records) {
        if (r.seq_num < next.tail) continue;
        if (r.seq_num > next.tail) return undefined; // a gap: trimmed away
        applyRecord(next, r);
      }
      if (next.tail >= page.tail.seq_num) break;
      if (page.records.length === 0) return undefined;
      page = await readFrom(next.tail);
    }
    const now = this.cache.get(key);
    if (!now || now.streamId !== next.streamId || now.tail < next.tail) this.remember(key, next);
    return next;
  }

  forget(key: string): void { this.cache.delete(key); }

  private remember(key: string, state: DsState): void {
    this.cache.delete(key);
    this.cache.set(key, state);
    while (this.cache.size > DS_STATE_CACHE_STREAMS_MAX) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
  }

  /** Rebuilds a stream's state from its records, page by page. */
  private async load(key: string, streamId: string): Promise<DsState> {
    const state: DsState = {
      streamId, meta: undefined, tail: 0, closed: false, closedBy: undefined, producers: new Map(), streamSeq: undefined, children: new Set(), gone: false, lastAccessMs: this.nowMs(),
    };
    let next = 0;
    for (;;) {
      const page = await this.svc.read(this.bucket, key, { start: { kind: 'seq_num', value: next }, limit: DS_READ_RECORDS_MAX, maxBytes: DS_SCAN_PAGE_BYTES_MAX, clamp: true });
      state.tail = page.tail.seq_num;
      for (const r of page.records) applyRecord(state, r);
      if (page.records.length === 0) break;
      next = page.records[page.records.length - 1].seq_num + 1;
      if (next >= page.tail.seq_num) break;
    }
    return state;
  }

  /** Runs `fn` after every mutation queued before it on this stream. Each `fn` makes one guarded
   *  append (write.ts commit), guarded by the tail of the state it decided on: a match_seq_num miss
   *  appended nothing, the state was stale (another writer got in between), and `fn` runs again on
   *  the state reloaded from the records. What it may have written before that append (creating the
   *  svcd stream, removing an expired one) a re-run finds done, or does again harmlessly. */
  lane<T>(key: string, fn: () => Promise<T>): Promise<T> {
    let lane = this.lanes.get(key);
    if (!lane) { lane = { tail: Promise.resolve(), waiters: 0 }; this.lanes.set(key, lane); }
    if (lane.waiters >= DS_LANE_WAITERS_MAX) {
      return Promise.reject(new ServiceError('resource_exhausted', 'too many writes queued on this stream; retry shortly'));
    }
    const l = lane;
    l.waiters++;
    const fresh = async (): Promise<T> => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await fn();
        } catch (err) {
          if (attempt >= DS_STALE_STATE_ATTEMPTS_MAX || !(err instanceof ServiceError && err.code === 'seq_mismatch')) throw err;
          this.forget(key);
        }
      }
    };
    const run = l.tail.then(fresh, fresh);
    l.tail = run.then(() => undefined, () => undefined).finally(() => {
      l.waiters--;
      if (l.waiters === 0 && this.lanes.get(key) === l) this.lanes.delete(key);
    });
    return run;
  }
}

/** Folds one committed record into the state (the load scan and every acknowledged append). */
export function applyRecord(state: DsState, r: SequencedRecord): void {
  const kind = kindOf(r);
  if (kind === 'meta') state.meta = parseMeta(r);
  const p = producerOf(r);
  if (p) state.producers.set(p.id, { epoch: p.epoch, seq: p.seq });
  const ss = streamSeqOf(r);
  if (ss !== undefined) state.streamSeq = ss;
  if (kind === 'close') { state.closed = true; state.closedBy = p; }
  if (kind === 'gone') state.gone = true;
  if (kind === 'ref') {
    const ref = refOf(r);
    if (ref?.delta === 1) state.children.add(ref.child);
    else if (ref) state.children.delete(ref.child);
  }
  if (r.seq_num + 1 > state.tail) state.tail = r.seq_num + 1;
}

export function expired(state: DsState, nowMs: number): boolean {
  const m = state.meta;
  if (!m) return false;
  if (m.ttlSeconds !== undefined && state.lastAccessMs + m.ttlSeconds * 1000 <= nowMs) return true;
  return m.expiresAtMs !== undefined && m.expiresAtMs <= nowMs;
}
