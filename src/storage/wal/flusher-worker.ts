// The flusher: a worker thread that drains the log ring, seals each frame with its crc32c, writes
// everything new as one group commit (writev + fdatasync) and publishes the durable offset. A ROTATE
// frame seals the current WAL file and opens the next one. Group commit is what keeps the disk's
// ~0.25 ms fdatasync from capping the service at ~4k acks/s.
//
// The file is zero-filled ahead of the data: an fdatasync that only overwrites blocks the file already
// owns needs no journal commit for its size and block map, which on this machine's ext4 roughly halves
// its latency and CPU (`npx tsx bench/fdatasync-modes.ts`). The zeros are written and synced while no
// append waits (WAL_PREFILL_AHEAD_BYTES of room, a WAL_PREFILL_CHUNK_BYTES chunk at a time); only a
// group that outruns that room zero-fills in steps of WAL_PREALLOC_STEP_BYTES itself. The zeros read
// as "no frame" to recovery and to settling, and a sealed or stopped file is cut back to its frames.
//
// A failed write (a full disk, EIO) never ends the flusher. It flags the failure (no append is
// acknowledged meanwhile), waits for the sequencer to fail the appends not yet durable and discard
// their frames, cuts its file back to what was durable, and probes with backoff until a
// preallocation step can be written and synced; then it clears the failure and appends resume.
// Durability is published after every fdatasync (also the one that seals a file at a ROTATE), so
// what the sequencer fails is exactly what was never synced.

import { parentPort, workerData } from 'node:worker_threads';
import { closeSync, existsSync, fdatasyncSync, fsyncSync, ftruncateSync, openSync, unlinkSync, writeSync, writevSync } from 'node:fs';
import {
  WAL_GROUP_LINGER_MIN_APPENDS, WAL_GROUP_LINGER_MS, WAL_PREALLOC_STEP_BYTES, WAL_PREFILL_AHEAD_BYTES, WAL_PREFILL_CHUNK_BYTES,
  WAL_RECOVERY_RETRY_MS_MAX, WAL_RECOVERY_RETRY_MS_MIN,
} from '../../config/limits.ts';
import { FRAME_ROTATE, sealFrame } from '../format/record-codec.ts';
import {
  CTRL_DISCARD_REQ, CTRL_DURABLE_SIGNAL, CTRL_FAILED, CTRL_FILE_NO, CTRL_FLUSHER_SLEEPING, CTRL_HEAD_SIGNAL, CTRL_STOP, POS_DISCARD_TO,
  POS_DURABLE, headFrom, walFailureCode, walFailureText, type RingBuffers,
} from './log-ring.ts';
import { walFilePath } from './wal-files.ts';
import { stamped } from '../../log-line.ts';

export interface FlusherInit {
  ring: RingBuffers;
  walDir: string;
  fileNo: number;
}

/** Most buffers handed to one writev call (IOV_MAX on Linux is 1024). */
const WRITEV_BUFFERS_MAX = 1024;

const init = workerData as FlusherInit;
const data = new Uint8Array(init.ring.data);
const ctrl = new Int32Array(init.ring.ctrl);
const pos = new BigInt64Array(init.ring.pos);
const size = data.length;
const zeros = new Uint8Array(WAL_PREALLOC_STEP_BYTES);
let fileNo = init.fileNo;
/** Bytes of frames in the current file, how many of them are synced, and how far the file is
 *  zero-filled (its size). */
let fileBytes = 0;
let durableFileBytes = 0;
let fileAllocated = 0;
let fd = openWal(fileNo);
Atomics.store(ctrl, CTRL_FILE_NO, fileNo);
let readPos = Number(Atomics.load(pos, POS_DURABLE));
// The star listens only after this (see startLocalWal): the first append waits for no loader.
parentPort?.postMessage({ type: 'ready' });

