// The transport-neutral face of a star: every verb of the data plane as a method. api/routes (HTTP),
// api/grpc and the admin bridge all call this; none of them reaches past it into core or storage.

import type {
  AppendAck, AppendInput, BucketConfig, BucketCreate, BucketInfo, ListPage, Position, ReadOptions, ReadResult, ReadStart,
  SequencedRecord, StreamConfig, StreamConfigInput, StreamCreate, StreamDetail, StreamInfo,
} from './types.ts';

// What a create or a patch sends, and a listing's page, are wire shapes (src/protocol/resources.ts);
// the verbs' implementers import them from here with the rest of the face.
export type { BucketCreate, ListPage, StreamConfigInput, StreamCreate } from './types.ts';

/** A live subscription. The transport pulls one batch at a time (one batch in flight). */
export interface Subscription {
  /** Resolves with the next non-empty batch (waiting at the tail), or rejects with a ServiceError
   *  when the stream is deleted or trimmed under the cursor. Never call again before it settles. */
  next(): Promise<SubscriptionBatch>;
  /** The cursor: the seq_num the next batch starts at. */
  readonly cursor: number;
  close(): void;
  /** Optional promise-free fan-out path (LiveSubscription has it): a batch already committed in
   *  memory, or undefined; whether the cursor is at the tail; a callback for when it moves. */
  poll?(): SubscriptionBatch | undefined;
  atTail?(): boolean;
  onReady?(cb: () => void): void;
  /** Optional, for a fan-out that reads once on behalf of many subscribers (LiveSubscription has
   *  them): subscriptions with the same `shareKey` read the same stream; `fork()` opens another
   *  subscription there at this one's cursor (at the committed tail when the cursor is past it);
   *  `advanceTo(seq)` moves the cursor forward to a batch boundary another subscription of the
   *  stream delivered through (never call during a next()). */
  readonly shareKey?: object;
  fork?(): Subscription;
  advanceTo?(seq: number): void;
  /** Whether records from `seq` on may still be served (the stream is not deleted or trimmed past it). */
  readable?(seq: number): boolean;
}

export interface SubscriptionBatch {
  records: SequencedRecord[];
  /** Position after the batch's last record. */
  tail: Position;
}

/** One settled segment a ReadPlan vends (the object store location is resolved by the transport). */
export interface PlanSegment {
  object_key: string;
  /** Bytes of frames before the footer. */
  payload_bytes: number;
  footer_offset: number;
  footer_bytes: number;
  first_seq: number;
  end_seq: number;
  min_ts: number;
  max_ts: number;
}

/** Where a read plan starts (ReadPlan has no tail_offset start). */
export type PlanStart = { kind: 'seq_num' | 'timestamp_ms'; value: number };

export interface PlanResult {
  segments: PlanSegment[];
  /** First seq_num not vended; undefined only for a timestamp start above the settled ceiling. */
  vended_until: number | undefined;
  more: boolean;
}

/** What live producer sessions need to hear about a stream. */
export type StreamEvent =
  | { kind: 'fenced'; fencing_token: string }
  | { kind: 'reconfigured'; handoff: boolean; config: StreamConfig }
  | { kind: 'deleted' }
  /** The stream left this star without being deleted (its lease moved: a drain, a lost renewal). */
  | { kind: 'moved' };

export interface StreamService {
  // buckets
  createBucket(name: string, body: BucketCreate): Promise<BucketInfo>;
  getBucket(name: string): BucketInfo | Promise<BucketInfo>;
  updateBucket(name: string, body: Partial<BucketConfig>): Promise<BucketInfo>;
  deleteBucket(name: string): Promise<void>;
  listBuckets(startAfter: string, limit: number): ListPage<BucketInfo> | Promise<ListPage<BucketInfo>>;
  // streams (key is raw bytes decoded from the path, carried as a latin1/utf8 string by the caller)
  createStream(bucket: string, key: string, body: StreamCreate): Promise<StreamInfo>;
  getStream(bucket: string, key: string): StreamDetail | Promise<StreamDetail>;
  /** The stream as its leader holds it, for a writer that is about to watch it (a producer session).
   *  Unlike getStream, which describes a vacant stream with no lease taken, this makes the star its
   *  leader (spec: States: writers make a leader); not_owner when another star leads it. */
  leadStream(bucket: string, key: string): StreamDetail | Promise<StreamDetail>;
  reconfigureStream(bucket: string, key: string, patch: StreamConfigInput): Promise<StreamInfo>;
  deleteStream(bucket: string, key: string): Promise<void>;
  listStreams(bucket: string, startAfter: string, limit: number): ListPage<StreamInfo> | Promise<ListPage<StreamInfo>>;
  // records
  append(bucket: string, key: string, input: AppendInput): Promise<AppendAck>;
  read(bucket: string, key: string, opts: ReadOptions): Promise<ReadResult>;
  /** Leadership (spec: States): true while leased, false when vacant (the dashboard's idle). */
  leased(bucket: string, key: string): boolean;
  /** The committed tail of an existing stream (admin views: never creates). */
  checkTail(bucket: string, key: string): Position | Promise<Position>;
  /** CheckTail on the data plane: like a read, a first use may create the stream (create_stream_on_read). */
  readTail(bucket: string, key: string): Promise<Position>;
  trim(bucket: string, key: string, to: { seq_num?: number; timestamp_ms?: number }): Promise<void>;
  fence(bucket: string, key: string, token: string): Promise<Position>;
  subscribe(bucket: string, key: string, start: ReadStart): Promise<Subscription>;
  /** The settled segments covering [start, …), at most `maxEntries`, tiling exactly. */
  readPlan(bucket: string, key: string, start: PlanStart, maxEntries: number): Promise<PlanResult>;
  /** Listens for fence, reconfigure and delete events on a stream; returns the unsubscribe function. */
  watch(bucket: string, key: string, listener: (ev: StreamEvent) => void): () => void;
}
