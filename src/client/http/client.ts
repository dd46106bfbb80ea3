// SvcClient: every HTTP verb of the spec's route table, typed. Buckets and streams (create, get,
// list as async iterators over pages, reconfigure, delete), appends (with match_seq_num and fencing,
// retried only when safe: append.ts), reads (reader.ts), the live subscription (subscription.ts),
// tail, trim, fence, the token exchange, and the batching producer (producer.ts).
//
// Browser-safe: no `node:` import anywhere below this file.

import type { AppendRequest, BucketsAnswer, FenceRequest, TrimRequest } from '../../protocol/json.ts';
import { LIST_PAGE_MAX as WIRE_LIST_PAGE_MAX } from '../../protocol/limits.ts';
import type { ExchangeRequest as WireExchangeRequest } from '../../protocol/resources.ts';
import { AddressError, encodeKey, keyFromBytes, type BucketAddress, type StreamAddress } from '../address.ts';
import { appendSafely, type AppendIo, type RetryEvent } from '../append.ts';
import { base64Decode } from '../bytes.ts';
import { SvcError } from '../errors.ts';
import { Producer, type BatchSink, type ProducerOptions } from '../producer.ts';
import { readPages, readRecords, type PageQuery, type ReadOptions, type ReadPage } from '../reader.ts';
import { Subscription, type SubscribeOptions } from '../subscription.ts';
import type {
  AppendAck, AppendOptions, AppendRecord, BucketConfig, BucketInfo, ExchangedToken, Page, Position, ReadRecord,
  StreamConfig, StreamDetail, StreamInfo,
} from '../types.ts';
import { decodePosition, decodeRecordsAnswer, encodeRecord } from './records.ts';
import { HttpTransport, type TransportOptions } from './transport.ts';

export type ClientOptions = TransportOptions;

/** The server's largest page for listings. */
export const LIST_PAGE_MAX = WIRE_LIST_PAGE_MAX;

export interface ListOptions {
  /** Resume after this cursor (a previous page's `next`). */
  startAfter?: string;
  /** Page size (at most 1000). */
  limit?: number;
  signal?: AbortSignal;
}

export interface CreateOptions {
  /** Makes a retried create converge on the first; one is generated when absent. */
  creationToken?: string;
  signal?: AbortSignal;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface ExchangeRequest {
  keyId: string;
  secret: string;
  /** Narrow to one bucket, or to an explicit scope (exactly one). */
  bucket?: string;
  scope?: string;
  /** Token lifetime; the server defaults to 15 minutes and clamps at 1 hour. */
  ttlSeconds?: number;
  signal?: AbortSignal;
}

export interface AppendCallOptions extends AppendOptions, CallOptions {
  /** Told about each retry (the rules are in append.ts). */
  onRetry?: (e: RetryEvent) => void;
}

export type TrimPoint = { seqNum: number } | { timestampMs: number };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function newCreationToken(): string {
  return globalThis.crypto.randomUUID();
}

/** A stream resource from JSON: `key_b64` (a key whose bytes are not UTF-8) becomes bytes. */
function streamFromJson<T extends StreamInfo>(v: unknown): T {
  if (!isObject(v)) throw new SvcError('protocol', 'the answer is not a stream');
  const out: Record<string, unknown> = { ...v };
  if (typeof v.key_b64 === 'string') {
    out.key = keyFromBytes(base64Decode(v.key_b64));
    delete out.key_b64;
  }
  return out as unknown as T;
}

export class SvcClient {
  readonly transport: HttpTransport;

  constructor(opts: ClientOptions) {
    this.transport = new HttpTransport(opts);
  }

  // ------------------------------------------------------------------ paths

  static streamPath(a: StreamAddress): string {
    const key = encodeKey(a.key);
    // fetch's URL parser reads a `.` or `..` segment, and its escapes %2E and %2E%2E too, as a dot
    // segment and folds it into the path around it: the request would name another resource (a
    // fence on key `.` would create the stream `fence`). The server serves these keys; fetch cannot
    // name them, so they are refused here, before anything is sent.
    if (key === '.' || key === '..') {
      throw new AddressError(`svc://${a.bucket}/${key}`, `the key ${key} cannot be named in a fetch URL (dot segments are folded away); use the gRPC transport or node:http`);
    }
    return `/v1/streams/${encodeURIComponent(a.bucket)}/${key}`;
  }

