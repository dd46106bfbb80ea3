// Typed errors. Every failure the client reports is an SvcError that says what happened (`kind`),
// the spec's wire code (`code`), the HTTP status or gRPC status when a server answered, whether a
// retry may succeed (`retryable`), whether the outcome is unknown (`ambiguous`: the request may have
// taken effect), and the machine details of the spec's two 412 variants (`tail`, `fencingToken`).
//
// The kind is decided from the status and the detail fields, never from the message text.

import type { Position } from './types.ts';

export type ErrorKind =
  | 'invalid_argument'
  | 'unauthenticated'
  | 'permission_denied'
  | 'not_found'
  | 'method_not_allowed'
  | 'already_exists'
  | 'bucket_not_empty'
  | 'trimmed'
  | 'range_not_satisfiable'
  | 'seq_mismatch'
  | 'fence_mismatch'
  | 'resource_exhausted'
  | 'unavailable'
  | 'unimplemented'
  | 'internal'
  /** The server ended a subscription or session because the token expired. */
  | 'auth_expired'
  /** No answer: connection refused, reset or cut mid-answer. */
  | 'connection'
  /** No answer within the client's own deadline. */
  | 'timeout'
  /** Cancelled by the caller's AbortSignal. */
  | 'aborted'
  /** The server's answer broke the protocol (unparseable, a gap in sequence numbers). */
  | 'protocol'
  /** A producer or session refused work because it had stopped. */
  | 'closed'
  /** Anything else the server answered. */
  | 'unknown';

/** The spec's wire code for each kind ('' where the spec names none). */
export const WIRE_CODE: Readonly<Record<ErrorKind, string>> = {
  invalid_argument: 'InvalidArgument',
  unauthenticated: 'Unauthenticated',
  permission_denied: 'PermissionDenied',
  not_found: 'NotFound',
  method_not_allowed: '',
  already_exists: 'AlreadyExists',
  bucket_not_empty: 'AlreadyExists',
  trimmed: 'OutOfRange',
  range_not_satisfiable: 'OutOfRange',
  seq_mismatch: 'OutOfRange',
  fence_mismatch: 'FailedPrecondition',
  resource_exhausted: 'ResourceExhausted',
  unavailable: 'Unavailable',
  unimplemented: 'Unimplemented',
  internal: 'Internal',
  auth_expired: 'DeadlineExceeded',
  connection: 'Unavailable',
  timeout: 'DeadlineExceeded',
  aborted: 'Cancelled',
  protocol: 'Internal',
  closed: 'FailedPrecondition',
  unknown: 'Unknown',
};

/** Kinds that are worth retrying (the spec's convergible answers, and no answer at all). Whether a
 *  retry is *safe* is a separate question: see `ambiguous`. */
const RETRYABLE: ReadonlySet<ErrorKind> = new Set<ErrorKind>(['resource_exhausted', 'unavailable', 'connection', 'timeout', 'auth_expired']);

export interface SvcErrorInit {
  status?: number;
  grpcStatus?: number;
  ambiguous?: boolean;
  tail?: Position;
  fencingToken?: string;
  retryAfterMs?: number;
  leader?: Leader;
  cause?: unknown;
}

/** The star that leads a stream, as a gRPC NOT_OWNER names it (NotOwnerDetail). */
export interface Leader { star_id: string; grpc_address: string; bridge_address: string }

export class SvcError extends Error {
  readonly kind: ErrorKind;
  /** The spec's wire code (InvalidArgument, OutOfRange, ...). */
  readonly code: string;
  /** HTTP status of the answer, when there was one. */
  readonly status: number | undefined;
  /** gRPC status code, when the error came over gRPC. */
  readonly grpcStatus: number | undefined;
  /** A retry may succeed (429, 503, no answer). */
  readonly retryable: boolean;
  /** The request may have taken effect: no answer, a timeout, or a 5xx to a write. */
  readonly ambiguous: boolean;
  /** seq_mismatch: the committed tail (tail.seq_num is the match_seq_num to try next); also a gRPC
   *  Read past the tail (range_not_satisfiable), whose OUT_OF_RANGE carries it. */
  readonly tail: Position | undefined;
  /** fence_mismatch: the installed fencing token. */
  readonly fencingToken: string | undefined;
  /** The server's Retry-After, in ms. */
  readonly retryAfterMs: number | undefined;
  /** gRPC NOT_OWNER (a cluster): the star that leads the stream; the call belongs there. */
  readonly leader: Leader | undefined;

