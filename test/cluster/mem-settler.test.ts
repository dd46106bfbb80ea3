// A cluster star's settle lays the frames of several streams back to back in one task's buffer, up
// to SETTLE_TASK_BYTES_MAX: every stream is asked for once, in order, with its frames whole and
// nothing of another stream's between them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemorySettler, type SettleBytes } from '../../src/cluster/mem-settler.ts';
import { SETTLE_TASK_BYTES_MAX } from '../../src/config/limits.ts';

test('streams share a task until the next would pass the bound; a larger one goes alone', async () => {
  const big = Math.floor(SETTLE_TASK_BYTES_MAX * 0.6);
  const frames = new Map<string, Uint8Array[]>([
    ['a', [new Uint8Array(10).fill(1), new Uint8Array(20).fill(2)]],
    ['b', [new Uint8Array(big).fill(3)]],
    ['c', [new Uint8Array(big).fill(4)]],
    ['d', []], // nothing in this generation: not asked for
    ['e', [new Uint8Array(SETTLE_TASK_BYTES_MAX + 1).fill(5)]],
    ['f', [new Uint8Array(5).fill(6)]],
  ]);
  const tasks: { streams: string[]; bytes: number; firsts: number[] }[] = [];
  const settleBytes: SettleBytes = async (bytes, streams) => {
    tasks.push({ streams: streams.map((s) => s.streamId), bytes: bytes.length, firsts: [bytes[0], bytes[bytes.length - 1]] });
    return streams.map((s) => ({ streamId: s.streamId, segment: { object_key: s.streamId, first_seq: s.fromSeq, end_seq: s.fromSeq + 1, min_ts: 0, max_ts: 0, content_bytes: 0, size_bytes: 0, footer_offset: 0, footer_bytes: 0 } }));
  };
  const settler = new MemorySettler(settleBytes, (id) => frames.get(id) ?? []);
  const out = await settler.settle(7, [...frames.keys()].map((streamId, i) => ({ streamId, fromSeq: i })));
  assert.deepEqual(tasks, [
    { streams: ['a', 'b'], bytes: 30 + big, firsts: [1, 3] },
    { streams: ['c'], bytes: big, firsts: [4, 4] },
    { streams: ['e'], bytes: SETTLE_TASK_BYTES_MAX + 1, firsts: [5, 5] },
    { streams: ['f'], bytes: 5, firsts: [6, 6] },
  ]);
  assert.deepEqual(out.map((o) => [o.streamId, o.segment.first_seq]), [['a', 0], ['b', 1], ['c', 2], ['e', 4], ['f', 5]]);
});