function openWal(n: number): number {
  // 'wx': a new file number never exists (recovery resumes after the newest); never clobber one.
  const path = walFilePath(init.walDir, n);
  const f = openSync(path, 'wx');
  try {
    const dir = openSync(init.walDir, 'r');
    try {
      fsyncSync(dir); // the new file's directory entry must survive a crash too
    } finally {
      closeSync(dir);
    }
  } catch (err) {
    closeSync(f);
    try { unlinkSync(path); } catch { /* the next attempt's 'wx' reports it */ }
    throw err;
  }
  fileBytes = 0;
  durableFileBytes = 0;
  fileAllocated = 0;
  return f;
}

/** Everything read so far is on disk: tell the sequencer, which acknowledges up to here. */
function publishDurable(): void {
  durableFileBytes = fileBytes;
  Atomics.store(pos, POS_DURABLE, BigInt(readPos));
  Atomics.add(ctrl, CTRL_DURABLE_SIGNAL, 1);
  Atomics.notify(ctrl, CTRL_DURABLE_SIGNAL);
}

/** Zero-fills the file up to at least `end` (no sync: the next group commit's fdatasync carries it). */
function preallocate(end: number): void {
  while (fileAllocated < end) {
    let done = 0;
    while (done < zeros.length) done += writeSync(fd, zeros, done, zeros.length - done, fileAllocated + done);
    fileAllocated += zeros.length;
  }
}

/** Set when a prefill failed (a full disk): no more are tried until a group commit succeeds, so a
 *  full disk is not retried in a loop while nothing is appended. */
let prefillRefused = false;

/** While no append waits: zero-fills and syncs one more chunk of room, when the file has less than
 *  WAL_PREFILL_AHEAD_BYTES ahead of its frames. True when it wrote one (the caller looks for appends
 *  again before the next). Never fails the WAL: a failure leaves the file as it was (any part of the
 *  chunk written is cut off) and the next group commit meets the same disk. */
function prefillChunk(): boolean {
  if (prefillRefused || fd < 0 || fileAllocated - fileBytes >= WAL_PREFILL_AHEAD_BYTES) return false;
  const at = fileAllocated;
  try {
    let done = 0;
    while (done < WAL_PREFILL_CHUNK_BYTES) done += writeSync(fd, zeros, done, WAL_PREFILL_CHUNK_BYTES - done, at + done);
    fdatasyncSync(fd);
    fileAllocated = at + WAL_PREFILL_CHUNK_BYTES;
  } catch {
    prefillRefused = true;
    try { ftruncateSync(fd, at); } catch { /* the next group commit's write reports the disk */ }
    return false;
  }
  return true;
}

/** Cuts the zero-filled tail, so a sealed or stopped file holds exactly its frames. */
function trimPreallocated(): void {
  if (fileAllocated > fileBytes) ftruncateSync(fd, fileBytes);
  fileAllocated = fileBytes;
}

function writeAll(chunks: Uint8Array[]): void {
  let all = 0;
  for (const c of chunks) all += c.length;
  // Small group commits get zero-filled room; a group of a step or more extends the file itself
  // (zero-filling it first would write it twice, and its fdatasync is dominated by the data anyway).
  if (all < WAL_PREALLOC_STEP_BYTES) preallocate(fileBytes + all);
  for (let i = 0; i < chunks.length; i += WRITEV_BUFFERS_MAX) {
    let batch = chunks.slice(i, i + WRITEV_BUFFERS_MAX);
    let total = 0;
    for (const c of batch) total += c.length;
    while (total > 0) {
      const n = writevSync(fd, batch, fileBytes);
      fileBytes += n;
      total -= n;
      if (total === 0) break;
      // Partial write: drop what went out and retry the rest.
      let skip = n;
      const rest: Uint8Array[] = [];
      for (const c of batch) {
        if (skip >= c.length) { skip -= c.length; continue; }
        rest.push(skip > 0 ? c.subarray(skip) : c);
        skip = 0;
      }
      batch = rest;
    }
  }
  if (fileBytes > fileAllocated) fileAllocated = fileBytes;
}