  private static bucketPath(bucket: string): string {
    return `/v1/buckets/${encodeURIComponent(bucket)}`;
  }

  // ------------------------------------------------------------------ buckets

  async createBucket(a: BucketAddress, config: Partial<BucketConfig> = {}, opts: CreateOptions = {}): Promise<BucketInfo> {
    const r = await this.transport.request({
      method: 'POST', path: SvcClient.bucketPath(a.bucket), body: { ...config, creation_token: opts.creationToken ?? newCreationToken() },
      idempotent: true, signal: opts.signal,
    });
    return r.body as BucketInfo;
  }

  async getBucket(a: BucketAddress, opts: CallOptions = {}): Promise<BucketInfo> {
    return (await this.transport.request({ method: 'GET', path: SvcClient.bucketPath(a.bucket), idempotent: true, signal: opts.signal })).body as BucketInfo;
  }

  /** Replaces the bucket's config whole (unset fields return to the defaults). */
  async updateBucket(a: BucketAddress, config: Partial<BucketConfig>, opts: CallOptions = {}): Promise<BucketInfo> {
    return (await this.transport.request({ method: 'PUT', path: SvcClient.bucketPath(a.bucket), body: config, idempotent: true, signal: opts.signal })).body as BucketInfo;
  }

  /** Deletes an empty bucket (a bucket with streams is `bucket_not_empty`). */
  async deleteBucket(a: BucketAddress, opts: CallOptions = {}): Promise<void> {
    await this.transport.request({
      method: 'DELETE', path: SvcClient.bucketPath(a.bucket), idempotent: true, conflictKind: 'bucket_not_empty', signal: opts.signal,
      // A retry that finds the bucket gone means the first attempt deleted it.
      acceptStatus: (status, attempt) => status === 404 && attempt > 1,
    });
  }

  async listBuckets(opts: ListOptions = {}): Promise<Page<BucketInfo>> {
    const r = await this.transport.request({
      method: 'GET', path: '/v1/buckets', query: { start_after: opts.startAfter || undefined, limit: opts.limit }, idempotent: true, signal: opts.signal,
    });
    const body = r.body as BucketsAnswer;
    return { items: body.buckets, next: body.next };
  }

  /** Every bucket, page after page. */
  async *buckets(opts: ListOptions = {}): AsyncGenerator<BucketInfo> {
    let cursor = opts.startAfter ?? '';
    for (;;) {
      const page = await this.listBuckets({ ...opts, startAfter: cursor });
      yield* page.items;
      if (page.next === '' || page.items.length === 0) return;
      cursor = page.next;
    }
  }

  // ------------------------------------------------------------------ streams

  async createStream(a: StreamAddress, config: Partial<StreamConfig> = {}, opts: CreateOptions = {}): Promise<StreamInfo> {
    const r = await this.transport.request({
      method: 'POST', path: SvcClient.streamPath(a), body: { ...config, creation_token: opts.creationToken ?? newCreationToken() },
      idempotent: true, signal: opts.signal,
    });
    return streamFromJson<StreamInfo>(r.body);
  }

  /** The stream with its installed fencing token. */
  async getStream(a: StreamAddress, opts: CallOptions = {}): Promise<StreamDetail> {
    return streamFromJson<StreamDetail>((await this.transport.request({ method: 'GET', path: SvcClient.streamPath(a), idempotent: true, signal: opts.signal })).body);
  }

  /** Changes only the given fields; answers the stream as it now stands. */
  async reconfigureStream(a: StreamAddress, patch: Partial<StreamConfig>, opts: CallOptions = {}): Promise<StreamInfo> {
    return streamFromJson<StreamInfo>((await this.transport.request({ method: 'PATCH', path: SvcClient.streamPath(a), body: patch, idempotent: true, signal: opts.signal })).body);
  }

  /** Deletes a stream (idempotent on a deleted one; `not_found` for one that never existed). */
  async deleteStream(a: StreamAddress, opts: CallOptions = {}): Promise<void> {
    await this.transport.request({ method: 'DELETE', path: SvcClient.streamPath(a), idempotent: true, signal: opts.signal });
  }

