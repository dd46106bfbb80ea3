// AdminService: the admin plane of a one-star cluster. Cluster verbs answer as a one-star cluster
// does (the only star cannot be drained or decommissioned: FAILED_PRECONDITION); dashboard reads are
// built from what the StreamService offers, every scan bounded (a count stopping at its cap says so);
// credential verbs go to the auth hook and answer UNIMPLEMENTED while it is absent.

import { ADMIN_READER_BYTES_MAX, ADMIN_READER_RECORDS_MAX, LIST_PAGE_MAX } from '../../config/limits.ts';
import { ServiceError } from '../../core/errors.ts';
import type { AdminServiceHandlers } from '../../gen/svc/v1/AdminService.ts';
import type { Credential } from '../../gen/svc/v1/Credential.ts';
import type { StreamSummary } from '../../gen/svc/v1/StreamSummary.ts';
import { authorize, unary, type GrpcContext, type UnaryCallState } from './context.ts';
import {
  bucketFromWire, bucketInfoToWire, clampToCap, keyFromWire, keyToWire, pageLimit, positionToWire,
  recordToWire, streamConfigToWire, streamCursorFromWire, streamCursorToWire, streamInfoToWire, u64FromWire,
} from './convert.ts';
import type { CredentialRow, GrpcAuthHooks } from './hooks.ts';

/** GetClusterOverview counts at most this many buckets… */
export const OVERVIEW_BUCKETS_SCAN_MAX = 1000;
/** …and at most this many streams across them. */
export const OVERVIEW_STREAMS_SCAN_MAX = 100_000;
/** ListBucketSummaries counts each bucket's streams with one listing page; so it pages buckets slower. */
export const BUCKET_SUMMARIES_PAGE_MAX = 100;

function credentialToWire(c: CredentialRow): Credential {
  return {
    key_id: c.key_id,
    scope: c.scope,
    state: c.state === 'active' ? 'CREDENTIAL_STATE_ACTIVE' : 'CREDENTIAL_STATE_REVOKED',
    created_at_unix_ms: c.created_at_unix_ms,
  };
}

function credentialHook<K extends 'createCredential' | 'listCredentials' | 'revokeCredential'>(
  ctx: GrpcContext, name: K,
): NonNullable<GrpcAuthHooks[K]> {
  const hook = ctx.auth?.[name];
  if (!hook) throw new ServiceError('unimplemented', 'the credential registry is not configured on this star');
  return hook.bind(ctx.auth) as NonNullable<GrpcAuthHooks[K]>;
}

/** The one star: '' names it, any other id is unknown. */
function onlyStar(ctx: GrpcContext, starId: string): void {
  if (starId !== '' && starId !== ctx.star.id) throw new ServiceError('not_found', `no star ${starId} in this cluster`);
}

