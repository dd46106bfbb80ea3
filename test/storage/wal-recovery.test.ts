// WAL recovery reads whole checksummed frames in file order and cuts a torn or corrupt tail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, statSync, writeFileSync } from 'node:fs';
import { FRAME_FORMAT_VERSION, encodeBatch, sealFrame } from '../../src/storage/format/record-codec.ts';
import { recoverWal, walFilePath, type RecoveredFrame } from '../../src/storage/wal/wal-files.ts';
import { removeDir, tempDir } from '../helpers/server.ts';

const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
function frame(first: number, n: number): Buffer {
  const f = encodeBatch(ID, first, Array.from({ length: n }, (_, i) => ({ timestamp_ms: i, headers: [], body: Buffer.from(`r${first + i}`) })));
  sealFrame(f, 0, f.length);
  return f;
}

test('frames come back in file order; a partial last frame is cut from the file', (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  writeFileSync(walFilePath(dir, 1), Buffer.concat([frame(0, 2), frame(2, 3)]));
  const whole = Buffer.concat([frame(5, 1), frame(6, 4)]);
  const torn = frame(10, 2);
  writeFileSync(walFilePath(dir, 2), Buffer.concat([whole, torn.subarray(0, torn.length - 3)]));
  const seen: RecoveredFrame[] = [];
  const r = recoverWal(dir, (f) => seen.push(f));
  assert.deepEqual(seen.map((f) => [f.fileNo, f.info.firstSeq, f.info.recordCount]), [[1, 0, 2], [1, 2, 3], [2, 5, 1], [2, 6, 4]]);
  assert.equal(r.lastFileNo, 2);
  assert.equal(r.cutBytes, torn.length - 3);
  assert.equal(statSync(walFilePath(dir, 2)).size, whole.length);
});

test('a frame with a flipped byte ends recovery of that file at the frame before it', (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const good = frame(0, 3);
  const bad = frame(3, 3);
  bad[bad.length - 1] ^= 0xff;
  writeFileSync(walFilePath(dir, 1), Buffer.concat([good, bad]));
  appendFileSync(walFilePath(dir, 1), frame(6, 1));
  const seen: RecoveredFrame[] = [];
  recoverWal(dir, (f) => seen.push(f));
  assert.deepEqual(seen.map((f) => f.info.firstSeq), [0]);
  assert.equal(statSync(walFilePath(dir, 1)).size, good.length);
});

test('a WAL frame of a newer format version stops recovery with the reason, and the file is left as it was', (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const legacy = frame(0, 2);
  legacy[9] = 0; // written before frames carried a version: still read
  sealFrame(legacy, 0, legacy.length);
  const newer = frame(2, 1);
  newer[9] = FRAME_FORMAT_VERSION + 1;
  sealFrame(newer, 0, newer.length);
  const bytes = Buffer.concat([legacy, newer]);
  writeFileSync(walFilePath(dir, 1), bytes);
  const seen: RecoveredFrame[] = [];
  assert.throws(() => recoverWal(dir, (f) => seen.push(f)), /format version 2, newer than this build's 1/);
  assert.deepEqual(seen.map((f) => f.info.firstSeq), [0]);
  assert.equal(statSync(walFilePath(dir, 1)).size, bytes.length, 'nothing cut');
});
