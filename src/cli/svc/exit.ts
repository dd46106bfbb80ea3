// Exit codes that scripts can trust, and the one-line message for each failure.

import { AddressError, SvcError } from '../../client/index.ts';
import { FlagError } from '../../config/flags.ts';
import { InputError } from './format.ts';

export const EXIT = {
  OK: 0,
  /** The server answered and refused (4xx, 5xx other than "no answer"). */
  REFUSED: 1,
  /** Bad flags, arguments, address or input data. Nothing was sent, but for the records before a
   *  bad input line of an append, which were appended (a note says up to which seq_num). */
  USAGE: 2,
  /** The server could not be reached or did not answer; nothing happened. */
  UNREACHABLE: 3,
  /** The outcome is unknown: an append may or may not have landed. */
  AMBIGUOUS: 4,
  /** Interrupted (SIGINT). */
  INTERRUPTED: 130,
} as const;

export const EXIT_HELP = [
  'Exit codes:',
  '  0    success',
  '  1    the server refused the request (the message says why: not found, conflict, ...)',
  '  2    usage error: bad flags, arguments, address or input data; nothing was sent (an append',
  '       sends the records before a bad input line, and says up to which seq_num they landed)',
  '  3    the server could not be reached or did not answer in time',
  '  4    outcome unknown: an append may or may not have landed (retry with --match-seq-num to make it exact)',
  '  130  interrupted',
].join('\n');

export interface Failure {
  code: number;
  message: string;
  json: Record<string, unknown>;
}

/** The exit code and one-line message for anything a command threw. */
export function describeFailure(err: unknown): Failure {
  if (err instanceof FlagError || err instanceof AddressError || err instanceof InputError) {
    return { code: EXIT.USAGE, message: err.message, json: { error: err.message, kind: 'usage' } };
  }
  if (err instanceof SvcError) {
    const json: Record<string, unknown> = { error: err.message, kind: err.kind, code: err.code, ambiguous: err.ambiguous, retryable: err.retryable };
    if (err.status !== undefined) json.status = err.status;
    if (err.tail) json.tail = err.tail;
    if (err.fencingToken !== undefined) json.fencing_token = err.fencingToken;
    let code: number = EXIT.REFUSED;
    if (err.ambiguous) code = EXIT.AMBIGUOUS;
    else if (err.kind === 'connection' || err.kind === 'timeout') code = EXIT.UNREACHABLE;
    else if (err.kind === 'aborted') code = EXIT.INTERRUPTED;
    let message = err.message;
    if (err.kind === 'seq_mismatch' && err.tail) message += ` (tail ${err.tail.seq_num})`;
    if (err.kind === 'fence_mismatch') message += ` (installed fencing token ${JSON.stringify(err.fencingToken ?? '')})`;
    return { code, message, json };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { code: EXIT.REFUSED, message: `unexpected error: ${message}`, json: { error: message, kind: 'internal' } };
}