export function adminServiceHandlers(ctx: GrpcContext): AdminServiceHandlers {
  const svc = ctx.service;
  const admin = async (verb: string, c: UnaryCallState, bucket?: string, key?: string): Promise<void> => {
    const caller = await authorize(ctx, {
      verb, plane: 'admin', metadata: c.metadata, ...(bucket !== undefined ? { bucket } : {}), ...(key !== undefined ? { key } : {}),
    });
    c.deadlineAt(caller.expMs);
  };

  /** Streams in a bucket, counted with at most `cap` listed. */
  const countStreams = (bucket: string, cap: number): { count: number; capped: boolean } => {
    let count = 0;
    let cursor = '';
    for (;;) {
      const page = svc.listStreams(bucket, cursor, Math.min(LIST_PAGE_MAX, cap - count));
      count += page.items.length;
      if (page.next === '') return { count, capped: false };
      if (count >= cap) return { count, capped: true };
      cursor = page.next;
    }
  };

  return {
    Drain: unary(async (req, _md, c) => {
      await admin('Drain', c);
      onlyStar(ctx, req.star_id);
      throw new ServiceError('failed_precondition', 'cannot drain the only star: no other star can take its leases');
    }),

    Decommission: unary(async (req, _md, c) => {
      await admin('Decommission', c);
      onlyStar(ctx, req.star_id);
      throw new ServiceError('failed_precondition', 'cannot decommission the only star of the cluster');
    }),

    CreateCredential: unary(async (req, _md, c) => {
      await admin('CreateCredential', c);
      const created = await credentialHook(ctx, 'createCredential')({ key_id: req.key_id, scope: req.scope });
      return { credential: credentialToWire(created.credential), secret: created.secret };
    }),

    ListCredentials: unary(async (req, _md, c) => {
      await admin('ListCredentials', c);
      const page = await credentialHook(ctx, 'listCredentials')(req.start_after, pageLimit(req.limit));
      return { credentials: page.items.map(credentialToWire), next: page.next };
    }),

    RevokeCredential: unary(async (req, _md, c) => {
      await admin('RevokeCredential', c);
      if (req.key_id === '') throw new ServiceError('invalid_argument', 'key_id is required');
      return { credential: credentialToWire(await credentialHook(ctx, 'revokeCredential')(req.key_id)) };
    }),

    Health: unary(async (_req, _md, c) => {
      await admin('Health', c);
      return { serving: true, star_id: ctx.star.id, uptime_ms: Math.max(0, ctx.star.nowMs() - ctx.star.startedAtMs) };
    }),

    ListStars: unary(async (_req, _md, c) => {
      await admin('ListStars', c);
      return {
        stars: [{ star_id: ctx.star.id, address: ctx.star.address, state: 'STAR_STATE_ACTIVE', started_at_unix_ms: ctx.star.startedAtMs }],
      };
    }),

    GetClusterOverview: unary(async (_req, _md, c) => {
      await admin('GetClusterOverview', c);
      let buckets = 0;
      let streams = 0;
      let streamsCapped = false;
      let cursor = '';
      let bucketsCapped = false;
      for (;;) {
        const page = svc.listBuckets(cursor, Math.min(LIST_PAGE_MAX, OVERVIEW_BUCKETS_SCAN_MAX - buckets));
        for (const b of page.items) {
          buckets++;
          if (streamsCapped) continue;
          const c = countStreams(b.name, OVERVIEW_STREAMS_SCAN_MAX - streams);
          streams += c.count;
          streamsCapped = c.capped || streams >= OVERVIEW_STREAMS_SCAN_MAX;
        }
        if (page.next === '') break;
        if (buckets >= OVERVIEW_BUCKETS_SCAN_MAX) { bucketsCapped = true; break; }
        cursor = page.next;
      }
      return {
        star_count: 1,
        bucket_count: buckets,
        bucket_count_capped: bucketsCapped,
        stream_count: streams,
        // Streams of buckets past the bucket cap were not counted either.
        stream_count_capped: streamsCapped || bucketsCapped,
      };
    }),

    ListStreamSummaries: unary(async (req, _md, c) => {
      const bucket = bucketFromWire(req.bucket);
      await admin('ListStreamSummaries', c, bucket);
      const page = svc.listStreams(bucket, streamCursorFromWire(req.start_after), pageLimit(req.limit));
      const streams: StreamSummary[] = [];
      for (const s of page.items) {
        let tail;
        try {
          tail = svc.checkTail(s.bucket, s.key);
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
          leader_star_id: ctx.star.id,
          created_at_unix_ms: s.created_at_unix_ms,
        });
      }
      return { streams, next: streamCursorToWire(page.next) };
    }),

    ListBucketSummaries: unary(async (req, _md, c) => {
      await admin('ListBucketSummaries', c);
      const page = svc.listBuckets(req.start_after, Math.min(pageLimit(req.limit), BUCKET_SUMMARIES_PAGE_MAX));
      return {
        buckets: page.items.map((b) => {
          const c = countStreams(b.name, LIST_PAGE_MAX);
          return { info: bucketInfoToWire(b), stream_count: c.count, stream_count_capped: c.capped };
        }),
        next: page.next,
      };
    }),

    GetStreamDetail: unary(async (req, _md, c) => {
      const bucket = bucketFromWire(req.bucket);
      const key = keyFromWire(req.key);
      await admin('GetStreamDetail', c, bucket, key);
      const s = svc.getStream(bucket, key);
      return {
        info: streamInfoToWire(s),
        fencing_token: s.fencing_token,
        tail: positionToWire(svc.checkTail(bucket, key)),
        leader_star_id: ctx.star.id,
      };
    }),

    GetStreamLiveStats: unary(async (req, _md, c) => {
      const bucket = bucketFromWire(req.bucket);
      const key = keyFromWire(req.key);
      await admin('GetStreamLiveStats', c, bucket, key);
      return { tail: positionToWire(svc.checkTail(bucket, key)), leader_star_id: ctx.star.id, sampled_at_unix_ms: ctx.star.nowMs() };
    }),

    // No auditor runs behind this adapter: there are no queues to show.
    ListAuditQueues: unary(async (_req, _md, c) => {
      await admin('ListAuditQueues', c);
      return { queues: [] };
    }),

    PeekAuditQueue: unary(async (req, _md, c) => {
      await admin('PeekAuditQueue', c);
      throw new ServiceError('not_found', `no audit queue named ${JSON.stringify(req.name)}`);
    }),

    ReadStreamRecords: unary(async (req, _md, c) => {
      const bucket = bucketFromWire(req.bucket);
      const key = keyFromWire(req.key);
      await admin('ReadStreamRecords', c, bucket, key);
      const result = await svc.read(bucket, key, {
        start: { kind: 'seq_num', value: u64FromWire(req.seq_num, 'seq_num') },
        limit: clampToCap(req.limit, ADMIN_READER_RECORDS_MAX),
        maxBytes: ADMIN_READER_BYTES_MAX,
        clamp: true,
      });
      return { records: result.records.map(recordToWire), tail: positionToWire(result.tail) };
    }),
  };
}
