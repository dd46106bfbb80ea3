// The real flusher worker over a small log ring whose logical offsets start just below 2^31: the head
// crosses its 31-bit wrap (headFrom), the ring wraps many times, ROTATE frames seal files, and random
// pauses let the flusher fall asleep between publishes (the sleeping-flag notify). Every frame must
// land on disk once, in order, in the file it was written to; sealed files hold exactly their frames.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createRingBuffers, LogRingWriter } from '../../src/storage/wal/log-ring.ts';
import { encodeBatch, encodeRotate, frameInfo, frameIsIntact } from '../../src/storage/format/record-codec.ts';
import { recoverWal } from '../../src/storage/wal/wal-files.ts';
import { removeDir, tempDir } from '../helpers/server.ts';
import { untilDurable } from '../helpers/durable.ts';
import { WAL_PREFILL_AHEAD_BYTES, WAL_PREFILL_CHUNK_BYTES } from '../../src/config/limits.ts';

const RING_BYTES = 64 * 1024;
const FRAMES = 6000;
const ROTATE_EVERY = 1000;
const DURABLE_WAIT_MS = 30_000;
const STREAM_ID = '00000000-0000-4000-8000-000000000001';

test('frames cross the 2^31 head wrap, ring wraps and rotates, in order and whole', { timeout: 120_000 }, async (t) => {
  const dir = tempDir('svcd-ring-');
  t.after(() => removeDir(dir));
  const ring = createRingBuffers(RING_BYTES);
  const start = 2 ** 31 - 100_000;
  const w = new LogRingWriter(ring, start);
  const worker = new Worker(new URL('../../src/storage/wal/flusher-boot.mjs', import.meta.url), { workerData: { ring, walDir: dir, fileNo: 1 } });
  // A failed or timed-out test must not leave the flusher keeping this process (and CI) alive.
  t.after(() => worker.terminate());
  let workerError: unknown;
  worker.on('error', (e) => { workerError = e; });

  let seq = 0;
  let rotates = 0;
  const append = async (frame: Buffer): Promise<void> => {
    await untilDurable(w, () => w.tryAppend(frame) >= 0);
    w.publish();
  };
  for (let i = 0; i < FRAMES; i++) {
    const n = 1 + (i % 7);
    await append(encodeBatch(STREAM_ID, seq, Array.from({ length: n }, (_, j) => ({
      timestamp_ms: 1, headers: [], body: Buffer.alloc((i * 131 + j) % 700, 97),
    }))));
    seq += n;
    if (i % ROTATE_EVERY === ROTATE_EVERY - 1) { await append(encodeRotate()); rotates++; }
    if (i % 50 === 0) await new Promise((r) => setTimeout(r, i % 3)); // the flusher may fall asleep
  }
  const target = w.headOffset;
  assert.ok(target > 2 ** 31, 'the head crossed 2^31');
  const t0 = Date.now();
  while (w.durableOffset() < target) {
    assert.ok(Date.now() - t0 < DURABLE_WAIT_MS, `durable stuck at ${w.durableOffset()} < ${target}`);
    await Promise.race([w.waitDurable(w.durableSignal()), new Promise((r) => setTimeout(r, 50))]);
  }
  w.stop();
  await new Promise((r) => worker.once('exit', r));
  assert.equal(workerError, undefined);

  // Sealed and stopped files were cut back to their frames: no preallocated zeros remain.
  const files = readdirSync(dir).sort();
  assert.equal(files.length, rotates + 1);
  for (const f of files) {
    const size = statSync(join(dir, f)).size;
    let whole = 0;
    const buf = readFileSync(join(dir, f));
    while (whole < buf.length && frameIsIntact(buf, whole, buf.length - whole)) whole += frameInfo(buf, whole).frameBytes;
    assert.equal(whole, size, `${f} holds exactly its frames`);
  }
  let frames = 0;
  let expectSeq = 0;
  const { cutBytes } = recoverWal(dir, (f) => {
    assert.equal(f.info.firstSeq, expectSeq, 'in order, none missing or repeated');
    expectSeq += f.info.recordCount;
    frames++;
  });
  assert.equal(cutBytes, 0);
  assert.deepEqual([frames, expectSeq], [FRAMES, seq]);
});

test('while nothing is appended the flusher zero-fills room ahead of the frames, and a stopped file is cut back to them', { timeout: 60_000 }, async (t) => {
  const dir = tempDir('svcd-ring-');
  t.after(() => removeDir(dir));
  const ring = createRingBuffers(RING_BYTES);
  const w = new LogRingWriter(ring);
  const worker = new Worker(new URL('../../src/storage/wal/flusher-boot.mjs', import.meta.url), { workerData: { ring, walDir: dir, fileNo: 1 } });
  t.after(() => worker.terminate());
  let workerError: unknown;
  worker.on('error', (e) => { workerError = e; });
  const frame = encodeBatch(STREAM_ID, 0, [{ timestamp_ms: 1, headers: [], body: Buffer.alloc(100, 97) }]);
  assert.ok(w.tryAppend(frame) > 0);
  w.publish();
  await untilDurable(w, () => w.durableOffset() >= w.headOffset);
  const file = join(dir, readdirSync(dir)[0]);
  // The room is written and synced while idle, in chunks; group commits then only overwrite it.
  const t0 = Date.now();
  while (statSync(file).size < frame.length + WAL_PREFILL_AHEAD_BYTES) {
    assert.ok(Date.now() - t0 < DURABLE_WAIT_MS, `room ahead stuck at ${statSync(file).size - frame.length} bytes`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const ahead = statSync(file).size - frame.length;
  assert.ok(ahead < WAL_PREFILL_AHEAD_BYTES + WAL_PREFILL_CHUNK_BYTES, `no more than one chunk past the room asked for (${ahead})`);
  assert.equal(readFileSync(file).subarray(frame.length).some((b) => b !== 0), false, 'the room is zeros');
  w.stop();
  await new Promise((r) => worker.once('exit', r));
  assert.equal(workerError, undefined);
  assert.equal(statSync(file).size, frame.length, 'a stopped file holds exactly its frames');
});
