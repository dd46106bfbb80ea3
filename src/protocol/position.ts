// A position in a stream (spec: Position): the sequence number and the time of a record.
export interface Position {
  /** At a boundary (end, tail): one past the last committed record. */
  seq_num: number;
  /** Time of that record in ms; 0 when no record's time is known. */
  timestamp_ms: number;
}
