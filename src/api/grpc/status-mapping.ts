// ServiceError → gRPC status. The status comes from GRPC_STATUS below, the one place a gRPC answer's
// code is chosen (the protocol leaf says what a code means, not which number each transport sends);
// the two 412 variants add a typed detail, Any-packed into a google.rpc.Status in the
// `grpc-status-details-bin` trailer: svc.v1.SequenceDetail {tail} on a match_seq_num miss (and on
// a read past the tail), svc.v1.FenceDetail {fencing_token} on a fencing mismatch.

import * as grpc from '@grpc/grpc-js';
import { asServiceError, ServiceError } from '../../core/errors.ts';
import { loadSvcProto } from './proto.ts';
import { encodeRpcStatus, STATUS_DETAILS_KEY, TYPE_URL_PREFIX, type AnyMessage } from './rpc-status.ts';
import type { ErrorCode } from '../../protocol/errors.ts';
import { stamped } from '../../log-line.ts';

// A Record over every ErrorCode, not a Partial: a new code does not compile until it has a status.
const GRPC_STATUS: Readonly<Record<ErrorCode, grpc.status>> = {
  invalid_argument: grpc.status.INVALID_ARGUMENT,
  payload_too_large: grpc.status.INVALID_ARGUMENT,
  unsupported_encoding: grpc.status.INVALID_ARGUMENT,
  unauthenticated: grpc.status.UNAUTHENTICATED,
  permission_denied: grpc.status.PERMISSION_DENIED,
  not_found: grpc.status.NOT_FOUND,
  method_not_allowed: grpc.status.UNIMPLEMENTED,
  already_exists: grpc.status.ALREADY_EXISTS,
  bucket_not_empty: grpc.status.ALREADY_EXISTS,
  trimmed: grpc.status.OUT_OF_RANGE,
  range_not_satisfiable: grpc.status.OUT_OF_RANGE,
  seq_mismatch: grpc.status.OUT_OF_RANGE,
  fence_mismatch: grpc.status.FAILED_PRECONDITION,
  resource_exhausted: grpc.status.RESOURCE_EXHAUSTED,
  unimplemented: grpc.status.UNIMPLEMENTED,
  sse_at_cap: grpc.status.UNAVAILABLE,
  unavailable: grpc.status.UNAVAILABLE,
  stream_deleted: grpc.status.FAILED_PRECONDITION,
  failed_precondition: grpc.status.FAILED_PRECONDITION,
  // Another star leads the stream: the leader's address rides in the metadata (toGrpcFailure).
  not_owner: grpc.status.FAILED_PRECONDITION,
  // Raised only by an HTTP transport's head checks; mapped so the table stays exhaustive.
  request_head_too_large: grpc.status.RESOURCE_EXHAUSTED,
  request_head_timeout: grpc.status.DEADLINE_EXCEEDED,
  internal: grpc.status.INTERNAL,
};

export function grpcStatusOf(code: ErrorCode): grpc.status {
  return GRPC_STATUS[code];
}

export const SEQUENCE_DETAIL_TYPE_URL = `${TYPE_URL_PREFIX}svc.v1.SequenceDetail`;
export const FENCE_DETAIL_TYPE_URL = `${TYPE_URL_PREFIX}svc.v1.FenceDetail`;
export const NOT_OWNER_DETAIL_TYPE_URL = `${TYPE_URL_PREFIX}svc.v1.NotOwnerDetail`;

/** What a grpc-js handler hands back for a failure (callback error or stream 'error'). */
export interface GrpcFailure {
  code: grpc.status;
  details: string;
  metadata: grpc.Metadata;
}

function detailsOf(err: ServiceError): AnyMessage[] {
  const { sequenceDetail, fenceDetail, notOwnerDetail } = loadSvcProto();
  const tail = err.detail.tail;
  if ((err.code === 'seq_mismatch' || err.code === 'range_not_satisfiable') && tail) {
    return [{ type_url: SEQUENCE_DETAIL_TYPE_URL, value: sequenceDetail.serialize({ tail }) }];
  }
  if (err.code === 'fence_mismatch') {
    return [{ type_url: FENCE_DETAIL_TYPE_URL, value: fenceDetail.serialize({ fencing_token: err.detail.fencing_token ?? '' }) }];
  }
  if (err.code === 'not_owner' && err.detail.leader) {
    return [{ type_url: NOT_OWNER_DETAIL_TYPE_URL, value: notOwnerDetail.serialize(err.detail.leader) }];
  }
  return [];
}

/** Any thrown value as a gRPC failure. A storage dependency away is UNAVAILABLE, as on HTTP (not
 *  logged per call: its health logs the outage once); anything else that is not a ServiceError is a
 *  bug: logged, INTERNAL. */
export function toGrpcFailure(thrown: unknown): GrpcFailure {
  const err = asServiceError(thrown);
  if (err.code === 'internal' && !(thrown instanceof ServiceError)) console.error(stamped('grpc: unmapped error (bug):'), thrown);
  const code = grpcStatusOf(err.code);
  const metadata = new grpc.Metadata();
  const details = detailsOf(err);
  if (details.length > 0) {
    metadata.set(STATUS_DETAILS_KEY, encodeRpcStatus({ code, message: err.message, details }));
  }
  const leader = err.code === 'not_owner' ? err.detail.leader : undefined;
  if (leader) {
    metadata.set('svcd-leader-star', leader.star_id);
    metadata.set('svcd-leader-grpc', leader.grpc_address);
    metadata.set('svcd-leader-bridge', leader.bridge_address);
  }
  return { code, details: leader ? `NOT_OWNER: ${err.message} at ${leader.grpc_address}` : err.message, metadata };
}

/** A failure with no ServiceError behind it (protocol misuse detected by the adapter itself). */
export function grpcFailure(code: grpc.status, details: string): GrpcFailure {
  return { code, details, metadata: new grpc.Metadata() };
}
