// Piscina tasks: parse, validate and encode a large append (an HTTP body's JSON, a gRPC message) off
// the event loop. The result is one binary frame plus each record's offset and client timestamp
// (three flat buffers: cloning them is a memcpy), so the sequencer only patches timestamps, stream id
// and seq_num in place. Returning the decoded records instead would cost the main thread more to
// clone than parsing inline (see bench/parse-threshold.ts). Errors come back as data: a
// ServiceError's class does not survive the thread boundary. (Piscina's transfer markers are symbols
// of its own module instance, which a task loaded through tsx does not share, so nothing is
// transferred.)

import { wholeRecords, type GrpcAppendMessage } from '../api/grpc/append-decode.ts';
import { recordsFromWire } from '../api/grpc/convert.ts';
import { decodeAppend } from '../api/wire.ts';
import { ServiceError } from '../protocol/errors.ts';
import type { RecordInput } from '../protocol/records.ts';
import { contentBytes, encodeBatch } from '../storage/format/record-codec.ts';

const PLACEHOLDER_STREAM_ID = '00000000-0000-0000-0000-000000000000';

export interface ParsedAppend {
  frame: Uint8Array;
  recordOffsets: Uint32Array;
  clientTs: Float64Array;
  contentBytes: number;
  match_seq_num?: number;
  fencing_token?: string;
}

export type ParseResult = { ok: true; parsed: ParsedAppend } | { ok: false; code: ServiceError['code']; message: string };

/** An HTTP append body (JSON). */
export function parseAppend(body: Uint8Array): ParseResult {
  let input;
  try {
    input = decodeAppend(body);
  } catch (err) {
    if (err instanceof ServiceError) return { ok: false, code: err.code, message: err.message };
    return { ok: false, code: 'invalid_argument', message: 'malformed append body' };
  }
  const parsed = encodeRecords(input.records);
  if (input.match_seq_num !== undefined) parsed.match_seq_num = input.match_seq_num;
  if (input.fencing_token !== undefined) parsed.fencing_token = input.fencing_token;
  return { ok: true, parsed };
}

/** A gRPC append message for a parse worker. */
export interface GrpcAppendTask {
  bytes: Uint8Array;
  message: GrpcAppendMessage;
}

/** A gRPC append message's records (api/grpc/append-decode.ts, the decoder the main thread uses for
 *  smaller ones, and the same checks). Its address, match_seq_num and fencing token the main thread
 *  read already. */
export function parseGrpcAppend(task: GrpcAppendTask): ParseResult {
  const bytes = Buffer.from(task.bytes.buffer, task.bytes.byteOffset, task.bytes.byteLength);
  try {
    return { ok: true, parsed: encodeRecords(recordsFromWire(wholeRecords(bytes, task.message)).records) };
  } catch (err) {
    if (err instanceof ServiceError) return { ok: false, code: err.code, message: err.message };
    throw err;
  }
}

function encodeRecords(records: RecordInput[]): ParsedAppend {
  const n = records.length;
  const recordOffsets = new Uint32Array(n);
  const clientTs = new Float64Array(n);
  let content = 0;
  const coded = records.map((r, i) => {
    clientTs[i] = r.timestamp_ms ?? Number.NaN;
    const c = { timestamp_ms: 0, headers: r.headers, body: r.body };
    content += contentBytes(c);
    return c;
  });
  const frame = encodeBatch(PLACEHOLDER_STREAM_ID, 0, coded, recordOffsets);
  return { frame, recordOffsets, clientTs, contentBytes: content };
}
