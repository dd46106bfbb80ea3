// ServiceError → gRPC status. The code comes from the service's one error table (err.grpcStatus);
// the two 412 variants add a typed detail, Any-packed into a google.rpc.Status in the
// `grpc-status-details-bin` trailer: svc.v1.SequenceDetail {tail} on a match_seq_num miss (and on
// a read past the tail), svc.v1.FenceDetail {fencing_token} on a fencing mismatch.

import * as grpc from '@grpc/grpc-js';
import { asServiceError, ServiceError } from '../../core/errors.ts';
import { loadSvcProto } from './proto.ts';
import { encodeRpcStatus, STATUS_DETAILS_KEY, TYPE_URL_PREFIX, type AnyMessage } from './rpc-status.ts';

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

/** Any thrown value as a gRPC failure. Values that are not ServiceErrors are bugs: logged, INTERNAL. */
export function toGrpcFailure(thrown: unknown): GrpcFailure {
  if (!(thrown instanceof ServiceError)) console.error('grpc: unmapped error (bug):', thrown);
  const err = asServiceError(thrown);
  const code = err.grpcStatus as grpc.status;
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
