// The read verbs of the admin plane, transport-neutral: each takes its proto request message and
// answers its proto response message. The gRPC AdminService (admin-service.ts) and the ops
// listener's JSON admin bridge (src/ops/admin-bridge.ts) both call these, so the two surfaces
// cannot drift. Every list is paginated and every scan bounded; a count stopping at its cap says so.
//
// A verb first validates its request, then calls `gate` with the address it names (gRPC authorizes
// there, before anything resolves, so it is never an existence oracle; the bridge passes), then reads.

import type * as grpc from '@grpc/grpc-js';
import { ADMIN_READER_BYTES_MAX, ADMIN_READER_RECORDS_MAX, LIST_PAGE_MAX } from '../../config/limits.ts';
import { ServiceError } from '../../core/errors.ts';
import type { StreamService } from '../../core/service-api.ts';
import type { Position, ReadOptions, ReadResult, StreamInfo } from '../../core/types.ts';
import type { AdminServiceHandlers } from '../../gen/svc/v1/AdminService.ts';
import type { Credential } from '../../gen/svc/v1/Credential.ts';
import type { StreamSummary } from '../../gen/svc/v1/StreamSummary.ts';
import type { StarIdentity } from './context.ts';
import {
  addressFromWire, bucketFromWire, bucketInfoToWire, clampToCap, keyToWire, pageLimit, positionToWire,
  recordToWire, streamConfigToWire, streamCursorFromWire, streamCursorToWire, streamInfoToWire, selectorFromWire,
} from './convert.ts';
import type { CredentialRow, GrpcAuthHooks } from './hooks.ts';

/** GetClusterOverview counts at most this many buckets… */
export const OVERVIEW_BUCKETS_SCAN_MAX = 1000;
/** …and at most this many streams across them. */
export const OVERVIEW_STREAMS_SCAN_MAX = 100_000;
/** ListBucketSummaries counts each bucket's streams with one listing page; so it pages buckets slower. */
export const BUCKET_SUMMARIES_PAGE_MAX = 100;

/** The read verbs, in the proto's order. Both surfaces serve exactly these. */
export const ADMIN_READ_VERBS = [
  'ListCredentials', 'Health', 'ListStars', 'GetClusterOverview', 'ListStreamSummaries', 'ListBucketSummaries',
  'GetStreamDetail', 'GetStreamLiveStats', 'ListAuditQueues', 'PeekAuditQueue', 'ReadStreamRecords',
] as const;
export type AdminReadVerb = (typeof ADMIN_READ_VERBS)[number];

/** A cluster's membership and leases as the admin views show them (absent: a star alone). */
export interface ClusterView {
  stars(): Promise<{ star_id: string; address: string; state: 'active' | 'draining' | 'decommissioned'; started_unix_ms: number; gone: boolean }[]>;
  /** The star leading (bucket, key) now; '' when the stream is vacant. */
  leaderOf(bucket: string, key: string): Promise<string>;
  /** The epoch of the stream's lease row (0: never leased). */
  epochOf(bucket: string, key: string): Promise<number>;
  /** A stream's descriptor, tail and records as any star can read them (never taking its lease). */
  stream(bucket: string, key: string): Promise<StreamInfo & { fencing_token: string }>;
  tail(bucket: string, key: string): Promise<Position>;
  read(bucket: string, key: string, opts: ReadOptions): Promise<ReadResult>;
  /** Drain (or decommission) a star ('' : the one asked); answers the leases it handed over. */
  drain(starId: string, decommission: boolean): Promise<number>;
}

/** The auditor's queues as the admin plane shows them (core/auditor.ts). */
export interface AuditView {
  depth(name: 'deletions' | 'verifications' | 'findings'): number;
  peek(name: 'deletions' | 'verifications' | 'findings', limit: number): { bucket: string; key: string; reason: string; enqueuedAtMs: number }[];
}
const AUDIT_QUEUE_NAMES = ['deletions', 'verifications', 'findings'] as const;
/** PeekAuditQueue's page: 0 or above this means this many (proto). */
const AUDIT_PEEK_MAX = 500;

export interface AdminReadContext {
  service: StreamService;
  cluster?: ClusterView;
  /** The star's auditor (absent: no queues to show). */
  audit?: AuditView;
  star: Pick<StarIdentity, 'id' | 'address' | 'startedAtMs' | 'nowMs'>;
  /** The credential registry's listing; absent (auth off): ListCredentials is UNIMPLEMENTED. */
  listCredentials?: GrpcAuthHooks['listCredentials'];
}

