// ReadPlan: vends settled objects so consumers can fetch history straight from object storage.
// The segments are storage's to describe; the star plugs them in through the `readPlan` hook.
// Without the hook this star vends nothing, which is a valid plan: no entries, vended_until at the
// start (a seq_num start), so the consumer reads the whole range through Read/Subscribe.

import { READPLAN_ENTRIES_MAX, READPLAN_TTL_MS_DEFAULT } from '../../config/limits.ts';
import { invalid } from '../../core/errors.ts';
import type { ReadPlanRequest__Output } from '../../gen/svc/v1/ReadPlanRequest.ts';
import type { ReadPlanResponse } from '../../gen/svc/v1/ReadPlanResponse.ts';
import type { ReadPlanEntry } from '../../gen/svc/v1/ReadPlanEntry.ts';
import type { GrpcContext } from './context.ts';
import { clampToCap } from './convert.ts';
import type { ReadPlanEntryInfo, ReadPlanQuery } from './hooks.ts';

function queryFromWire(req: ReadPlanRequest__Output): ReadPlanQuery {
  let start: ReadPlanQuery['start'];
  if (req.start === 'seq_num' && req.seq_num !== undefined) start = { kind: 'seq_num', value: req.seq_num };
  else if (req.start === 'timestamp_ms' && req.timestamp_ms !== undefined) start = { kind: 'timestamp_ms', value: req.timestamp_ms };
  else throw invalid('exactly one start (seq_num or timestamp_ms) is required');
  const query: ReadPlanQuery = { start, max_entries: clampToCap(req.max_entries, READPLAN_ENTRIES_MAX) };
  if (req.end_seq_num !== undefined) query.end_seq_num = req.end_seq_num;
  if (req.mode === 'VENDING_MODE_PRESIGNED') query.mode = 'presigned';
  else if (req.mode === 'VENDING_MODE_RAW') query.mode = 'raw';
  return query;
}

function entryToWire(e: ReadPlanEntryInfo): ReadPlanEntry {
  const base: ReadPlanEntry = {
    footer_offset: e.footer_offset,
    footer_length: e.footer_length,
    payload_bytes: e.payload_bytes,
    first_seq_num: e.first_seq_num,
    end_seq_num: e.end_seq_num,
    min_timestamp_ms: e.min_timestamp_ms,
    max_timestamp_ms: e.max_timestamp_ms,
  };
  if ('presigned_url' in e.location) base.presigned_url = e.location.presigned_url;
  else base.raw = { storage_bucket: e.location.storage_bucket, object_key: e.location.object_key };
  return base;
}

export async function handleReadPlan(
  ctx: GrpcContext, bucket: string, key: string, req: ReadPlanRequest__Output,
): Promise<ReadPlanResponse> {
  const query = queryFromWire(req);
  if (ctx.star.readPlan) {
    const plan = await ctx.star.readPlan(bucket, key, query);
    const res: ReadPlanResponse = {
      entries: plan.entries.map(entryToWire),
      more: plan.more,
      expires_at_unix_ms: plan.expires_at_unix_ms,
    };
    if (plan.vended_until !== undefined) res.vended_until = plan.vended_until;
    return res;
  }
  // No vending: still a real answer about a real stream (NOT_FOUND and friends come from the core).
  ctx.service.checkTail(bucket, key);
  const res: ReadPlanResponse = {
    entries: [],
    more: false,
    expires_at_unix_ms: ctx.star.nowMs() + READPLAN_TTL_MS_DEFAULT,
  };
  // A timestamp start lies above the (empty) settled ceiling: vended_until stays absent.
  if (query.start.kind === 'seq_num') res.vended_until = query.start.value;
  return res;
}
