// One error type for the whole service, and one table from its code to the spec's wire code name
// and retryability. Which status each transport answers is the transport's: api/http-status.ts and
// api/grpc/status-mapping.ts map every code; no handler picks a status number or reads a message.
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
  | 'unsupported_encoding'
  | 'request_head_too_large'
  | 'request_head_timeout'
  | 'internal';

interface CodeRow {
  /** The spec's wire code name. */
  wire: string;
  retryable: boolean;
}

export const ERROR_TABLE: Readonly<Record<ErrorCode, CodeRow>> = {
  invalid_argument: { wire: 'InvalidArgument', retryable: false },
  payload_too_large: { wire: 'InvalidArgument', retryable: false },
  // A request body in a content coding the service does not decode (Content-Encoding: gzip).
  unsupported_encoding: { wire: 'InvalidArgument', retryable: false },
  unauthenticated: { wire: 'Unauthenticated', retryable: false },
  permission_denied: { wire: 'PermissionDenied', retryable: false },
  not_found: { wire: 'NotFound', retryable: false },
  method_not_allowed: { wire: 'MethodNotAllowed', retryable: false },
  already_exists: { wire: 'AlreadyExists', retryable: false },
  // The spec's 409 is AlreadyExists on the wire. FailedPrecondition without a detail is its
  // convergible 503: a client told that would retry a delete that can never succeed.
  bucket_not_empty: { wire: 'AlreadyExists', retryable: false },
  trimmed: { wire: 'OutOfRange', retryable: false },
  range_not_satisfiable: { wire: 'OutOfRange', retryable: false },
  seq_mismatch: { wire: 'OutOfRange', retryable: false },
  fence_mismatch: { wire: 'FailedPrecondition', retryable: false },
  resource_exhausted: { wire: 'ResourceExhausted', retryable: true },
  unimplemented: { wire: 'Unimplemented', retryable: false },
  sse_at_cap: { wire: 'Unavailable', retryable: true },
  unavailable: { wire: 'Unavailable', retryable: true },
  stream_deleted: { wire: 'FailedPrecondition', retryable: true },
  failed_precondition: { wire: 'FailedPrecondition', retryable: true },
  // Another star leads the stream (detail.leader names it); each transport decides what its caller sees.
  not_owner: { wire: 'NotOwner', retryable: true },
  // A request head refused before any route saw it (only an HTTP transport raises these).
  request_head_too_large: { wire: 'InvalidArgument', retryable: false },
  request_head_timeout: { wire: 'InvalidArgument', retryable: true },
  internal: { wire: 'Internal', retryable: false },
};

export interface ErrorDetail {
  /** seq_mismatch (a match_seq_num miss) and range_not_satisfiable (a read past the tail): the committed tail. */
  tail?: Position;
  /** fencing mismatch: the installed token. */
  fencing_token?: string;
  /** method_not_allowed: the methods the path supports. */
  allow?: readonly string[];
  /** not_owner: the star that leads the stream, and where to reach it. */
  leader?: { star_id: string; bridge_address: string; grpc_address: string };
  /** not_owner: the stream it is about (a request that touches several streams, as a DS fork does,
   *  hops only for its own). */
  stream?: { bucket: string; key: string };
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

  get retryable(): boolean { return ERROR_TABLE[this.code].retryable; }

  /** The spec's error envelope: {error} plus the one machine field the code carries, and only
   *  there: `tail` on a match_seq_num miss (a read past the tail, 416, has the tail in its detail for
   *  gRPC's status, not in the HTTP envelope, which the spec gives `tail` only on the 412). */
  toBody(): ErrorBody {
    const body: ErrorBody = { error: this.message };
    if (this.code === 'seq_mismatch') body.tail = this.detail.tail;
    if (this.code === 'fence_mismatch') body.fencing_token = this.detail.fencing_token ?? '';
    return body;
  }
}

export const invalid = (message: string): ServiceError => new ServiceError('invalid_argument', message);
export const notFound = (message: string): ServiceError => new ServiceError('not_found', message);
/** An append whose caller's credential expired (its exp is the request's deadline) before it was
 *  sequenced: nothing was written, so a retry with a fresh token is safe. */
export const credentialExpired = (): ServiceError =>
  new ServiceError('unauthenticated', 'credential expired (exp) before the append was sequenced; nothing was written: refresh the token and retry');

/** Any thrown value as a ServiceError; unknown ones become `internal` (the caller logs them as bugs).
 *  The core's asServiceError also knows the storage dependencies' failures. */
export function orInternal(err: unknown): ServiceError {
  if (err instanceof ServiceError && ERROR_TABLE[err.code] !== undefined) return err;
  return new ServiceError('internal', 'internal error');
}
