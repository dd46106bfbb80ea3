// ErrorCode → HTTP status: the one place an HTTP answer's status comes from (the data plane, the
// uWS and node:http head refusals, the admin bridge, the Gateway's own answers; the DS protocol
// overrides a few in api/ds/errors.ts). The protocol leaf says what a code means and whether it is
// retryable; which number each transport puts on the wire is the transport's business.
//
// Imports only the leaf, so the Gateway (an HTTP transport that must not import core/) can use it.

import type { ErrorCode } from '../protocol/errors.ts';

// A Record over every ErrorCode, not a Partial: a new code does not compile until it has a status.
const HTTP_STATUS: Readonly<Record<ErrorCode, number>> = {
  invalid_argument: 400,
  // The spec answers a body over a cap with 400 InvalidArgument (the DS protocol's 413 is in api/ds/errors.ts).
  payload_too_large: 400,
  // RFC 9110 15.5.16: a content coding the server does not accept is 415, with Accept-Encoding.
  unsupported_encoding: 415,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  method_not_allowed: 405,
  already_exists: 409,
  bucket_not_empty: 409,
  trimmed: 410,
  range_not_satisfiable: 416,
  seq_mismatch: 412,
  fence_mismatch: 412,
  resource_exhausted: 429,
  unimplemented: 501,
  sse_at_cap: 503,
  unavailable: 503,
  stream_deleted: 503,
  failed_precondition: 503,
  // Another star leads the stream. HTTP callers never see it: the bridge hops to the leader, and a
  // hop that finds the lease moved again answers 503.
  not_owner: 503,
  // A request head refused before any route saw it (only an HTTP transport raises these).
  request_head_too_large: 431,
  request_head_timeout: 408,
  internal: 500,
};

export function httpStatusOf(code: ErrorCode): number {
  return HTTP_STATUS[code];
}
