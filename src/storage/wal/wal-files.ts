// WAL files on disk: naming, listing, and recovery (scan whole checksummed frames, cut a torn tail).

import { closeSync, existsSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { FRAME_FORMAT_VERSION, FRAME_RECORDS, frameInfo, frameIsIntact, type FrameInfo } from '../format/record-codec.ts';

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

/** Reads every intact frame of every WAL file in order. A file whose tail is torn (a partial or
 *  corrupt frame) is truncated at the last whole frame, so the torn bytes are never served. A tail of
 *  only zeros is the flusher's preallocation, not a tear: it is cut too, but not counted in `cutBytes`. */
export function recoverWal(dir: string, onFrame: (f: RecoveredFrame) => void): { files: number[]; lastFileNo: number; cutBytes: number } {
  const files = listWalFiles(dir);
  let cutBytes = 0;
  for (const fileNo of files) {
    const path = walFilePath(dir, fileNo);
    const buf = readFileSync(path);
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
      if (!allZero(buf, off)) cutBytes += buf.length - off;
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

function allZero(buf: Uint8Array, from: number): boolean {
  for (let i = from; i < buf.length; i++) if (buf[i] !== 0) return false;
  return true;
}