function drain(head: number): void {
  let chunks: Uint8Array[] = [];
  let dirty = false;
  while (readPos < head) {
    const at = readPos % size;
    if (size - at < 4 || (data[at] | data[at + 1] | data[at + 2] | data[at + 3]) === 0) {
      readPos += size - at; // wrap marker
      continue;
    }
    const n = (data[at] | (data[at + 1] << 8) | (data[at + 2] << 16) | (data[at + 3] << 24)) >>> 0;
    if (data[at + 8] === FRAME_ROTATE) {
      if (chunks.length) writeAll(chunks);
      chunks = [];
      trimPreallocated();
      fdatasyncSync(fd);
      publishDurable(); // the sealed file's frames, before anything that can fail on the next file
      // The next file opens before this one closes: when it cannot, this one stays current and the
      // ROTATE is discarded with everything after it.
      const prev = fd;
      fd = openWal(fileNo + 1);
      fileNo += 1;
      closeSync(prev);
      Atomics.store(ctrl, CTRL_FILE_NO, fileNo);
      dirty = false;
      // The ROTATE itself is durable now (its file sealed, the next one open): published at once, so
      // the sequencer queues the sealed file to settle even when a write to the next file fails in
      // this same pass. Left to the pass's end, such a failure discarded the ROTATE with the frames
      // after it, and the sealed file was never settled (code review 41, F4).
      readPos += n;
      publishDurable();
      continue;
    } else {
      sealFrame(data, at, n);
      chunks.push(data.subarray(at, at + n));
      dirty = true;
    }
    readPos += n;
  }
  if (chunks.length) writeAll(chunks);
  if (dirty) fdatasyncSync(fd);
  publishDurable();
  prefillRefused = false;
}

/** Writes one line to stderr at once. console.error in a worker posts to the main thread and
 *  buffers every later line until this thread's event loop runs, which this loop never lets it. */
function logLine(line: string): void {
  try {
    writeSync(2, `${stamped(line)}\n`);
  } catch {
    // stderr gone: nothing else to tell it to
  }
}

/** A private slot nobody notifies: waiting on it is a plain short sleep. */
const sleepSlot = new Int32Array(new SharedArrayBuffer(4));
const stopAsked = (): boolean => Atomics.load(ctrl, CTRL_STOP) !== 0;

/** After a failed write: flag it, wait for the sequencer to fail what was not durable and ask for
 *  the discard, cut the file back to its synced frames and probe until a write fits. False when the
 *  star stopped meanwhile. */
function recoverFrom(err: unknown): boolean {
  const code = walFailureCode(err);
  const startedMs = Date.now();
  logLine(`svcd flusher: WAL write failed (${walFailureText(code)}: ${(err as Error)?.message ?? String(err)}); appends are refused until it can be written again`);
  // The frames the failed group wrote past the synced ones belong to appends about to be refused: they
  // are zeroed before the failure is flagged, so a crash before the restore below cannot leave them
  // whole in the file for recovery to serve. Best effort: the restore zeroes them again.
  try {
    zeroPastSynced();
    fdatasyncSync(fd);
  } catch {
    // the disk refuses this too; restoreFile retries it
  }
  const discardSeen = Atomics.load(ctrl, CTRL_DISCARD_REQ);
  Atomics.store(ctrl, CTRL_FAILED, code);
  Atomics.add(ctrl, CTRL_DURABLE_SIGNAL, 1);
  Atomics.notify(ctrl, CTRL_DURABLE_SIGNAL);
  while (Atomics.load(ctrl, CTRL_DISCARD_REQ) === discardSeen) {
    if (stopAsked()) return false;
    Atomics.wait(ctrl, CTRL_HEAD_SIGNAL, Atomics.load(ctrl, CTRL_HEAD_SIGNAL), WAL_RECOVERY_RETRY_MS_MAX);
  }
  // Nothing past the durable point is ever written: the sequencer failed those appends.
  readPos = Number(Atomics.load(pos, POS_DISCARD_TO));
  Atomics.store(pos, POS_DURABLE, BigInt(readPos));
  for (let delayMs = WAL_RECOVERY_RETRY_MS_MIN; ; delayMs = Math.min(delayMs * 2, WAL_RECOVERY_RETRY_MS_MAX)) {
    try {
      restoreFile();
      break;
    } catch {
      if (stopAsked()) return false;
      Atomics.wait(sleepSlot, 0, 0, delayMs);
    }
  }
  logLine(`svcd flusher: the WAL can be written again after ${Date.now() - startedMs} ms; appends resume`);
  Atomics.store(ctrl, CTRL_FILE_NO, fileNo);
  Atomics.store(ctrl, CTRL_FAILED, 0);
  Atomics.add(ctrl, CTRL_DURABLE_SIGNAL, 1);
  Atomics.notify(ctrl, CTRL_DURABLE_SIGNAL);
  return true;
}

