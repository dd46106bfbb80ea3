// An in-memory StreamService for adapter tests: just enough of the spec's semantics (tails,
// match_seq_num, fencing, trim, listing, live subscriptions) to exercise every conversion, plus
// hooks to hold appends back (flow-control tests) and to count live subscriptions.
import { ServiceError, notFound } from '../../src/core/errors.ts';
import type {
  BucketCreate, ListPage, StreamConfigInput, StreamCreate, StreamService, Subscription, SubscriptionBatch,
} from '../../src/core/service-api.ts';
import {
  DEFAULT_BUCKET_CONFIG, streamDefaultsOf, type AppendAck, type AppendInput, type BucketConfig, type BucketInfo,
  type Position, type ReadOptions, type ReadResult, type ReadStart, type SequencedRecord, type StreamConfig, type StreamInfo,
} from '../../src/core/types.ts';

interface FakeStream {
  info: StreamInfo;
  records: SequencedRecord[];
  trim: number;
  fence: string;
  waiters: (() => void)[];
  deleted: boolean;
}

export class FakeService implements StreamService {
  private readonly buckets = new Map<string, BucketInfo>();
  private readonly streams = new Map<string, FakeStream>();
  private nextId = 1;
  private now = 1_700_000_000_000;
  /** When set, every append waits for this promise before it is sequenced (in call order). */
  gate: Promise<void> | undefined;
  appendCalls = 0;
  openSubscriptions = 0;

  private clock(): number { return this.now++; }

  async createBucket(name: string, body: BucketCreate): Promise<BucketInfo> {
    if (this.buckets.has(name)) throw new ServiceError('already_exists', `bucket ${name} already exists`);
    const { creation_token, ...config } = body;
    const b: BucketInfo = { ...DEFAULT_BUCKET_CONFIG, ...config, name, created_at_unix_ms: this.clock(), creation_token: creation_token ?? '' };
    this.buckets.set(name, b);
    return b;
  }
  getBucket(name: string): BucketInfo {
    const b = this.buckets.get(name);
    if (!b) throw notFound(`bucket ${name} not found`);
    return b;
  }
  async updateBucket(name: string, body: Partial<BucketConfig>): Promise<BucketInfo> {
    const b = this.getBucket(name);
    const next: BucketInfo = { ...DEFAULT_BUCKET_CONFIG, ...body, name, created_at_unix_ms: b.created_at_unix_ms, creation_token: b.creation_token };
    this.buckets.set(name, next);
    return next;
  }
  async deleteBucket(name: string): Promise<void> {
    this.getBucket(name);
    if (this.listStreams(name, '', 1).items.length > 0) throw new ServiceError('bucket_not_empty', 'bucket not empty');
    this.buckets.delete(name);
  }
  listBuckets(startAfter: string, limit: number): ListPage<BucketInfo> {
    const all = [...this.buckets.keys()].sort().filter((n) => n > startAfter);
    const items = all.slice(0, limit).map((n) => this.buckets.get(n)!);
    return { items, next: all.length > limit ? items[items.length - 1].name : '' };
  }

  private addr(bucket: string, key: string): string { return `${bucket}\u0000${key}`; }
  private live(bucket: string, key: string): FakeStream {
    const s = this.streams.get(this.addr(bucket, key));
    if (!s || s.deleted) throw notFound(`stream ${bucket}/${key} not found`);
    return s;
  }

  async createStream(bucket: string, key: string, body: StreamCreate): Promise<StreamInfo> {
    const b = this.getBucket(bucket);
    const existing = this.streams.get(this.addr(bucket, key));
    if (existing && !existing.deleted) throw new ServiceError('already_exists', 'stream exists');
    const { creation_token: _t, ...cfg } = body;
    const config: StreamConfig = { ...streamDefaultsOf(b) };
    for (const [k, v] of Object.entries(cfg)) if (v !== '' && v !== undefined) (config as unknown as Record<string, unknown>)[k] = v;
    const info: StreamInfo = { ...config, stream_id: `s-${this.nextId++}`, bucket, key, created_at_unix_ms: this.clock() };
    this.streams.set(this.addr(bucket, key), { info, records: [], trim: 0, fence: '', waiters: [], deleted: false });
    return info;
  }
  getStream(bucket: string, key: string): StreamInfo & { fencing_token: string } {
    const s = this.live(bucket, key);
    return { ...s.info, fencing_token: s.fence };
  }
  async reconfigureStream(bucket: string, key: string, patch: StreamConfigInput): Promise<StreamInfo> {
    const s = this.live(bucket, key);
    for (const [k, v] of Object.entries(patch)) if (v !== '' && v !== undefined) (s.info as unknown as Record<string, unknown>)[k] = v;
    return s.info;
  }
  async deleteStream(bucket: string, key: string): Promise<void> {
    const s = this.live(bucket, key);
    s.deleted = true;
    for (const w of s.waiters.splice(0)) w();
  }
  listStreams(bucket: string, startAfter: string, limit: number): ListPage<StreamInfo> {
    this.getBucket(bucket);
    const all = [...this.streams.values()].filter((s) => !s.deleted && s.info.bucket === bucket && s.info.key > startAfter)
      .sort((a, b) => (a.info.key < b.info.key ? -1 : 1));
    const items = all.slice(0, limit).map((s) => s.info);
    return { items, next: all.length > limit ? items[items.length - 1].key : '' };
  }

