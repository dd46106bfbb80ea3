// DS rejections through the service's one error type. The protocol's statuses (409 conflict, 403
// stale producer epoch, 410 gone) are ServiceError codes whose HTTP status already is that number;
// this table is the one place a DS answer's status comes from, so a DS handler never picks a number.
// Some rejections carry protocol headers (Stream-Closed, Producer-Expected-Seq …): they ride beside
// the error in a WeakMap, never in its message.

import { ServiceError, asServiceError, type ErrorCode } from '../../core/errors.ts';
import { httpStatusOf } from '../http-status.ts';

/** A DS status per code; codes absent here answer their svcd HTTP status. */
const DS_STATUS: Partial<Record<ErrorCode, number>> = {
  invalid_argument: 400,
  payload_too_large: 413,
  not_found: 404,
  already_exists: 409,
  // match_seq_num misses never reach a DS caller (the lane retries them); one that does is a conflict.
  seq_mismatch: 409,
  permission_denied: 403,
  trimmed: 410,
};

const extraHeaders = new WeakMap<ServiceError, [string, string][]>();

export function dsError(code: ErrorCode, message: string, headers: [string, string][] = []): ServiceError {
  const e = new ServiceError(code, message);
  if (headers.length > 0) extraHeaders.set(e, headers);
  return e;
}

export const dsInvalid = (message: string): ServiceError => dsError('invalid_argument', message);
export const dsConflict = (message: string, headers: [string, string][] = []): ServiceError => dsError('already_exists', message, headers);
export const dsNotFound = (message = 'stream not found'): ServiceError => dsError('not_found', message);

export interface DsFailure {
  error: ServiceError;
  status: number;
  headers: [string, string][];
}

export function dsFailure(err: unknown): DsFailure {
  const error = asServiceError(err);
  return { error, status: DS_STATUS[error.code] ?? httpStatusOf(error.code), headers: extraHeaders.get(error) ?? [] };
}