  constructor(kind: ErrorKind, message: string, init: SvcErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'SvcError';
    this.kind = kind;
    this.code = WIRE_CODE[kind];
    this.status = init.status;
    this.grpcStatus = init.grpcStatus;
    this.retryable = RETRYABLE.has(kind);
    this.ambiguous = init.ambiguous ?? false;
    this.tail = init.tail;
    this.fencingToken = init.fencingToken;
    this.retryAfterMs = init.retryAfterMs;
    this.leader = init.leader;
  }
}

/** An append whose outcome is unknown (the batch may or may not be in the stream) and which the
 *  producer did not retry, because without match_seq_num a retry could duplicate it. */
export class AmbiguousAppendError extends SvcError {
  /** Records of the batch whose outcome is unknown. */
  readonly records: number;
  constructor(cause: SvcError, records: number) {
    super(cause.kind, `append outcome unknown (${cause.message}): the batch of ${records} records may or may not have been appended; ` +
      'it was not retried because without match_seq_num a retry could duplicate it. Read the tail and decide, or produce with match_seq_num',
    { status: cause.status, grpcStatus: cause.grpcStatus, ambiguous: true, cause });
    this.name = 'AmbiguousAppendError';
    this.records = records;
  }
}

export function isSvcError(err: unknown): err is SvcError {
  return err instanceof SvcError;
}

/** The error kind an HTTP error answer stands for. `conflictKind` resolves 409, whose meaning
 *  depends on the operation (a create: already exists; a bucket delete: not empty). */
export function kindOfStatus(status: number, body: { tail?: unknown; fencing_token?: unknown }, conflictKind: ErrorKind = 'already_exists'): ErrorKind {
  switch (status) {
    case 400: return 'invalid_argument';
    case 401: return 'unauthenticated';
    case 403: return 'permission_denied';
    case 404: return 'not_found';
    case 405: return 'method_not_allowed';
    case 409: return conflictKind;
    case 410: return 'trimmed';
    case 412: return body.fencing_token !== undefined ? 'fence_mismatch' : body.tail !== undefined ? 'seq_mismatch' : 'unknown';
    case 416: return 'range_not_satisfiable';
    case 429: return 'resource_exhausted';
    case 500: return 'internal';
    case 501: return 'unimplemented';
    case 502: case 503: case 504: return 'unavailable';
    default: return 'unknown';
  }
}

/** gRPC status codes (grpc's status.proto), so this module needs no gRPC SDK. */
export const GRPC = {
  CANCELLED: 1, UNKNOWN: 2, INVALID_ARGUMENT: 3, DEADLINE_EXCEEDED: 4, NOT_FOUND: 5, ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7, RESOURCE_EXHAUSTED: 8, FAILED_PRECONDITION: 9, ABORTED: 10, OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12, INTERNAL: 13, UNAVAILABLE: 14, DATA_LOSS: 15, UNAUTHENTICATED: 16,
} as const;

/** The error kind of a gRPC status; the typed details decide the two detail-carrying variants.
 *  OUT_OF_RANGE carries the tail both for an append's match_seq_num miss and for a Read past the
 *  tail (the server's Sequence detail), so `read` says which call failed: a read's is HTTP's 416. */
export function kindOfGrpc(code: number, detail: { tail?: Position; fencingToken?: string }, read = false): ErrorKind {
  switch (code) {
    case GRPC.INVALID_ARGUMENT: return 'invalid_argument';
    case GRPC.UNAUTHENTICATED: return 'unauthenticated';
    case GRPC.PERMISSION_DENIED: return 'permission_denied';
    case GRPC.NOT_FOUND: return 'not_found';
    case GRPC.ALREADY_EXISTS: return 'already_exists';
    case GRPC.OUT_OF_RANGE: return detail.tail === undefined ? 'trimmed' : read ? 'range_not_satisfiable' : 'seq_mismatch';
    case GRPC.FAILED_PRECONDITION: return detail.fencingToken !== undefined ? 'fence_mismatch' : 'unavailable';
    case GRPC.RESOURCE_EXHAUSTED: return 'resource_exhausted';
    case GRPC.UNAVAILABLE: case GRPC.ABORTED: return 'unavailable';
    case GRPC.UNIMPLEMENTED: return 'unimplemented';
    case GRPC.DEADLINE_EXCEEDED: return 'auth_expired';
    case GRPC.CANCELLED: return 'aborted';
    case GRPC.INTERNAL: case GRPC.DATA_LOSS: return 'internal';
    default: return 'unknown';
  }
}