/** Overwrites with zeros what the current file holds past its synced frames (no sync). */
function zeroPastSynced(): void {
  if (fd < 0) return;
  for (let at = durableFileBytes; at < fileBytes;) {
    at += writeSync(fd, zeros, 0, Math.min(zeros.length, fileBytes - at), at);
  }
}

/** Clears what a failed group left past the synced frames and proves there is room again; throws
 *  while there is not. The partial group is overwritten with zeros rather than cut: cutting would
 *  free the preallocated blocks, a probe would fit in them, and a full disk would flap between
 *  failing and recovering every step. The probe asks for one preallocation step of new space. */
function restoreFile(): void {
  if (fd < 0) {
    const path = walFilePath(init.walDir, fileNo);
    fd = existsSync(path) ? openSync(path, 'r+') : openWal(fileNo);
  }
  const allocated = Math.max(fileAllocated, fileBytes);
  zeroPastSynced();
  fdatasyncSync(fd);
  fileBytes = durableFileBytes;
  fileAllocated = allocated;
  try {
    preallocate(allocated + WAL_PREALLOC_STEP_BYTES);
    fdatasyncSync(fd);
  } catch (err) {
    ftruncateSync(fd, allocated); // give back what the probe took
    fileAllocated = allocated;
    throw err;
  }
}

/** Publishes (one per append) covered by the last group commit, and the signal it ended at. */
let lastGroupAppends = 0;
let drainedSignal = Atomics.load(ctrl, CTRL_HEAD_SIGNAL);

for (;;) {
  let signal = Atomics.load(ctrl, CTRL_HEAD_SIGNAL);
  let head = headFrom(ctrl, readPos);
  if (head > readPos) {
    // Under concurrent producers the next group is still arriving when a commit ends (the acks of the
    // last one are just going out). Fewer appends than last time are waiting: linger briefly so one
    // fdatasync covers them all. A lone producer (groups of one) never waits.
    if (lastGroupAppends >= WAL_GROUP_LINGER_MIN_APPENDS && signal - drainedSignal < lastGroupAppends) {
      Atomics.wait(sleepSlot, 0, 0, WAL_GROUP_LINGER_MS);
      signal = Atomics.load(ctrl, CTRL_HEAD_SIGNAL);
      head = headFrom(ctrl, readPos);
    }
    lastGroupAppends = signal - drainedSignal;
    drainedSignal = signal;
    try {
      drain(head);
    } catch (err) {
      // A WAL that cannot be written must never ack: fail, discard, cut back, probe, resume.
      if (!recoverFrom(err)) break;
    }
    continue;
  }
  if (Atomics.load(ctrl, CTRL_STOP) !== 0) break;
  if (prefillChunk()) continue;
  // Announce the sleep, then wait only if no publish came in since `signal` was read: a publish
  // after the announcement sees the flag and notifies (see LogRingWriter.publish).
  Atomics.store(ctrl, CTRL_FLUSHER_SLEEPING, 1);
  Atomics.wait(ctrl, CTRL_HEAD_SIGNAL, signal);
  Atomics.store(ctrl, CTRL_FLUSHER_SLEEPING, 0);
}
if (fd >= 0) {
  if (Atomics.load(ctrl, CTRL_FAILED) === 0) {
    trimPreallocated();
    fdatasyncSync(fd);
  }
  closeSync(fd);
}
