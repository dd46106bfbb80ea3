// The real flusher worker with its WAL on a small tmpfs that is full, so a group commit's write fails.
// - One pass carries a ROTATE and a frame the disk cannot take. The ROTATE's file is sealed and the
//   next one opened before that write fails, so the ROTATE must be published durable: the sequencer
//   then queues the sealed file to settle. Published only at the pass's end (code review 41, F4), the
//   failure discarded it with the frame after it, the sealed file was never queued, and settling
//   stopped at it until a restart.
// - One pass carries small frames and then one the disk cannot take: the small ones are written whole
//   before the write fails. Their appends are refused once the failure is flagged, so by then they
//   must be gone from the file: a crash before the flusher's restore would otherwise leave them for
//   recovery to serve (refused appends readable after a restart).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createRingBuffers, LogRingWriter } from '../../src/storage/wal/log-ring.ts';
import { encodeBatch, encodeRotate, frameInfo, frameIsIntact } from '../../src/storage/format/record-codec.ts';
import { walFilePath } from '../../src/storage/wal/wal-files.ts';
import { removeDir, tempDir } from '../helpers/server.ts';
import { untilDurable } from '../helpers/durable.ts';
import { SmallFs, tmpfsSkipReason } from '../crash/fault-kit.ts';

const MiB = 1024 * 1024;
const STREAM_ID = '00000000-0000-4000-8000-000000000001';
/** Larger than anything sealing the first file gives back (its zero-filled room ahead, ~2.25 MiB). */
const BIG_RECORDS = 8;

/** A one-record frame of `stream`'s at `seq`. */
const small = (seq: number): Buffer => encodeBatch(STREAM_ID, seq, [{ timestamp_ms: 1, headers: [], body: Buffer.alloc(100, 97) }]);
/** A frame the full disk cannot take. */
const big = (seq: number): Buffer => encodeBatch(STREAM_ID, seq, Array.from({ length: BIG_RECORDS }, () => ({ timestamp_ms: 1, headers: [], body: Buffer.alloc(MiB, 98) })));

/** The flusher over a WAL on a 16 MiB tmpfs, one frame (`small(0)`) durable in file 1, then the disk
 *  filled. */
async function fullWal(t: TestContext): Promise<{ fs: SmallFs; w: LogRingWriter; worker: Worker; workerError: () => unknown }> {
  const base = tempDir('svcd-walfull-');
  const fs = new SmallFs(join(base, 'wal'), 16 * MiB);
  t.after(() => { fs.unmount(); removeDir(base); });
  const ring = createRingBuffers(32 * MiB);
  const w = new LogRingWriter(ring);
  const worker = new Worker(new URL('../../src/storage/wal/flusher-boot.mjs', import.meta.url), { workerData: { ring, walDir: fs.dir, fileNo: 1 } });
  t.after(() => worker.terminate());
  let workerError: unknown;
  worker.on('error', (e) => { workerError = e; });
  assert.ok(w.tryAppend(small(0)) > 0);
  w.publish();
  await untilDurable(w, () => w.durableOffset() >= w.headOffset);
  fs.fill();
  return { fs, w, worker, workerError: () => workerError };
}

test('a write that fails on the next WAL file in the pass that sealed the last: the ROTATE is durable', { skip: tmpfsSkipReason(), timeout: 60_000 }, async (t) => {
  const { fs, w, worker, workerError } = await fullWal(t);

  // One publish: the flusher sees both in one pass.
  const rotateEnd = w.tryAppend(encodeRotate());
  assert.ok(rotateEnd > 0 && w.tryAppend(big(1)) > 0);
  w.publish();
  await untilDurable(w, () => w.failed());
  assert.match(w.failureCause(), /ENOSPC/);
  assert.equal(w.currentFileNo(), 2, 'the next file was opened');
  assert.ok(w.durableOffset() >= rotateEnd, `the ROTATE is durable (durable ${w.durableOffset()}, ROTATE ends at ${rotateEnd})`);
  assert.ok(w.durableOffset() < w.headOffset, 'the frame the disk could not take is not');

  // The sequencer fails the big append and asks for the discard; space comes back; the flusher resumes
  // on the next file.
  w.discardUndurable();
  fs.free();
  await untilDurable(w, () => !w.failed());
  assert.equal(w.currentFileNo(), 2);
  assert.equal(statSync(walFilePath(fs.dir, 1)).size, small(0).length, 'the sealed file holds exactly its frame');
  assert.deepEqual(readdirSync(fs.dir).filter((f) => f !== 'filler.bin').sort(), [walFilePath(fs.dir, 1), walFilePath(fs.dir, 2)].map((p) => p.slice(fs.dir.length + 1)));
  w.stop();
  await new Promise((r) => worker.once('exit', r));
  assert.equal(workerError(), undefined);
  assert.equal(statSync(walFilePath(fs.dir, 2)).size, 0, 'nothing of the discarded frame was kept');
});

test('frames a failing group wrote whole are gone from the file once the failure is flagged', { skip: tmpfsSkipReason(), timeout: 60_000 }, async (t) => {
  const { fs, w, worker, workerError } = await fullWal(t);
  const synced = small(0).length;
  // One publish: one pass, one write of all three (together past a preallocation step), the last of
  // which the disk cannot take.
  for (const f of [small(1), small(2), big(3)]) assert.ok(w.tryAppend(f) > 0);
  w.publish();
  await untilDurable(w, () => w.failed());
  assert.equal(w.durableOffset(), synced, 'nothing of the failed group is durable');
  // Here the sequencer refuses the group's appends; a crash now must not find them in the file.
  const file = readFileSync(walFilePath(fs.dir, 1));
  const whole = small(1).length + small(2).length;
  assert.ok(file.length >= synced + whole, `the group was written before the failure (file ${file.length} bytes)`);
  assert.equal(file.subarray(synced, synced + whole).some((b) => b !== 0), false, 'its whole frames are zeroed');
  // Read as recovery reads it (whole frames from the start; not recoverWal itself, which would cut the
  // file under the flusher): only the synced frame.
  const found: number[] = [];
  for (let at = 0; at < file.length && frameIsIntact(file, at, file.length - at); at += frameInfo(file, at).frameBytes) found.push(frameInfo(file, at).firstSeq);
  assert.deepEqual(found, [0], 'recovery would find only the synced frame');
  w.discardUndurable();
  fs.free();
  await untilDurable(w, () => !w.failed());
  w.stop();
  await new Promise((r) => worker.once('exit', r));
  assert.equal(workerError(), undefined);
});
