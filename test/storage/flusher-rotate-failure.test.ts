// The real flusher worker with its WAL on a small tmpfs that is full: one pass carries a ROTATE and a
// frame the disk cannot take. The ROTATE's file is sealed and the next one opened before that write
// fails, so the ROTATE must be published durable: the sequencer then queues the sealed file to settle.
// Published only at the pass's end (code review 41, F4), the failure discarded it with the frame after
// it, the sealed file was never queued, and settling stopped at it until a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createRingBuffers, LogRingWriter } from '../../src/storage/wal/log-ring.ts';
import { encodeBatch, encodeRotate } from '../../src/storage/format/record-codec.ts';
import { walFilePath } from '../../src/storage/wal/wal-files.ts';
import { removeDir, tempDir } from '../helpers/server.ts';
import { untilDurable } from '../helpers/durable.ts';
import { SmallFs, tmpfsSkipReason } from '../crash/fault-kit.ts';

const MiB = 1024 * 1024;
const STREAM_ID = '00000000-0000-4000-8000-000000000001';
/** Larger than anything sealing the first file gives back (its zero-filled room ahead, ~2.25 MiB). */
const BIG_RECORDS = 8;

test('a write that fails on the next WAL file in the pass that sealed the last: the ROTATE is durable', { skip: tmpfsSkipReason(), timeout: 60_000 }, async (t) => {
  const base = tempDir('svcd-rotate-');
  const fs = new SmallFs(join(base, 'wal'), 16 * MiB);
  t.after(() => { fs.unmount(); removeDir(base); });
  const ring = createRingBuffers(32 * MiB);
  const w = new LogRingWriter(ring);
  const worker = new Worker(new URL('../../src/storage/wal/flusher-boot.mjs', import.meta.url), { workerData: { ring, walDir: fs.dir, fileNo: 1 } });
  t.after(() => worker.terminate());
  let workerError: unknown;
  worker.on('error', (e) => { workerError = e; });

  const small = encodeBatch(STREAM_ID, 0, [{ timestamp_ms: 1, headers: [], body: Buffer.alloc(100, 97) }]);
  assert.ok(w.tryAppend(small) > 0);
  w.publish();
  await untilDurable(w, () => w.durableOffset() >= w.headOffset);
  fs.fill();

  // One publish: the flusher sees both in one pass.
  const rotateEnd = w.tryAppend(encodeRotate());
  const big = encodeBatch(STREAM_ID, 1, Array.from({ length: BIG_RECORDS }, () => ({ timestamp_ms: 1, headers: [], body: Buffer.alloc(MiB, 98) })));
  assert.ok(rotateEnd > 0 && w.tryAppend(big) > 0);
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
  assert.equal(statSync(walFilePath(fs.dir, 1)).size, small.length, 'the sealed file holds exactly its frame');
  assert.deepEqual(readdirSync(fs.dir).filter((f) => f !== 'filler.bin').sort(), [walFilePath(fs.dir, 1), walFilePath(fs.dir, 2)].map((p) => p.slice(fs.dir.length + 1)));
  w.stop();
  await new Promise((r) => worker.once('exit', r));
  assert.equal(workerError, undefined);
  assert.equal(statSync(walFilePath(fs.dir, 2)).size, 0, 'nothing of the discarded frame was kept');
});
