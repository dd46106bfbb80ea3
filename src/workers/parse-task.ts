// Piscina task: parse and validate a large append body off the event loop. Errors come back as
// data (a ServiceError's class does not survive the thread boundary).

import { decodeAppend } from '../api/wire.ts';
import { ServiceError } from '../core/errors.ts';
import type { AppendInput } from '../core/types.ts';

export type ParseResult = { ok: true; input: AppendInput } | { ok: false; code: ServiceError['code']; message: string };

export function parseAppend(body: Uint8Array): ParseResult {
  try {
    return { ok: true, input: decodeAppend(body) };
  } catch (err) {
    if (err instanceof ServiceError) return { ok: false, code: err.code, message: err.message };
    return { ok: false, code: 'invalid_argument', message: 'malformed append body' };
  }
}
