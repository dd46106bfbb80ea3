// The auditor's scrub re-verifies every named segment over successive scrubs even when there are
// more of them than its queue holds: each scrub goes on where the last one stopped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Auditor, type NamedSegment } from '../../src/core/auditor.ts';
import { ObjectReclaimer } from '../../src/core/object-reclaimer.ts';
import { FsObjectStore } from '../../src/storage/objects/fs-store.ts';
import { checkStoredSegments } from '../../src/storage/segments/segment-check.ts';
import { removeDir, tempDir } from '../helpers/server.ts';
import { AUDIT_CHECK_GROUP_BYTES_MAX, AUDIT_CHECK_GROUP_SEGMENTS_MAX } from '../../src/config/limits.ts';

const SCRUB_MS = 1000;
const QUEUE_MAX = 4;

test('segments past the verification queue are scrubbed by the next scrubs, then it starts over', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const objects = new FsObjectStore(dir);
  let now = 0;
  const clock = { nowMs: () => now };
  // Not named any more: the missing objects are not findings, and each check empties its slot.
  const auditor = new Auditor({ check: (segs) => checkStoredSegments(objects, segs) }, new ObjectReclaimer(objects, clock, 0), clock, () => false, undefined, { scrubMs: SCRUB_MS, queueMax: QUEUE_MAX });
  const named: NamedSegment[] = Array.from({ length: 10 }, (_, i) => ({
    bucket: 'b', key: `k${i}`, streamId: `id-${i}`,
    seg: { object_key: `streams/id-${i}/x.seg`, first_seq: 0, end_seq: 1, min_ts: 0, max_ts: 0, content_bytes: 1, size_bytes: 10, footer_offset: 0, footer_bytes: 0 },
  }));
  const scrubbed: string[][] = [];
  for (let round = 0; round < 4; round++) {
    now += SCRUB_MS;
    await auditor.scrub(() => named);
    scrubbed.push(auditor.peek('verifications', 100).map((v) => v.key));
    while (auditor.depth('verifications') > 0) await auditor.run();
  }
  assert.deepEqual(scrubbed, [['k0', 'k1', 'k2', 'k3'], ['k4', 'k5', 'k6', 'k7'], ['k8', 'k9'], ['k0', 'k1', 'k2', 'k3']]);
});

test('a check the store does not answer ends the run and stays queued; the next run checks everything', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const clock = { nowMs: () => 0 };
  const objects = new FsObjectStore(dir);
  let storeUp = false;
  let asked = 0;
  const checker = {
    check: async (segs: unknown[]): Promise<undefined[]> => {
      asked += 1;
      if (!storeUp) throw new Error('connect ECONNREFUSED');
      return segs.map(() => undefined);
    },
  };
  const auditor = new Auditor(checker, new ObjectReclaimer(objects, clock, 0), clock, () => true);
  for (let i = 0; i < 5; i++) {
    auditor.settled('b', `k${i}`, `id-${i}`, { object_key: `o${i}`, first_seq: 0, end_seq: 1, min_ts: 0, max_ts: 0, content_bytes: 1, size_bytes: 10, footer_offset: 0, footer_bytes: 0 });
  }
  await auditor.run();
  assert.deepEqual([asked, auditor.depth('verifications'), auditor.counters.verified], [1, 5, 0], 'one attempt (one group), then the run ended with all five still queued');
  storeUp = true;
  await auditor.run();
  assert.deepEqual([auditor.depth('verifications'), auditor.counters.verified, auditor.depth('findings')], [0, 5, 0]);
});

test('a run checks its segments in groups bounded by count and by bytes, each in order, each verified once', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const clock = { nowMs: () => 0 };
  const groups: string[][] = [];
  const checker = { check: async (segs: { object_key: string }[]): Promise<undefined[]> => { groups.push(segs.map((s) => s.object_key)); return segs.map(() => undefined); } };
  const auditor = new Auditor(checker, new ObjectReclaimer(new FsObjectStore(dir), clock, 0), clock, () => true);
  const seg = (key: string, size: number) => ({ object_key: key, first_seq: 0, end_seq: 1, min_ts: 0, max_ts: 0, content_bytes: 1, size_bytes: size, footer_offset: 0, footer_bytes: 0 });
  const small = AUDIT_CHECK_GROUP_SEGMENTS_MAX + 10;
  for (let i = 0; i < small; i++) auditor.settled('b', 'k', 'id', seg(`s${i}`, 1));
  const big = Math.floor(AUDIT_CHECK_GROUP_BYTES_MAX * 0.6);
  auditor.settled('b', 'k', 'id', seg('big1', big));
  auditor.settled('b', 'k', 'id', seg('big2', big));
  await auditor.run();
  assert.deepEqual(groups.map((g) => g.length), [AUDIT_CHECK_GROUP_SEGMENTS_MAX, 11, 1]);
  assert.deepEqual(groups.flat(), [...Array.from({ length: small }, (_, i) => `s${i}`), 'big1', 'big2']);
  assert.deepEqual([auditor.counters.verified, auditor.depth('verifications')], [small + 2, 0]);
});
