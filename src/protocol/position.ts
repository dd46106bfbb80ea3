// A position in a stream (spec: Position): the sequence number and the time of a record.
export interface Position {
  /** At a boundary (end, tail): one past the last committed record. */
  seq_num: number;
  /** Time of that record in ms; 0 when no record's time is known. */
  timestamp_ms: number;
}

/** A sequence number a request named, for a message: one past 2^53 - 1 arrived saturated there (the
 *  transports cannot hold it exactly), so the message says so instead of naming a value never sent. */
export function namedSeqText(n: number): string {
  return n >= Number.MAX_SAFE_INTEGER ? 'at or past 2^53-1' : String(n);
}
