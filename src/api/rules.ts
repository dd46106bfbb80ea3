// Input rules every transport applies the same way (HTTP in routes.ts/wire.ts, gRPC in grpc/convert.ts):
// bucket names, key sizes, listing cursors and the Limits table's caps on a batch.

import { keyFromBytes, keyToBytes } from '../storage/format/key-bytes.ts';
import {
  APPEND_RECORDS_MAX, BATCH_CONTENT_BYTES_MAX, BUCKET_NAME_BYTES_MAX, RECORD_CONTENT_BYTES_MAX,
  RECORD_HEADERS_MAX, STREAM_KEY_BYTES_MAX,
} from '../config/limits.ts';
import { invalid } from '../core/errors.ts';
import type { RecordInput } from '../core/types.ts';

const BUCKET_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** Reserved by the Gateway's `api.{zone}` host: never a bucket. */
const RESERVED_BUCKET = 'api';

export function checkBucketName(name: string): string {
  if (name === '' || Buffer.byteLength(name) > BUCKET_NAME_BYTES_MAX || !BUCKET_NAME_RE.test(name)) {
    throw invalid(`bucket names are 1-${BUCKET_NAME_BYTES_MAX} characters of A-Z a-z 0-9 . _ - starting with a letter or digit`);
  }
  return name;
}

/** A name for a bucket about to be created: also not the reserved one. */
export function checkNewBucketName(name: string): string {
  checkBucketName(name);
  if (name === RESERVED_BUCKET) throw invalid('the bucket name api is reserved');
  return name;
}

export function checkKey(key: string): string {
  if (key === '') throw invalid('key is required');
  // At most 3 bytes per UTF-16 unit (an escaped byte is 1): a short key cannot be over the limit.
  if (key.length * 3 > STREAM_KEY_BYTES_MAX && keyToBytes(key).length > STREAM_KEY_BYTES_MAX) {
    throw invalid(`a key is at most ${STREAM_KEY_BYTES_MAX} bytes`);
  }
  return key;
}

/** Stream listing cursors are opaque base64url strings of the last key's bytes. */
export const encodeStreamCursor = (key: string): string => (key === '' ? '' : keyToBytes(key).toString('base64url'));

export function decodeStreamCursor(c: string | null): string {
  if (c === null || c === '') return '';
  if (!/^[A-Za-z0-9_-]+$/.test(c)) throw invalid('start_after is not a valid cursor');
  return keyFromBytes(Buffer.from(c, 'base64url'));
}

/** The Limits table on one batch: record count, headers per record, content per record and per
 *  batch, timestamps. Returns the batch's content bytes (bodies plus header names and values). */
export function checkBatch(records: readonly RecordInput[]): number {
  if (records.length === 0) throw invalid('records must be a non-empty array');
  if (records.length > APPEND_RECORDS_MAX) throw invalid(`a batch holds at most ${APPEND_RECORDS_MAX} records`);
  let total = 0;
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    if (r.headers.length > RECORD_HEADERS_MAX) throw invalid(`records[${i}] has more than ${RECORD_HEADERS_MAX} headers`);
    let content = r.body.length;
    for (const h of r.headers) content += h.name.length + h.value.length;
    if (content > RECORD_CONTENT_BYTES_MAX) throw invalid(`records[${i}] is over the ${RECORD_CONTENT_BYTES_MAX}-byte record limit`);
    if (r.timestamp_ms !== undefined && (!Number.isSafeInteger(r.timestamp_ms) || r.timestamp_ms < 0)) {
      throw invalid(`records[${i}].timestamp_ms must be a non-negative integer`);
    }
    total += content;
  }
  if (total > BATCH_CONTENT_BYTES_MAX) throw invalid(`the batch is over the ${BATCH_CONTENT_BYTES_MAX}-byte limit`);
  return total;
}
