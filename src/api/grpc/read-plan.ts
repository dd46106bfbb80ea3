// ReadPlan: vends the settled segments that hold a range, so a consumer fetches history straight
// from object storage. The core (StreamService.readPlan) picks the segments, tiling, at most
// max_entries; this file locates them per the vending mode and stamps the plan's expiry:
//   presigned: a URL valid until the plan expires: on the fs backend signed by the star and served by
//              the data bridge (GET /v1/objects/{key}?size&expires&sig, honouring one Range); on s3,
//              S3's own SigV4 query-signed GET;
//   raw:       storage_bucket (the fs root directory, or the S3 bucket) and object_key.
// A segment object is its frames (payload_bytes), then the footer [footer_offset, +footer_length).

import { READPLAN_ENTRIES_MAX } from '../../config/limits.ts';
import { invalid, ServiceError } from '../../core/errors.ts';
import type { PlanSegment } from '../../core/service-api.ts';
import type { ReadPlanEntry } from '../../gen/svc/v1/ReadPlanEntry.ts';
import type { ReadPlanRequest__Output } from '../../gen/svc/v1/ReadPlanRequest.ts';
import type { ReadPlanResponse } from '../../gen/svc/v1/ReadPlanResponse.ts';
import type { GrpcContext } from './context.ts';
import { clampToCap, selectorFromWire, timeSelectorFromWire } from './convert.ts';
import type { ReadPlanVending } from './hooks.ts';

type Mode = 'presigned' | 'raw';

function modeOf(req: ReadPlanRequest__Output, vending: ReadPlanVending): Mode {
  if (req.mode === 'VENDING_MODE_PRESIGNED') return 'presigned';
  if (req.mode === 'VENDING_MODE_RAW') {
    if (vending.mode !== 'raw') throw new ServiceError('permission_denied', 'raw vending is for trust-domain consumers: this star vends presigned URLs only');
    return 'raw';
  }
  if (req.mode === 'VENDING_MODE_UNSPECIFIED' || req.mode === undefined || req.mode === 0) return vending.mode;
  throw invalid(`unknown mode: ${String(req.mode)}`);
}

async function entryToWire(s: PlanSegment, mode: Mode, vending: ReadPlanVending, expiresAtMs: number): Promise<ReadPlanEntry> {
  const entry: ReadPlanEntry = {
    footer_offset: s.footer_offset,
    footer_length: s.footer_bytes,
    payload_bytes: s.payload_bytes,
    first_seq_num: s.first_seq,
    end_seq_num: s.end_seq,
    min_timestamp_ms: s.min_ts,
    max_timestamp_ms: s.max_ts,
  };
  if (mode === 'raw') entry.raw = { storage_bucket: vending.storageBucket, object_key: s.object_key };
  else entry.presigned_url = await vending.presign!({ objectKey: s.object_key, sizeBytes: s.footer_offset + s.footer_bytes, expiresAtMs });
  return entry;
}

export async function handleReadPlan(
  ctx: GrpcContext, bucket: string, key: string, req: ReadPlanRequest__Output,
): Promise<ReadPlanResponse> {
  let start: { kind: 'seq_num' | 'timestamp_ms'; value: number };
  // Positions and times select records, as a Read's do: any uint64 / int64 is valid, and one past
  // 2^53 lies past every record (convert.ts, selectorFromWire).
  if (req.start === 'seq_num' && req.seq_num !== undefined) start = { kind: 'seq_num', value: selectorFromWire(req.seq_num) };
  else if (req.start === 'timestamp_ms' && req.timestamp_ms !== undefined) start = { kind: 'timestamp_ms', value: timeSelectorFromWire(req.timestamp_ms) };
  else throw invalid('exactly one start (seq_num or timestamp_ms) is required');
  const endSeq = req.end_seq_num !== undefined ? selectorFromWire(req.end_seq_num) : undefined;
  const vending = ctx.vending;
  const mode = modeOf(req, vending);
  if (mode === 'presigned' && !vending.presign) {
    // Not a state that converges (FAILED_PRECONDITION is retried): this deployment does not vend them,
    // as a star without a signing key does not exchange tokens (spec: 501).
    throw new ServiceError('unimplemented', 'presigned vending needs the data bridge (--listen) to serve the URLs; ask for raw or read through Read');
  }
  const plan = await ctx.service.readPlan(bucket, key, start, clampToCap(req.max_entries, READPLAN_ENTRIES_MAX));
  let segments = plan.segments;
  let vendedUntil = plan.vended_until;
  let more = plan.more;
  if (endSeq !== undefined) {
    // The range ends at end_seq_num: vend only the objects starting below it.
    const kept = segments.filter((s) => s.first_seq < endSeq);
    if (kept.length < segments.length || (kept.length > 0 && kept[kept.length - 1].end_seq >= endSeq)) more = false;
    segments = kept;
    if (kept.length > 0) vendedUntil = kept[kept.length - 1].end_seq;
    else if (plan.segments.length > 0) vendedUntil = start.kind === 'seq_num' ? start.value : plan.segments[0].first_seq;
  }
  const expiresAtMs = ctx.star.nowMs() + vending.ttlMs;
  const res: ReadPlanResponse = {
    entries: await Promise.all(segments.map((s) => entryToWire(s, mode, vending, expiresAtMs))),
    more,
    expires_at_unix_ms: expiresAtMs,
  };
  if (vendedUntil !== undefined) res.vended_until = vendedUntil;
  return res;
}
