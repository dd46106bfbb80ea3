// The flusher: a worker thread that drains the log ring, seals each frame with its crc32c, writes
// everything new as one group commit (writev + fdatasync) and publishes the durable offset. A ROTATE
// frame seals the current WAL file and opens the next one. Group commit is what keeps the disk's
// ~0.25 ms fdatasync from capping the service at ~4k acks/s.

import { workerData } from 'node:worker_threads';
import { closeSync, fdatasyncSync, fsyncSync, openSync, writevSync } from 'node:fs';
import { FRAME_ROTATE, sealFrame } from '../format/record-codec.ts';
import {
  CTRL_DURABLE_SIGNAL, CTRL_FAILED, CTRL_HEAD_SIGNAL, CTRL_STOP, POS_DURABLE, POS_HEAD, type RingBuffers,
} from './log-ring.ts';
import { walFilePath } from './wal-files.ts';

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
let fileNo = init.fileNo;
let fd = openWal(fileNo);
let readPos = Number(Atomics.load(pos, POS_DURABLE));

function openWal(n: number): number {
  const f = openSync(walFilePath(init.walDir, n), 'a');
  const dir = openSync(init.walDir, 'r');
  fsyncSync(dir); // the new file's directory entry must survive a crash too
  closeSync(dir);
  return f;
}

function writeAll(chunks: Uint8Array[]): void {
  for (let i = 0; i < chunks.length; i += WRITEV_BUFFERS_MAX) {
    let batch = chunks.slice(i, i + WRITEV_BUFFERS_MAX);
    let total = 0;
    for (const c of batch) total += c.length;
    while (total > 0) {
      const n = writevSync(fd, batch);
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
      fdatasyncSync(fd);
      closeSync(fd);
      fileNo += 1;
      fd = openWal(fileNo);
      dirty = false;
    } else {
      sealFrame(data, at, n);
      chunks.push(data.subarray(at, at + n));
      dirty = true;
    }
    readPos += n;
  }
  if (chunks.length) writeAll(chunks);
  if (dirty) fdatasyncSync(fd);
}

for (;;) {
  const signal = Atomics.load(ctrl, CTRL_HEAD_SIGNAL);
  const head = Number(Atomics.load(pos, POS_HEAD));
  if (head > readPos) {
    try {
      drain(head);
    } catch (err) {
      // A WAL that cannot be written must never ack: flag it and stop publishing durability.
      Atomics.store(ctrl, CTRL_FAILED, 1);
      Atomics.add(ctrl, CTRL_DURABLE_SIGNAL, 1);
      Atomics.notify(ctrl, CTRL_DURABLE_SIGNAL);
      console.error('svcd flusher: WAL write failed:', err);
      break;
    }
    Atomics.store(pos, POS_DURABLE, BigInt(readPos));
    Atomics.add(ctrl, CTRL_DURABLE_SIGNAL, 1);
    Atomics.notify(ctrl, CTRL_DURABLE_SIGNAL);
    continue;
  }
  if (Atomics.load(ctrl, CTRL_STOP) !== 0) break;
  Atomics.wait(ctrl, CTRL_HEAD_SIGNAL, signal);
}
closeSync(fd);
