// The core's view of errors: the protocol leaf's one error type (src/protocol/errors.ts), and how a
// failure of a storage dependency becomes one.

import { MetadataUnavailableError } from '../storage/metadata/metadata-store.ts';
import { ObjectStoreUnavailableError } from '../storage/objects/object-store.ts';
import { ERROR_TABLE, ServiceError } from '../protocol/errors.ts';

export * from '../protocol/errors.ts';

/** Any thrown value as a ServiceError; unknown ones become `internal` (the caller logs them as bugs). */
export function asServiceError(err: unknown): ServiceError {
  if (err instanceof ServiceError && ERROR_TABLE[err.code] !== undefined) return err;
  // Not a bug: the metadata store is down (fail-stop). /readyz says so too; a balancer moves callers on.
  if (err instanceof MetadataUnavailableError) return new ServiceError('unavailable', 'the metadata store is unavailable; retry shortly');
  // Nor is an object store that does not answer: settled reads wait for it to come back.
  if (err instanceof ObjectStoreUnavailableError) return new ServiceError('unavailable', 'the object store is unavailable; retry shortly');
  return new ServiceError('internal', 'internal error');
}

/** Whether `err` (or what it wraps) is a storage dependency being away, which its health logs once an
 *  outage, rather than a failure of its own. */
export function isDependencyOutage(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (e instanceof MetadataUnavailableError || e instanceof ObjectStoreUnavailableError) return true;
  }
  return false;
}
