// Invariant assertions stay on in production (issue 16): a batch committed anywhere but at the
// stream's tail is refused loudly instead of being served at positions another batch holds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StreamState, heldBatch } from '../../src/core/stream-state.ts';
import { InvariantError } from '../../src/core/invariant.ts';
import { DEFAULT_BUCKET_CONFIG, streamDefaultsOf } from '../../src/core/types.ts';

function stream(): StreamState {
  const meta = {
    stream_id: '00000000-0000-4000-8000-000000000001', bucket: 'b', key: 'k', config: {}, created_at_unix_ms: 0, creation_token: '',
    fencing_token: '', trim_seq: 0, settled_end_seq: 0, settled_end_ts: 0, segments: [],
  };
  return new StreamState(meta, streamDefaultsOf(DEFAULT_BUCKET_CONFIG));
}

const batch = (firstSeq: number, count: number) => heldBatch({ firstSeq, count, frame: Buffer.alloc(0), maxTs: 1, contentBytes: 0 }, 1);

test('batches commit at the tail, in order', () => {
  const st = stream();
  st.commitBatch(batch(0, 2));
  st.commitBatch(batch(2, 1));
  assert.equal(st.tail, 3);
});

test('a batch past the tail (a gap), below it (an overlap) or empty breaks the invariant', () => {
  const st = stream();
  st.commitBatch(batch(0, 2));
  assert.throws(() => st.commitBatch(batch(3, 1)), InvariantError);
  assert.throws(() => st.commitBatch(batch(1, 1)), InvariantError);
  assert.throws(() => st.commitBatch(batch(2, 0)), InvariantError);
  assert.equal(st.tail, 2, 'nothing was committed');
});