  private tailOf(s: FakeStream): Position {
    const last = s.records[s.records.length - 1];
    return { seq_num: s.records.length, timestamp_ms: last ? last.timestamp_ms : 0 };
  }

  async append(bucket: string, key: string, input: AppendInput): Promise<AppendAck> {
    this.appendCalls++;
    if (this.gate) await this.gate;
    let s = this.streams.get(this.addr(bucket, key));
    if (!s || s.deleted) {
      if (!this.getBucket(bucket).create_stream_on_append) throw notFound(`stream ${bucket}/${key} not found`);
      await this.createStream(bucket, key, {});
      s = this.live(bucket, key);
    }
    if (s.fence !== '' && input.fencing_token !== s.fence) {
      throw new ServiceError('fence_mismatch', 'fencing token mismatch', { fencing_token: s.fence });
    }
    if (input.match_seq_num !== undefined && input.match_seq_num !== s.records.length) {
      throw new ServiceError('seq_mismatch', 'match_seq_num mismatch', { tail: this.tailOf(s) });
    }
    const start = this.tailOf(s);
    for (const r of input.records) {
      s.records.push({ seq_num: s.records.length, timestamp_ms: r.timestamp_ms ?? this.clock(), headers: r.headers, body: r.body });
    }
    const first = s.records[start.seq_num];
    for (const w of s.waiters.splice(0)) w();
    return { start: { seq_num: start.seq_num, timestamp_ms: first.timestamp_ms }, end: this.tailOf(s), tail: this.tailOf(s) };
  }

  private resolve(s: FakeStream, start: ReadStart, clamp: boolean): number {
    let seq: number;
    if (start.kind === 'seq_num') seq = start.value;
    else if (start.kind === 'tail_offset') seq = Math.max(0, s.records.length - start.value);
    else {
      const i = s.records.findIndex((r) => r.timestamp_ms >= start.value);
      seq = i < 0 ? s.records.length : i;
    }
    if (seq < s.trim) {
      if (!clamp) throw new ServiceError('trimmed', `records below ${s.trim} were trimmed`);
      seq = s.trim;
    }
    if (seq > s.records.length) {
      if (!clamp) throw new ServiceError('range_not_satisfiable', 'past the tail', { tail: this.tailOf(s) });
      seq = s.records.length;
    }
    return seq;
  }

  async read(bucket: string, key: string, opts: ReadOptions): Promise<ReadResult> {
    const s = this.live(bucket, key);
    const from = this.resolve(s, opts.start, opts.clamp);
    const records: SequencedRecord[] = [];
    let bytes = 0;
    for (let i = from; i < s.records.length && records.length < opts.limit; i++) {
      const r = s.records[i];
      if (opts.untilMs !== undefined && r.timestamp_ms >= opts.untilMs) break;
      if (records.length > 0 && bytes + r.body.length > opts.maxBytes) break;
      bytes += r.body.length;
      records.push(r);
    }
    return { records, tail: this.tailOf(s) };
  }
  checkTail(bucket: string, key: string): Position { return this.tailOf(this.live(bucket, key)); }
  async trim(bucket: string, key: string, to: { seq_num?: number; timestamp_ms?: number }): Promise<void> {
    const s = this.live(bucket, key);
    const seq = to.seq_num ?? this.resolve(s, { kind: 'timestamp_ms', value: to.timestamp_ms ?? 0 }, true);
    s.trim = Math.max(s.trim, Math.min(seq, s.records.length));
  }
  async fence(bucket: string, key: string, token: string): Promise<Position> {
    const s = this.live(bucket, key);
    s.fence = token;
    return this.tailOf(s);
  }

  async subscribe(bucket: string, key: string, start: ReadStart): Promise<Subscription> {
    const s = this.live(bucket, key);
    let cursor = this.resolve(s, start, false);
    let closed = false;
    this.openSubscriptions++;
    const released = (): void => { this.openSubscriptions--; };
    return {
      get cursor() { return cursor; },
      async next(): Promise<SubscriptionBatch> {
        for (;;) {
          if (closed) throw new ServiceError('unavailable', 'subscription closed');
          if (s.deleted) throw new ServiceError('stream_deleted', 'stream deleted');
          if (cursor < s.trim) throw new ServiceError('trimmed', 'trimmed under the cursor');
          if (cursor < s.records.length) {
            const records = s.records.slice(cursor, cursor + 3);
            cursor += records.length;
            const last = records[records.length - 1];
            return { records, tail: { seq_num: cursor, timestamp_ms: last.timestamp_ms } };
          }
          await new Promise<void>((resolve) => { s.waiters.push(resolve); });
        }
      },
      close(): void {
        if (closed) return;
        closed = true;
        released();
        for (const w of s.waiters.splice(0)) w();
      },
    };
  }
}