  async listStreams(a: BucketAddress, opts: ListOptions = {}): Promise<Page<StreamInfo>> {
    const r = await this.transport.request({
      method: 'GET', path: `/v1/streams/${encodeURIComponent(a.bucket)}`, query: { start_after: opts.startAfter || undefined, limit: opts.limit },
      idempotent: true, signal: opts.signal,
    });
    const body = r.body as { streams: unknown[]; next: string };
    return { items: body.streams.map((s) => streamFromJson<StreamInfo>(s)), next: body.next };
  }

  /** Every stream of a bucket, page after page. */
  async *streams(a: BucketAddress, opts: ListOptions = {}): AsyncGenerator<StreamInfo> {
    let cursor = opts.startAfter ?? '';
    for (;;) {
      const page = await this.listStreams(a, { ...opts, startAfter: cursor });
      yield* page.items;
      if (page.next === '' || page.items.length === 0) return;
      cursor = page.next;
    }
  }

  // ------------------------------------------------------------------ records

  /** One attempt of one durable batch, no retry (the producer and `append` add the safe ones). */
  async appendOnce(a: StreamAddress, records: readonly AppendRecord[], opts: AppendOptions & CallOptions = {}): Promise<AppendAck> {
    const body: AppendRequest = { records: records.map(encodeRecord) };
    if (opts.matchSeqNum !== undefined) body.match_seq_num = opts.matchSeqNum;
    if (opts.fencingToken !== undefined) body.fencing_token = opts.fencingToken;
    const r = await this.transport.request({ method: 'POST', path: `${SvcClient.streamPath(a)}/records`, body, idempotent: false, noRetry: true, signal: opts.signal });
    return decodeAck(r.body);
  }

  /** Appends one batch durably. Retries only what is safe: a definite refusal worth retrying (429, a
   *  refused connection) always; an ambiguous failure only with `matchSeqNum`, verified by read-back
   *  (append.ts). Without it an ambiguous failure throws AmbiguousAppendError. */
  async append(a: StreamAddress, records: readonly AppendRecord[], opts: AppendCallOptions = {}): Promise<AppendAck> {
    const res = await appendSafely(this.appendIo(a, opts.signal), records, {
      retry: this.transport.retry,
      ...(opts.matchSeqNum !== undefined ? { matchSeqNum: opts.matchSeqNum } : {}),
      ...(opts.fencingToken !== undefined ? { fencingToken: opts.fencingToken } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.onRetry ? { onRetry: opts.onRetry } : {}),
    });
    return res.ack;
  }

  appendIo(a: StreamAddress, signal?: AbortSignal): AppendIo {
    return {
      attempt: (records, o) => this.appendOnce(a, records, { ...o, ...(signal ? { signal } : {}) }),
      readRange: (start, count) => this.readRange(a, start, count, signal),
    };
  }

  /** Exactly the records [start, start + count), or fewer if the stream ends sooner. */
  async readRange(a: StreamAddress, start: number, count: number, signal?: AbortSignal): Promise<ReadRecord[]> {
    const out: ReadRecord[] = [];
    for await (const r of this.read(a, { start: { seqNum: start }, limit: count, ...(signal ? { signal } : {}) })) out.push(r);
    return out;
  }

  /** One page, as the server answers it. */
  async readPage(a: StreamAddress, q: PageQuery): Promise<ReadPage> {
    const s = q.start;
    const r = await this.transport.request({
      method: 'GET', path: `${SvcClient.streamPath(a)}/records`, idempotent: true, signal: q.signal,
      query: {
        seq_num: 'seqNum' in s ? s.seqNum : undefined,
        timestamp_ms: 'timestampMs' in s ? s.timestampMs : undefined,
        tail_offset: 'tailOffset' in s ? s.tailOffset : undefined,
        limit: q.limit, max_bytes: q.maxBytes, until_ms: q.untilMs, clamp: q.clamp ? true : undefined,
      },
    });
    return decodeRecordsAnswer(r.body, 'read');
  }

  /** Records from a start up to a limit, a time bound or the tail, as an async iterator. */
  read(a: StreamAddress, opts: ReadOptions): AsyncGenerator<ReadRecord> {
    return readRecords((q) => this.readPage(a, q), opts);
  }

  /** The same, page by page. */
  readPages(a: StreamAddress, opts: ReadOptions): AsyncGenerator<ReadPage> {
    return readPages((q) => this.readPage(a, q), opts);
  }

