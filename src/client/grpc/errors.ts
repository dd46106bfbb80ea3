// A gRPC failure as an SvcError: the status code and the typed details of the svc.v1 schema
// (SequenceDetail with OUT_OF_RANGE, FenceDetail with FAILED_PRECONDITION), unpacked from the
// `grpc-status-details-bin` trailer.

import type * as grpc from '@grpc/grpc-js';
import { decodeRpcStatus, STATUS_DETAILS_KEY } from '../../api/grpc/rpc-status.ts';
import { loadSvcProto } from '../../api/grpc/proto.ts';
import { GRPC, SvcError, kindOfGrpc, type Leader } from '../errors.ts';
import type { Position } from '../types.ts';

interface StatusLike { code?: number; details?: string; message?: string; metadata?: grpc.Metadata }

function detailsOf(err: StatusLike): { tail?: Position; fencingToken?: string; leader?: Leader } {
  const raw = err.metadata?.get(STATUS_DETAILS_KEY)[0];
  if (raw === undefined) return {};
  try {
    const status = decodeRpcStatus(typeof raw === 'string' ? Buffer.from(raw, 'base64') : raw);
    const { sequenceDetail, fenceDetail, notOwnerDetail } = loadSvcProto();
    const out: { tail?: Position; fencingToken?: string; leader?: Leader } = {};
    for (const d of status.details) {
      if (d.type_url.endsWith('/svc.v1.SequenceDetail')) {
        const t = sequenceDetail.deserialize(Buffer.from(d.value)).tail;
        if (t) out.tail = { seq_num: Number(t.seq_num), timestamp_ms: Number(t.timestamp_ms) };
      }
      if (d.type_url.endsWith('/svc.v1.FenceDetail')) out.fencingToken = fenceDetail.deserialize(Buffer.from(d.value)).fencing_token;
      if (d.type_url.endsWith('/svc.v1.NotOwnerDetail')) {
        const l = notOwnerDetail.deserialize(Buffer.from(d.value));
        if (l.grpc_address) out.leader = { star_id: l.star_id, grpc_address: l.grpc_address, bridge_address: l.bridge_address };
      }
    }
    return out;
  } catch {
    return {}; // a malformed trailer leaves the bare status
  }
}

/** grpc-js's words for a call whose channel never connected. */
export const NEVER_CONNECTED = /No connection established/;

/** `ambiguous`: the call may have taken effect (decided by the caller, who knows what it sent).
 *  `read`: the call was a Read, whose OUT_OF_RANGE with a tail is past the tail (not a match miss). */
export function fromGrpcError(err: unknown, what: string, ambiguous: boolean, read = false): SvcError {
  if (err instanceof SvcError) return err;
  const e = (err ?? {}) as StatusLike;
  if (typeof e.code !== 'number') return new SvcError('unknown', `${what}: ${String(err)}`, { ambiguous, cause: err });
  // grpc-js's words for a call that never left (its channel could not connect): nothing was sent,
  // so nothing is ambiguous, and the caller sees what an HTTP connect refusal shows.
  if (e.code === GRPC.UNAVAILABLE && NEVER_CONNECTED.test(e.details ?? e.message ?? '')) {
    const why = /Last error: (?:Error: )?(.+?)(?:\.\s*Resolution note|$)/.exec(e.details ?? '')?.[1] ?? 'no connection';
    return new SvcError('connection', `${what}: could not connect (${why}): nothing was sent`, { grpcStatus: e.code, cause: err });
  }
  const detail = detailsOf(e);
  const kind = kindOfGrpc(e.code, detail, read);
  return new SvcError(kind, `${what}: ${e.details || e.message || `gRPC status ${e.code}`}`, {
    grpcStatus: e.code, ambiguous, ...detail, cause: err,
  });
}