/** What a verb names, handed to the gate once the request is validated and before anything is read. */
export interface AdminAddress { bucket?: string; key?: string }
export type AdminGate = (address: AdminAddress) => Promise<void>;

type Unary<H> = H extends grpc.handleUnaryCall<infer Req, infer Res> ? [Req, Res] : never;
/** The request message a verb takes (as the loader decodes it: defaults filled, bytes as Buffers). */
export type AdminRequest<V extends AdminReadVerb> = Unary<AdminServiceHandlers[V]>[0];
/** The response message a verb answers. */
export type AdminResponse<V extends AdminReadVerb> = NonNullable<Unary<AdminServiceHandlers[V]>[1]>;
export type AdminReads = { [V in AdminReadVerb]: (req: AdminRequest<V>, gate: AdminGate) => Promise<AdminResponse<V>> };

/** A registry row on the wire: never its secret or hash (the row carries neither). */
export function credentialToWire(c: CredentialRow): Credential {
  return {
    key_id: c.key_id,
    scope: c.scope,
    state: c.state === 'active' ? 'CREDENTIAL_STATE_ACTIVE' : 'CREDENTIAL_STATE_REVOKED',
    created_at_unix_ms: c.created_at_unix_ms,
  };
}

export function adminReads(ctx: AdminReadContext): AdminReads {
  const svc = ctx.service;
  // A cluster's views read any stream on any star (never taking a lease); a star alone reads itself.
  const tailOf = (bucket: string, key: string): Promise<Position> | Position => (ctx.cluster ? ctx.cluster.tail(bucket, key) : svc.checkTail(bucket, key));
  const leader = async (bucket: string, key: string): Promise<string> => {
    if (ctx.cluster) return ctx.cluster.leaderOf(bucket, key);
    return svc.leased(bucket, key) ? ctx.star.id : '';
  };

  /** Streams in a bucket, counted with at most `cap` listed. */
  const countStreams = async (bucket: string, cap: number): Promise<{ count: number; capped: boolean }> => {
    let count = 0;
    let cursor = '';
    for (;;) {
      const page = await svc.listStreams(bucket, cursor, Math.min(LIST_PAGE_MAX, cap - count));
      count += page.items.length;
      if (page.next === '') return { count, capped: false };
      if (count >= cap) return { count, capped: true };
      cursor = page.next;
    }
  };

  return {
    async ListCredentials(req, gate) {
      await gate({});
      const list = ctx.listCredentials;
      if (!list) throw new ServiceError('unimplemented', 'the credential registry is not configured on this star');
      const page = await list(req.start_after, pageLimit(req.limit));
      return { credentials: page.items.map(credentialToWire), next: page.next };
    },

    async Health(_req, gate) {
      await gate({});
      return { serving: true, star_id: ctx.star.id, uptime_ms: Math.max(0, ctx.star.nowMs() - ctx.star.startedAtMs) };
    },

    async ListStars(_req, gate) {
      await gate({});
      if (ctx.cluster) {
        // Members that stopped reporting (killed, or stopped) are not shown as serving.
        const stars = (await ctx.cluster.stars()).filter((st) => !st.gone && st.state !== 'decommissioned');
        return {
          stars: stars.map((st) => ({
            star_id: st.star_id, address: st.address, started_at_unix_ms: st.started_unix_ms,
            state: st.state === 'draining' ? 'STAR_STATE_DRAINING' as const : 'STAR_STATE_ACTIVE' as const,
          })),
        };
      }
      return {
        stars: [{ star_id: ctx.star.id, address: ctx.star.address, state: 'STAR_STATE_ACTIVE', started_at_unix_ms: ctx.star.startedAtMs }],
      };
    },

    async GetClusterOverview(_req, gate) {
      await gate({});
      let buckets = 0;
      let streams = 0;
      let streamsCapped = false;
      let cursor = '';
      let bucketsCapped = false;
      for (;;) {
        const page = await svc.listBuckets(cursor, Math.min(LIST_PAGE_MAX, OVERVIEW_BUCKETS_SCAN_MAX - buckets));
        for (const b of page.items) {
          buckets++;
          if (streamsCapped) continue;
          const c = await countStreams(b.name, OVERVIEW_STREAMS_SCAN_MAX - streams);
          streams += c.count;
          streamsCapped = c.capped || streams >= OVERVIEW_STREAMS_SCAN_MAX;
        }
        if (page.next === '') break;
        if (buckets >= OVERVIEW_BUCKETS_SCAN_MAX) { bucketsCapped = true; break; }
        cursor = page.next;
      }
      const starCount = ctx.cluster ? (await ctx.cluster.stars()).filter((st) => !st.gone && st.state !== 'decommissioned').length : 1;
      return {
        star_count: starCount,
        bucket_count: buckets,
        bucket_count_capped: bucketsCapped,
        stream_count: streams,
        // Streams of buckets past the bucket cap were not counted either.
        stream_count_capped: streamsCapped || bucketsCapped,
      };
    },

    async ListStreamSummaries(req, gate) {
      const bucket = bucketFromWire(req.bucket);
      await gate({ bucket });
      const page = await svc.listStreams(bucket, streamCursorFromWire(req.start_after), pageLimit(req.limit));
      const streams: StreamSummary[] = [];
      for (const s of page.items) {
        let tail;
        try {
          tail = await tailOf(s.bucket, s.key);
        } catch (err) {
          if (err instanceof ServiceError && err.code === 'not_found') continue; // deleted since listed
          throw err;
        }
        streams.push({
          bucket: s.bucket,
          key: keyToWire(s.key),
          stream_id: s.stream_id,
          storage_class: streamConfigToWire(s).storage_class,
          tail: positionToWire(tail),
          leader_star_id: await leader(s.bucket, s.key),
          created_at_unix_ms: s.created_at_unix_ms,
        });
      }
      return { streams, next: streamCursorToWire(page.next) };
    },

    async ListBucketSummaries(req, gate) {
      await gate({});
      const page = await svc.listBuckets(req.start_after, Math.min(pageLimit(req.limit), BUCKET_SUMMARIES_PAGE_MAX));
      const buckets = [];
      for (const b of page.items) {
        const c = await countStreams(b.name, LIST_PAGE_MAX);
        buckets.push({ info: bucketInfoToWire(b), stream_count: c.count, stream_count_capped: c.capped });
      }
      return { buckets, next: page.next };
    },

    async GetStreamDetail(req, gate) {
      const { bucket, key } = addressFromWire(req);
      await gate({ bucket, key });
      const s = ctx.cluster ? await ctx.cluster.stream(bucket, key) : await svc.getStream(bucket, key);
      return {
        info: streamInfoToWire(s),
        fencing_token: s.fencing_token,
        tail: positionToWire(await tailOf(bucket, key)),
        leader_star_id: await leader(bucket, key),
        lease_epoch: ctx.cluster ? await ctx.cluster.epochOf(bucket, key) : 0,
      };
    },

    async GetStreamLiveStats(req, gate) {
      const { bucket, key } = addressFromWire(req);
      await gate({ bucket, key });
      return { tail: positionToWire(await tailOf(bucket, key)), leader_star_id: await leader(bucket, key), sampled_at_unix_ms: ctx.star.nowMs() };
    },

    // No auditor runs behind this adapter: there are no queues to show.
    async ListAuditQueues(_req, gate) {
      await gate({});
      const audit = ctx.audit;
      if (!audit) return { queues: [] };
      return { queues: AUDIT_QUEUE_NAMES.map((name) => ({ name, depth: audit.depth(name), depth_capped: false })) };
    },

    async PeekAuditQueue(req, gate) {
      await gate({});
      const name = AUDIT_QUEUE_NAMES.find((n) => n === req.name);
      if (!ctx.audit || !name) throw new ServiceError('not_found', `no audit queue named ${JSON.stringify(req.name)}`);
      const limit = req.limit === 0 || req.limit > AUDIT_PEEK_MAX ? AUDIT_PEEK_MAX : req.limit;
      return {
        items: ctx.audit.peek(name, limit).map((i) => ({
          bucket: i.bucket, key: keyToWire(i.key), reason: i.reason, enqueued_at_unix_ms: i.enqueuedAtMs,
        })),
      };
    },

    async ReadStreamRecords(req, gate) {
      const { bucket, key } = addressFromWire(req);
      await gate({ bucket, key });
      // Any uint64 start: past 2^53 it lies past every record, an empty page at the tail (types.proto).
      const seqNum = selectorFromWire(req.seq_num);
      // A view never creates: a missing stream is NOT_FOUND even in a create_stream_on_read bucket.
      // (checkTail and read's stream lookup run in the same turn: no deletion falls between them.)
      await tailOf(bucket, key);
      const read = ctx.cluster ? ctx.cluster.read.bind(ctx.cluster) : svc.read.bind(svc);
      const result = await read(bucket, key, {
        start: { kind: 'seq_num', value: seqNum },
        limit: clampToCap(req.limit, ADMIN_READER_RECORDS_MAX),
        maxBytes: ADMIN_READER_BYTES_MAX,
        clamp: true,
      });
      return { records: result.records.map(recordToWire), tail: positionToWire(result.tail) };
    },
  };
}