  /** Live delivery that resumes across drops and restarts (subscription.ts). */
  subscribe(a: StreamAddress, opts: SubscribeOptions): Subscription {
    return new Subscription({
      transport: this.transport, streamPath: SvcClient.streamPath(a),
      checkTail: (signal) => this.checkTail(a, signal ? { signal } : {}),
      offsetStart: async (offset, signal) => {
        const page = await this.readPage(a, { start: { tailOffset: offset }, limit: 1, clamp: true, ...(signal ? { signal } : {}) });
        return page.records[0]?.seq_num ?? page.tail.seq_num;
      },
    }, opts);
  }

  async checkTail(a: StreamAddress, opts: CallOptions = {}): Promise<Position> {
    return this.tailOf(a, opts.signal, false);
  }

  /** The tail, retried by the transport's policy, or (`oneAttempt`: for a producer, which retries
   *  under its own) asked once. */
  private async tailOf(a: StreamAddress, signal: AbortSignal | undefined, oneAttempt: boolean): Promise<Position> {
    const r = await this.transport.request({ method: 'GET', path: `${SvcClient.streamPath(a)}/records/tail`, idempotent: true, signal, noRetry: oneAttempt });
    return decodePosition(r.body, 'tail');
  }

  /** Advances the trim watermark (never lowers it). */
  async trim(a: StreamAddress, point: TrimPoint, opts: CallOptions = {}): Promise<void> {
    const body: TrimRequest = 'seqNum' in point ? { seq_num: point.seqNum } : { timestamp_ms: point.timestampMs };
    await this.transport.request({ method: 'POST', path: `${SvcClient.streamPath(a)}/trim`, body, idempotent: true, signal: opts.signal });
  }

  /** Installs a fencing token ('' clears it); answers the tail. */
  async fence(a: StreamAddress, fencingToken: string, opts: CallOptions = {}): Promise<Position> {
    const body: FenceRequest = { fencing_token: fencingToken };
    const r = await this.transport.request({ method: 'POST', path: `${SvcClient.streamPath(a)}/fence`, body, idempotent: true, signal: opts.signal });
    if (!isObject(r.body)) throw new SvcError('protocol', 'the fence answer is not an object');
    return decodePosition(r.body.tail, 'fence tail');
  }

  /** Exchanges an api-key credential for a short-lived scoped token (no bearer needed). */
  async exchangeToken(req: ExchangeRequest): Promise<ExchangedToken> {
    if ((req.bucket === undefined) === (req.scope === undefined)) throw new TypeError('exchangeToken: give exactly one of bucket or scope');
    const body: WireExchangeRequest = { key_id: req.keyId, secret: req.secret };
    if (req.bucket !== undefined) body.bucket = req.bucket;
    if (req.scope !== undefined) body.scope = req.scope;
    if (req.ttlSeconds !== undefined) body.ttl_seconds = req.ttlSeconds;
    const r = await this.transport.request({ method: 'POST', path: '/v1/token/exchange', body, idempotent: true, auth: false, signal: req.signal });
    const t = r.body;
    if (!isObject(t) || typeof t.token !== 'string' || typeof t.expires_at_unix_ms !== 'number') throw new SvcError('protocol', 'the exchange answer has no token');
    return { token: t.token, expires_at_unix_ms: t.expires_at_unix_ms };
  }

  // ------------------------------------------------------------------ producer

  /** A batching, pipelining producer over HTTP appends (producer.ts). */
  producer(a: StreamAddress, opts: ProducerOptions = {}): Producer {
    return new Producer(this.httpSink(a), opts);
  }

  /** The producer's view of this stream over HTTP: one-shot appends, which carry no order between
   *  concurrent requests (so the producer pipelines them only under match_seq_num). */
  httpSink(a: StreamAddress): BatchSink {
    return {
      ordered: false,
      append: (records, o) => this.appendOnce(a, records, o),
      readRange: (start, count) => this.readRange(a, start, count),
      checkTail: () => this.tailOf(a, undefined, true),
      close: async () => {},
    };
  }
}

function decodeAck(v: unknown): AppendAck {
  if (!isObject(v)) throw new SvcError('protocol', 'the append answer is not an object');
  return { start: decodePosition(v.start, 'start'), end: decodePosition(v.end, 'end'), tail: decodePosition(v.tail, 'tail') };
}
