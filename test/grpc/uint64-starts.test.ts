// Read starts over gRPC take every uint64 (issue 14, as over HTTP): a seq_num past 2^53 (up to
// 2^64-1) is a start past the tail, OUT_OF_RANGE with the SequenceDetail tail, or the tail under
// clamp; an offset that large reaches back to the earliest record; int64 times at their extremes
// read nothing or everything. None of them is INVALID_ARGUMENT.
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { bytes, call, detailsOf, failure } from './client.ts';
import { startHarness, type Harness } from './harness.ts';

const U64_MAX = '18446744073709551615';

describe('grpc read starts across the uint64 range', () => {
  let h: Harness;
  const key = bytes('u64');
  before(async () => {
    h = await startHarness();
    await call(h.data.CreateBucket.bind(h.data), { bucket: 'big' });
    await call(h.data.CreateStream.bind(h.data), { bucket: 'big', key });
    await call(h.data.Append.bind(h.data), { bucket: 'big', key, records: [{ body: bytes('a') }, { body: bytes('b') }, { body: bytes('c') }] });
  });
  after(async () => { await h.stop(); });

  it('a seq_num past 2^53 is OUT_OF_RANGE with the tail, and the tail under clamp', async () => {
    for (const seq of [U64_MAX, '9007199254740993', '9007199254740992']) {
      const err = await failure(h.data.Read.bind(h.data), { bucket: 'big', key, seq_num: seq } as never);
      assert.equal(err.code, grpc.status.OUT_OF_RANGE, `${seq}: ${err.message}`);
      assert.equal(detailsOf(err)?.sequence?.tail?.seq_num, 3);
      assert.doesNotMatch(err.message, /9007199254740991/, `${seq}: ${err.message}`);
      const page = await call(h.data.Read.bind(h.data), { bucket: 'big', key, seq_num: seq, clamp: true } as never);
      assert.deepEqual(page.records, [], seq);
    }
  });

  it('ReadPlan takes every uint64 / int64 too: a start past the tail as a Read, an end past 2^53 ends nothing, a late time vends nothing', async () => {
    const err = await failure(h.data.ReadPlan.bind(h.data), { bucket: 'big', key, seq_num: U64_MAX } as never);
    assert.equal(err.code, grpc.status.OUT_OF_RANGE, err.message);
    assert.equal(detailsOf(err)?.sequence?.tail?.seq_num, 3);
    const open = await call(h.data.ReadPlan.bind(h.data), { bucket: 'big', key, seq_num: 0, end_seq_num: U64_MAX } as never);
    assert.deepEqual(open.entries, [], 'nothing settled yet');
    const late = await call(h.data.ReadPlan.bind(h.data), { bucket: 'big', key, timestamp_ms: '9223372036854775807' } as never);
    assert.deepEqual(late.entries, []);
    const early = await call(h.data.ReadPlan.bind(h.data), { bucket: 'big', key, timestamp_ms: '-9223372036854775808' } as never);
    assert.deepEqual(early.entries, []);
  });

  it('AdminService.ReadStreamRecords takes every uint64 start: past 2^53 an empty page at the tail', async () => {
    for (const seq_num of [U64_MAX, '9007199254740993']) {
      const page = await call(h.admin.ReadStreamRecords.bind(h.admin), { bucket: 'big', key, seq_num } as never);
      assert.deepEqual(page.records, [], String(seq_num));
      assert.equal(Number(page.tail?.seq_num), 3);
    }
  });

  it('tail_offset 2^64-1 reads from the earliest record; int64 times at their extremes', async () => {
    const all = await call(h.data.Read.bind(h.data), { bucket: 'big', key, tail_offset: U64_MAX } as never);
    assert.deepEqual(all.records.map((r) => Number(r.seq_num)), [0, 1, 2]);
    const late = await call(h.data.Read.bind(h.data), { bucket: 'big', key, timestamp_ms: '9223372036854775807' } as never);
    assert.deepEqual(late.records, []);
    const early = await call(h.data.Read.bind(h.data), { bucket: 'big', key, timestamp_ms: '-9223372036854775808' } as never);
    assert.equal(early.records.length, 3);
    const until = await call(h.data.Read.bind(h.data), { bucket: 'big', key, seq_num: 0, until_ms: '9223372036854775807' } as never);
    assert.equal(until.records.length, 3);
  });

  it('times past 2^53-1: a record stamped 2^53-1 lies before later bounds; a later record time is capped, or INVALID_ARGUMENT uncapped', async () => {
    const uk = bytes('uncapped');
    await call(h.data.CreateStream.bind(h.data), { bucket: 'big', key: uk, config: { timestamping_uncapped: true } } as never);
    await call(h.data.Append.bind(h.data), { bucket: 'big', key: uk, records: [{ body: bytes('latest'), timestamp_ms: String(Number.MAX_SAFE_INTEGER) }] } as never);
    for (const bound of ['9007199254740992', '9223372036854775807']) {
      const after = await call(h.data.Read.bind(h.data), { bucket: 'big', key: uk, timestamp_ms: bound } as never);
      assert.deepEqual(after.records, [], `nothing at or after ${bound}`);
      const before = await call(h.data.Read.bind(h.data), { bucket: 'big', key: uk, seq_num: 0, until_ms: bound } as never);
      assert.equal(before.records.length, 1, `the record is before until_ms ${bound}`);
    }
    const refused = await failure(h.data.Append.bind(h.data), { bucket: 'big', key: uk, records: [{ body: bytes('x'), timestamp_ms: '9223372036854775807' }] } as never);
    assert.equal(refused.code, grpc.status.INVALID_ARGUMENT, refused.message);
    const t0 = Date.now();
    const ack = await call(h.data.Append.bind(h.data), { bucket: 'big', key, records: [{ body: bytes('d'), timestamp_ms: '9223372036854775807' }] } as never);
    const ts = Number((ack as { end?: { timestamp_ms?: unknown } }).end?.timestamp_ms);
    assert.ok(ts >= t0 && ts <= Date.now(), `capped at arrival: ${ts}`);
  });

  it('match_seq_num and a trim point past 2^53 (to 2^64-1): a miss with the tail, a trim to the tail, as over HTTP', async () => {
    const tk = bytes('trim-far');
    await call(h.data.CreateStream.bind(h.data), { bucket: 'big', key: tk });
    await call(h.data.Append.bind(h.data), { bucket: 'big', key: tk, records: [{ body: bytes('a') }, { body: bytes('b') }] });
    for (const seq of [U64_MAX, '9007199254740992']) {
      const miss = await failure(h.data.Append.bind(h.data), { bucket: 'big', key: tk, records: [{ body: bytes('x') }], match_seq_num: seq } as never);
      assert.equal(miss.code, grpc.status.OUT_OF_RANGE, `${seq}: ${miss.message}`);
      assert.equal(detailsOf(miss)?.sequence?.tail?.seq_num, 2, 'nothing appended; the tail to try next');
      assert.doesNotMatch(miss.message, /9007199254740991/, 'the message names no value the caller never sent');
    }
    // A negative trim time (int64) is refused, naming no bound the verb does not hold (2^53 saturates).
    const negative = await failure(h.data.Trim.bind(h.data), { bucket: 'big', key: tk, timestamp_ms: -1 });
    assert.equal(negative.code, grpc.status.INVALID_ARGUMENT);
    assert.equal(negative.details, 'timestamp_ms must be a non-negative integer');
    await call(h.data.Trim.bind(h.data), { bucket: 'big', key: tk, seq_num: U64_MAX } as never);
    const err = await failure(h.data.Read.bind(h.data), { bucket: 'big', key: tk, seq_num: 0 } as never);
    assert.equal(err.code, grpc.status.OUT_OF_RANGE, 'the trim reached the tail: the records are gone');
    assert.equal(detailsOf(err), undefined);
  });
});
