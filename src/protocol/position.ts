// A position in a stream (spec: Position): the sequence number and the time of a record.
export interface Position {
  seq_num: number;
  timestamp_ms: number;
}
