// The JSON bodies of the HTTP surface (spec: Endpoints, Record, Errors): what a request sends and an
// answer holds, field names as on the wire. A byte field rides its plain name when it is UTF-8 text
// and its `_b64` sibling otherwise (with `format=base64`, base64 in the plain name). Part of the
// protocol leaf: the server writes these shapes and the client reads them. Answers not listed here
// are a resource itself (BucketInfo, a Stream as StreamJson, a Position, an AppendAck).

import type { Position } from './position.ts';
import type { BucketInfo, StreamInfo } from './resources.ts';

export interface JsonHeader {
  name?: string;
  name_b64?: string;
  value?: string;
  value_b64?: string;
}

/** A record an append sends: exactly one of body / body_b64. */
export interface JsonRecordInput {
  body?: string;
  body_b64?: string;
  headers?: JsonHeader[];
  timestamp_ms?: number;
}

/** A record a read or a subscription answers; `headers` is left out when there are none. */
export interface JsonRecord {
  seq_num: number;
  timestamp_ms: number;
  headers?: JsonHeader[];
  body?: string;
  body_b64?: string;
}

/** POST /v1/streams/{bucket}/{key}/records (the append envelope). */
export interface AppendRequest {
  records: JsonRecordInput[];
  match_seq_num?: number;
  fencing_token?: string;
}

/** GET …/records, and the data of an SSE batch frame (whose tail is the position after the batch). */
export interface ReadAnswer {
  records: JsonRecord[];
  tail: Position;
}

/** A stream as JSON: a key whose bytes are not UTF-8 rides `key_b64` in place of `key`. */
export type StreamJson<S extends StreamInfo = StreamInfo> = S | (Omit<S, 'key'> & { key_b64: string });

/** GET /v1/streams/{bucket}: `next` is the cursor to pass as start_after ('' when complete). */
export interface StreamsAnswer {
  streams: StreamJson[];
  next: string;
}

/** GET /v1/buckets. */
export interface BucketsAnswer {
  buckets: BucketInfo[];
  next: string;
}

/** POST …/trim: exactly one of the two. */
export interface TrimRequest {
  seq_num?: number;
  timestamp_ms?: number;
}

/** POST …/fence: an empty or absent token clears the fence. */
export interface FenceRequest {
  fencing_token?: string;
}

export interface FenceAnswer {
  tail: Position;
}

/** The error envelope. Two 412 variants add a machine field: `tail` on a match_seq_num miss,
 *  `fencing_token` on a fencing mismatch. */
export interface ErrorBody {
  error: string;
  tail?: Position;
  fencing_token?: string;
}
