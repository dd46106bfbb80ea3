// Memory for sequenced frames. A frame stays in memory (the unsettled tail that reads and subscribers
// serve) until its WAL file settles, and then the whole file's frames go at once. Carving small frames
// out of shared chunks keeps that memory dense and long-lived apart from the request's short-lived
// buffers: from Node's 8 KiB buffer pool, every pool a frame landed in was kept alive with all the
// request garbage around it, about 2.5 times the frame bytes, and a new pool was made every ~20 appends.

import { FRAME_ARENA_CHUNK_BYTES } from '../config/limits.ts';

/** Frames bigger than this get their own allocation: one would waste most of a chunk's tail. */
const OWN_ALLOCATION_BYTES_MIN = FRAME_ARENA_CHUNK_BYTES / 8;

export class FrameArena {
  private chunk: Buffer = Buffer.alloc(0);
  private used = 0;

  /** `bytes` of uninitialized memory, written by the caller before anyone reads it. */
  readonly alloc = (bytes: number): Buffer => {
    if (bytes >= OWN_ALLOCATION_BYTES_MIN) return Buffer.allocUnsafeSlow(bytes);
    if (this.used + bytes > this.chunk.length) {
      this.chunk = Buffer.allocUnsafeSlow(FRAME_ARENA_CHUNK_BYTES);
      this.used = 0;
    }
    const out = this.chunk.subarray(this.used, this.used + bytes);
    this.used += bytes;
    return out;
  };
}
