// A packed stream row unpacks to the row it was packed from, whatever its config, key or segment names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { packRow, packedHasSegments, packedStreamId, unpackRow, unpackRowHead } from '../../src/storage/metadata/packed-row.ts';
import type { StreamMeta } from '../../src/storage/metadata/metadata-store.ts';
import { segmentKey } from '../../src/storage/segments/segment-key.ts';

const config = {
  class: 'standard', producer_policy: 'any', retention_max_age_ms: 0, retention_max_bytes: 0, batch_max_bytes: 1048576,
  batch_max_records: 1000, batch_max_delay_ms: 0, throughput_max_bytes_per_second: 0, timestamping_mode: 'client-prefer', timestamping_uncapped: false,
};
const seg = (id: string, first: number, end: number, objectKey = segmentKey(id, first, end)) => ({
  object_key: objectKey, first_seq: first, end_seq: end, min_ts: 1764168000000 + first, max_ts: 1764168000000 + end,
  content_bytes: 100 * (end - first), size_bytes: 150 * (end - first), footer_offset: 140 * (end - first), footer_bytes: 10,
});
const row = (over: Partial<StreamMeta> = {}): StreamMeta => ({
  stream_id: '0f8fad5b-d9cb-469f-a165-70867728950e', bucket: 'shop', key: 'orders', config, created_at_unix_ms: 1764168000000,
  creation_token: 'tok', fencing_token: 'fence-1', trim_seq: 4, settled_end_seq: 30, settled_end_ts: 1764168000030,
  segments: [seg('0f8fad5b-d9cb-469f-a165-70867728950e', 0, 10), seg('0f8fad5b-d9cb-469f-a165-70867728950e', 10, 30)], ...over,
});

test('a row round-trips, and its key order does not matter', () => {
  for (const r of [
    row(),
    row({ segments: [], settled_end_seq: 0, settled_end_ts: 0 }),
    row({ key: 'a\u0000b/€\ud83d\ude00', creation_token: '"quoted",\\' }),
    row({ config: { ...config, class: 'express', retention_max_age_ms: 86_400_000 } }),
    row({ config: { class: 'standard' } }), // a config with other keys is kept as it is
    row({ config: { ...config, from_the_future: 1 } }),
    row({ segments: [seg('0f8fad5b-d9cb-469f-a165-70867728950e', 0, 10, 'streams/0f8fad5b-d9cb-469f-a165-70867728950e/00000000000000000000.seg')] }),
  ]) {
    const packed = packRow(r);
    assert.deepEqual(unpackRow(r.bucket, r.key, packed), r);
    assert.deepEqual(unpackRowHead(r.bucket, r.key, packed), { stream_id: r.stream_id, bucket: r.bucket, key: r.key, config: r.config, created_at_unix_ms: r.created_at_unix_ms });
    assert.equal(packedStreamId(packed), r.stream_id);
    assert.equal(packedHasSegments(packed), r.segments.length > 0);
  }
});

test('packed, a row is a fraction of its JSON: the default object key and the config key names are left out', () => {
  const r = row();
  const packed = packRow(r);
  assert.ok(!packed.includes('streams/'), packed);
  assert.ok(!packed.includes('batch_max_bytes'), packed);
  assert.ok(packed.length * 2 < JSON.stringify(r).length, `${packed.length} against ${JSON.stringify(r).length}`);
});

test('an id holding quotes and commas is still found', () => {
  for (const id of ['a",b', 'a\\",x', 'plain', 'x\\']) {
    const packed = packRow(row({ stream_id: id, segments: [] }));
    assert.equal(packedStreamId(packed), id);
  }
});

test('a config packed under a shorter key list (before a key was added) unpacks without the new keys', () => {
  const packed = packRow(row());
  // The same row as an older star would have packed it, knowing one key less.
  const fields = JSON.parse(packed) as unknown[];
  fields[1] = (fields[1] as unknown[]).slice(0, -1);
  const { timestamping_uncapped: _dropped, ...older } = config;
  assert.deepEqual(unpackRow('shop', 'orders', JSON.stringify(fields)).config, older);
});
