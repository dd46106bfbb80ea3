// Each transport's status per ErrorCode, against a literal copy of the table the protocol leaf held
// before the statuses moved to api/ (http-status.ts, grpc/status-mapping.ts). A changed number here is
// a changed answer on the wire, so it must be deliberate: edit this table with the mapping.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import * as leafErrors from '../../src/protocol/errors.ts';
import { ERROR_TABLE, ServiceError, type ErrorCode } from '../../src/protocol/errors.ts';
import { httpStatusOf } from '../../src/api/http-status.ts';
import { grpcStatusOf } from '../../src/api/grpc/status-mapping.ts';
import { REPO_ROOT } from '../helpers/server.ts';

/** gRPC numbers as in grpc's status.proto, written out so the SDK's enum is checked too. */
const EXPECTED: Readonly<Record<ErrorCode, { http: number; grpc: number; wire: string; retryable: boolean }>> = {
  invalid_argument: { http: 400, grpc: 3, wire: 'InvalidArgument', retryable: false },
  payload_too_large: { http: 400, grpc: 3, wire: 'InvalidArgument', retryable: false },
  unsupported_encoding: { http: 415, grpc: 3, wire: 'InvalidArgument', retryable: false },
  unauthenticated: { http: 401, grpc: 16, wire: 'Unauthenticated', retryable: false },
  permission_denied: { http: 403, grpc: 7, wire: 'PermissionDenied', retryable: false },
  not_found: { http: 404, grpc: 5, wire: 'NotFound', retryable: false },
  method_not_allowed: { http: 405, grpc: 12, wire: 'MethodNotAllowed', retryable: false },
  already_exists: { http: 409, grpc: 6, wire: 'AlreadyExists', retryable: false },
  bucket_not_empty: { http: 409, grpc: 6, wire: 'AlreadyExists', retryable: false },
  trimmed: { http: 410, grpc: 11, wire: 'OutOfRange', retryable: false },
  range_not_satisfiable: { http: 416, grpc: 11, wire: 'OutOfRange', retryable: false },
  seq_mismatch: { http: 412, grpc: 11, wire: 'OutOfRange', retryable: false },
  fence_mismatch: { http: 412, grpc: 9, wire: 'FailedPrecondition', retryable: false },
  resource_exhausted: { http: 429, grpc: 8, wire: 'ResourceExhausted', retryable: true },
  unimplemented: { http: 501, grpc: 12, wire: 'Unimplemented', retryable: false },
  sse_at_cap: { http: 503, grpc: 14, wire: 'Unavailable', retryable: true },
  unavailable: { http: 503, grpc: 14, wire: 'Unavailable', retryable: true },
  stream_deleted: { http: 503, grpc: 9, wire: 'FailedPrecondition', retryable: true },
  failed_precondition: { http: 503, grpc: 9, wire: 'FailedPrecondition', retryable: true },
  not_owner: { http: 503, grpc: 9, wire: 'NotOwner', retryable: true },
  request_head_too_large: { http: 431, grpc: 8, wire: 'InvalidArgument', retryable: false },
  request_head_timeout: { http: 408, grpc: 4, wire: 'InvalidArgument', retryable: true },
  internal: { http: 500, grpc: 13, wire: 'Internal', retryable: false },
};

const codes = Object.keys(EXPECTED) as ErrorCode[];

test('the expected table covers exactly the leaf\'s codes', () => {
  assert.deepEqual(Object.keys(ERROR_TABLE).sort(), [...codes].sort());
});

test('every code keeps its HTTP status', () => {
  assert.deepEqual(Object.fromEntries(codes.map((c) => [c, httpStatusOf(c)])), Object.fromEntries(codes.map((c) => [c, EXPECTED[c].http])));
});

test('every code keeps its gRPC status', () => {
  assert.deepEqual(Object.fromEntries(codes.map((c) => [c, grpcStatusOf(c)])), Object.fromEntries(codes.map((c) => [c, EXPECTED[c].grpc])));
});

test('every code keeps its wire name and retryability in the leaf', () => {
  assert.deepEqual(Object.fromEntries(codes.map((c) => [c, { wire: ERROR_TABLE[c].wire, retryable: ERROR_TABLE[c].retryable }])),
    Object.fromEntries(codes.map((c) => [c, { wire: EXPECTED[c].wire, retryable: EXPECTED[c].retryable }])));
});

test('the protocol leaf\'s errors carry no transport status', () => {
  const err = new ServiceError('not_found', 'x');
  assert.equal('httpStatus' in err, false);
  assert.equal('grpcStatus' in err, false);
  assert.equal('GrpcStatus' in leafErrors, false);
  for (const c of codes) assert.deepEqual(Object.keys(ERROR_TABLE[c]).sort(), ['retryable', 'wire'], c);
  // The code itself, comments aside: no status number and no status field or table. Comments may
  // still name a transport to point at where its table lives.
  const file = join(REPO_ROOT, 'src', 'protocol', 'errors.ts');
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const code = ts.createPrinter({ removeComments: true }).printFile(sf);
  assert.doesNotMatch(code, /\b[1-5]\d\d\b/);
  assert.doesNotMatch(code, /(http|grpc)_?status|\b(http|grpc)\s*:/i);
});
