// Records and what an append answers, transport-neutral (spec: Record, Header, Append envelope):
// bytes are Uint8Array here. The JSON surface carries them as text or base64 (json.ts), gRPC as
// bytes fields; every transport decodes into these shapes and the core works on them. Part of the
// protocol leaf: the browser-safe client hands out the same shapes.

import type { Position } from './position.ts';

export interface Header {
  name: Uint8Array;
  value: Uint8Array;
}

/** A record as a producer hands it in, already decoded from its wire form. */
export interface RecordInput {
  timestamp_ms?: number;
  headers: Header[];
  body: Uint8Array;
}

/** A committed record. */
export interface SequencedRecord {
  seq_num: number;
  timestamp_ms: number;
  headers: Header[];
  body: Uint8Array;
}

/** The outcome of one durable batch. */
export interface AppendAck {
  /** First appended record (inclusive). */
  start: Position;
  /** One past the last (exclusive). */
  end: Position;
  /** Committed tail, at least `end` (greater when concurrent producers landed behind). */
  tail: Position;
}

/** A read's page: the records and the tail as of the read. */
export interface RecordPage {
  records: SequencedRecord[];
  tail: Position;
}

/** Content bytes of a record as the limits count them: body plus header names and values. */
export function contentBytes(r: { body: Uint8Array; headers: readonly Header[] }): number {
  let n = r.body.length;
  for (const h of r.headers) n += h.name.length + h.value.length;
  return n;
}
