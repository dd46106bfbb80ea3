// One error type for the whole service, and one table from its code to the HTTP status, the gRPC
// status and retryability. No handler picks a status number or reads an error's message.
//
// Part of the protocol leaf (src/protocol/): it imports nothing outside it, so the Gateway, auth,
// the workers and the client can use the service's errors without importing the core.

import type { ErrorBody } from './json.ts';
import { showRawBytes } from './key-bytes.ts';
import type { Position } from './position.ts';

export type ErrorCode =
  | 'invalid_argument'
  | 'unauthenticated'
  | 'permission_denied'
  | 'not_found'
  | 'method_not_allowed'
  | 'already_exists'
  | 'trimmed'
  | 'range_not_satisfiable'
  | 'seq_mismatch'
  | 'fence_mismatch'
  | 'bucket_not_empty'
  | 'resource_exhausted'
  | 'sse_at_cap'
  | 'unimplemented'
  | 'unavailable'
  | 'stream_deleted'
  | 'failed_precondition'
  | 'not_owner'
  | 'payload_too_large'
  | 'request_head_too_large'
  | 'request_head_timeout'
  | 'internal';

/** gRPC status codes (numeric values from grpc's status.proto), kept here so core needs no gRPC SDK. */
export const GrpcStatus = {
  OK: 0, CANCELLED: 1, UNKNOWN: 2, INVALID_ARGUMENT: 3, DEADLINE_EXCEEDED: 4, NOT_FOUND: 5,
  ALREADY_EXISTS: 6, PERMISSION_DENIED: 7, RESOURCE_EXHAUSTED: 8, FAILED_PRECONDITION: 9, ABORTED: 10,
  OUT_OF_RANGE: 11, UNIMPLEMENTED: 12, INTERNAL: 13, UNAVAILABLE: 14, DATA_LOSS: 15, UNAUTHENTICATED: 16,
} as const;

interface CodeRow {
  http: number;
  grpc: number;
  /** The spec's wire code name. */
  wire: string;
  retryable: boolean;
}

export const ERROR_TABLE: Readonly<Record<ErrorCode, CodeRow>> = {
  invalid_argument: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT, wire: 'InvalidArgument', retryable: false },
  payload_too_large: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT, wire: 'InvalidArgument', retryable: false },
  unauthenticated: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED, wire: 'Unauthenticated', retryable: false },
  permission_denied: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED, wire: 'PermissionDenied', retryable: false },
  not_found: { http: 404, grpc: GrpcStatus.NOT_FOUND, wire: 'NotFound', retryable: false },
  method_not_allowed: { http: 405, grpc: GrpcStatus.UNIMPLEMENTED, wire: 'MethodNotAllowed', retryable: false },
  already_exists: { http: 409, grpc: GrpcStatus.ALREADY_EXISTS, wire: 'AlreadyExists', retryable: false },
  bucket_not_empty: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION, wire: 'FailedPrecondition', retryable: false },
  trimmed: { http: 410, grpc: GrpcStatus.OUT_OF_RANGE, wire: 'OutOfRange', retryable: false },
  range_not_satisfiable: { http: 416, grpc: GrpcStatus.OUT_OF_RANGE, wire: 'OutOfRange', retryable: false },
  seq_mismatch: { http: 412, grpc: GrpcStatus.OUT_OF_RANGE, wire: 'OutOfRange', retryable: false },
  fence_mismatch: { http: 412, grpc: GrpcStatus.FAILED_PRECONDITION, wire: 'FailedPrecondition', retryable: false },
  resource_exhausted: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED, wire: 'ResourceExhausted', retryable: true },
  unimplemented: { http: 501, grpc: GrpcStatus.UNIMPLEMENTED, wire: 'Unimplemented', retryable: false },
  sse_at_cap: { http: 503, grpc: GrpcStatus.UNAVAILABLE, wire: 'Unavailable', retryable: true },
  unavailable: { http: 503, grpc: GrpcStatus.UNAVAILABLE, wire: 'Unavailable', retryable: true },
  stream_deleted: { http: 503, grpc: GrpcStatus.FAILED_PRECONDITION, wire: 'FailedPrecondition', retryable: true },
  failed_precondition: { http: 503, grpc: GrpcStatus.FAILED_PRECONDITION, wire: 'FailedPrecondition', retryable: true },
  // Another star leads the stream. HTTP callers never see it (the bridge hops to the leader; a hop that
  // finds the lease moved again answers 503); gRPC callers get the leader's address in the metadata.
  not_owner: { http: 503, grpc: GrpcStatus.FAILED_PRECONDITION, wire: 'NotOwner', retryable: true },
  // A request head refused before any route saw it (only an HTTP transport raises these).
  request_head_too_large: { http: 431, grpc: GrpcStatus.RESOURCE_EXHAUSTED, wire: 'InvalidArgument', retryable: false },
  request_head_timeout: { http: 408, grpc: GrpcStatus.DEADLINE_EXCEEDED, wire: 'InvalidArgument', retryable: true },
  internal: { http: 500, grpc: GrpcStatus.INTERNAL, wire: 'Internal', retryable: false },
};

export interface ErrorDetail {
  /** match_seq_num miss, and 416 past the tail: the committed tail. */
  tail?: Position;
  /** fencing mismatch: the installed token. */
  fencing_token?: string;
  /** 405: the methods the path supports. */
  allow?: readonly string[];
  /** not_owner: the star that leads the stream, and where to reach it. */
  leader?: { star_id: string; bridge_address: string; grpc_address: string };
}

export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly detail: ErrorDetail;

  constructor(code: ErrorCode, message: string, detail: ErrorDetail = {}) {
    // A message may quote a key holding raw bytes (key-bytes.ts): show them as \xHH, so it
    // stays well-formed text on every wire (gRPC's grpc-message header cannot carry lone surrogates).
    super(message.isWellFormed() ? message : showRawBytes(message));
    this.name = 'ServiceError';
    this.code = code;
    this.detail = detail;
  }

  get httpStatus(): number { return ERROR_TABLE[this.code].http; }
  get grpcStatus(): number { return ERROR_TABLE[this.code].grpc; }
  get retryable(): boolean { return ERROR_TABLE[this.code].retryable; }

  /** The spec's error envelope: {error} plus the one machine field the code carries. */
  toBody(): ErrorBody {
    const body: ErrorBody = { error: this.message };
    if (this.code === 'seq_mismatch' || this.code === 'range_not_satisfiable') body.tail = this.detail.tail;
    if (this.code === 'fence_mismatch') body.fencing_token = this.detail.fencing_token ?? '';
    return body;
  }
}

export const invalid = (message: string): ServiceError => new ServiceError('invalid_argument', message);
export const notFound = (message: string): ServiceError => new ServiceError('not_found', message);

/** Any thrown value as a ServiceError; unknown ones become `internal` (the caller logs them as bugs).
 *  The core's asServiceError also knows the storage dependencies' failures. */
export function orInternal(err: unknown): ServiceError {
  if (err instanceof ServiceError && ERROR_TABLE[err.code] !== undefined) return err;
  return new ServiceError('internal', 'internal error');
}
