// WAL files on disk: naming, listing, and recovery (scan whole checksummed frames, cut a torn tail).

import { closeSync, existsSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { FRAME_FORMAT_VERSION, FRAME_RECORDS, frameInfo, frameIsIntact, type FrameInfo } from '../format/record-codec.ts';
import { BootError } from '../../config/boot-error.ts';

const WAL_SUFFIX = '.wal';

export function walFilePath(dir: string, fileNo: number): string {
  return join(dir, `${String(fileNo).padStart(10, '0')}${WAL_SUFFIX}`);
}

export function listWalFiles(dir: string): number[] {
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
  return readdirSync(dir)
    .filter((f) => f.endsWith(WAL_SUFFIX))
    .map((f) => Number(f.slice(0, -WAL_SUFFIX.length)))
    .filter((n) => Number.isInteger(n))
    .sort((a, b) => a - b);
}

export interface RecoveredFrame {
  fileNo: number;
  info: FrameInfo;
  /** A copy of the frame bytes, independent of the file buffer. */
  frame: Buffer;
}

/** Reads every intact frame of every WAL file in order. The newest file's tail may be torn (a crash
 *  mid-write: a partial or corrupt frame of a group commit never acknowledged): it is truncated at the
 *  last whole frame, so the torn bytes are never served. A tail of only zeros is the flusher's
 *  preallocation, not a tear: it is cut too, but not counted in `cutBytes`.
 *  An older file was sealed and synced before the next one was created (flusher-worker.ts), so a bad
 *  frame there is damage, not a tear, and what follows it was acknowledged: cutting it would lose
 *  those records and hand their sequence numbers out again. Recovery refuses instead (nothing is
 *  changed on disk) and says where, for the operator to restore the file or accept the loss. */
export function recoverWal(dir: string, onFrame: (f: RecoveredFrame) => void): { files: number[]; lastFileNo: number; cutBytes: number } {
  const files = listWalFiles(dir);
  let cutBytes = 0;
  for (const [i, fileNo] of files.entries()) {
    const path = walFilePath(dir, fileNo);
    const buf = readFileSync(path);
    const newest = i === files.length - 1;
    let off = 0;
    while (off < buf.length && frameIsIntact(buf, off, buf.length - off)) {
      const info = frameInfo(buf, off);
      if (info.version > FRAME_FORMAT_VERSION) {
        throw new Error(`WAL file ${fileNo} holds a frame of format version ${info.version}, newer than this build's ${FRAME_FORMAT_VERSION}: a newer svcd wrote it; run that one`);
      }
      if (info.kind === FRAME_RECORDS) {
        onFrame({ fileNo, info, frame: Buffer.from(buf.subarray(off, off + info.frameBytes)) });
      }
      off += info.frameBytes;
    }
    if (off < buf.length) {
      const torn = !allZero(buf, off);
      // Thrown before anything is cut (the frames replayed so far die with the refused boot).
      if (torn && !newest) throw damaged(dir, path, off, buf.length);
      if (torn) cutBytes += buf.length - off;
      const fd = openSync(path, 'r+');
      ftruncateSync(fd, off);
      fsyncSync(fd);
      closeSync(fd);
    }
  }
  return { files, lastFileNo: files.length ? files[files.length - 1] : 0, cutBytes };
}

/** Off the event loop: a 64 MiB unlink can take milliseconds. */
export async function removeWalFile(dir: string, fileNo: number): Promise<void> {
  await unlink(walFilePath(dir, fileNo)).catch(() => undefined); // already gone is fine
}

/** The refusal for a sealed WAL file that holds something other than whole frames and a zero tail. */
function damaged(dir: string, path: string, off: number, bytes: number): BootError {
  return new BootError(
    `data dir ${dir}: WAL file ${path} is damaged at byte ${off} of ${bytes} (no whole checksummed frame there), `
    + 'and newer WAL files exist, so it was sealed and synced: not a torn write, and the records after that byte were acknowledged. '
    + 'The star will not start rather than lose them or number new records over them: restore the file from a copy '
    + '(cutting it at that byte would lose the records after it and let their sequence numbers be given out again)',
  );
}

function allZero(buf: Uint8Array, from: number): boolean {
  for (let i = from; i < buf.length; i++) if (buf[i] !== 0) return false;
  return true;
}
