// The log ring: a SharedArrayBuffer holding sequenced batch frames between the sequencer (main thread,
// the only writer) and the flusher worker (the only reader). Offsets are logical and only grow; a frame
// never wraps: when it does not fit before the end, a zero length word (or fewer than 4 bytes of room)
// tells the reader to continue at the ring's start.

export const CTRL_HEAD_SIGNAL = 0; // bumped by the writer after each publish; the flusher waits on it
export const CTRL_DURABLE_SIGNAL = 1; // bumped by the flusher after each group commit; main waits on it
export const CTRL_STOP = 2; // 1 asks the flusher to finish and exit
export const CTRL_FAILED = 3; // a WalFailure code while the WAL cannot be written (0: it can): no acks
export const CTRL_FLUSHER_SLEEPING = 4; // 1 while the flusher waits on CTRL_HEAD_SIGNAL: only then does a publish notify
/** The published head's low 31 bits. The reader is never more than a ring (< 2^31 bytes) behind the
 *  head, so it recovers the whole offset from its own position (see headFrom), and a publish, once
 *  per append, stores an int instead of allocating a BigInt. */
export const CTRL_HEAD_LOW31 = 5;
/** Bumped by the writer to ask a failed flusher to discard everything up to POS_DISCARD_TO. */
export const CTRL_DISCARD_REQ = 6;
/** The WAL file the flusher writes now (it tells the sequencer after recovering). */
export const CTRL_FILE_NO = 7;
export const POS_DISCARD_TO = 0; // after a failure: frames below it are never written
export const POS_DURABLE = 1; // logical offset up to which frames are fsynced (or discarded)

/** Why the WAL cannot be written (CTRL_FAILED). Every code but FLUSHER_GONE clears by itself once
 *  the flusher can write again. */
export const WalFailure = { NONE: 0, OTHER: 1, ENOSPC: 2, EIO: 3, EDQUOT: 4, EROFS: 5, FLUSHER_GONE: 9 } as const;

export function walFailureCode(err: unknown): number {
  const code = (err as { code?: unknown } | null)?.code;
  switch (code) {
    case 'ENOSPC': return WalFailure.ENOSPC;
    case 'EIO': return WalFailure.EIO;
    case 'EDQUOT': return WalFailure.EDQUOT;
    case 'EROFS': return WalFailure.EROFS;
    default: return WalFailure.OTHER;
  }
}

export function walFailureText(code: number): string {
  switch (code) {
    case WalFailure.NONE: return '';
    case WalFailure.ENOSPC: return 'ENOSPC: the disk under the WAL is full';
    case WalFailure.EIO: return 'EIO: the disk under the WAL failed an I/O';
    case WalFailure.EDQUOT: return 'EDQUOT: the disk quota under the WAL is used up';
    case WalFailure.EROFS: return 'EROFS: the file system under the WAL is read-only';
    case WalFailure.FLUSHER_GONE: return 'the flusher thread exited';
    default: return 'an I/O error';
  }
}

const LOW31 = 0x7fffffff;

/** The logical head, given the reader's position `readPos` (head - readPos is below 2^31). */
export function headFrom(ctrl: Int32Array, readPos: number): number {
  return readPos + ((Atomics.load(ctrl, CTRL_HEAD_LOW31) - (readPos & LOW31)) & LOW31);
}

export interface RingBuffers {
  data: SharedArrayBuffer;
  ctrl: SharedArrayBuffer; // Int32Array(8)
  pos: SharedArrayBuffer; // BigInt64Array(2): POS_DISCARD_TO, POS_DURABLE (the head is CTRL_HEAD_LOW31)
}

export function createRingBuffers(bytes: number): RingBuffers {
  return {
    data: new SharedArrayBuffer(bytes),
    ctrl: new SharedArrayBuffer(32),
    pos: new SharedArrayBuffer(16),
  };
}

/** Writer side, on the main thread. */
export class LogRingWriter {
  private readonly data: Uint8Array;
  private readonly ctrl: Int32Array;
  private readonly pos: BigInt64Array;
  private readonly size: number;
  private head = 0;
  /** The durable offset as last read: free space is computed from it and re-read only when it
   *  looks short, so most appends skip a BigInt load. */
  private durableSeen = 0;

  /** `startOffset`: where the logical offsets begin (a star always starts at 0; tests start near 2^31
   *  to cross the head's 31-bit wrap). The flusher must be started with the same durable offset. */
  constructor(bufs: RingBuffers, startOffset = 0) {
    this.data = new Uint8Array(bufs.data);
    this.ctrl = new Int32Array(bufs.ctrl);
    this.pos = new BigInt64Array(bufs.pos);
    this.size = this.data.length;
    this.head = startOffset;
    this.durableSeen = startOffset;
    Atomics.store(this.pos, POS_DURABLE, BigInt(startOffset));
    Atomics.store(this.ctrl, CTRL_HEAD_LOW31, startOffset & LOW31);
  }

  get capacityBytes(): number { return this.size; }
  get headOffset(): number { return this.head; }
  durableOffset(): number { return Number(Atomics.load(this.pos, POS_DURABLE)); }
  failed(): boolean { return Atomics.load(this.ctrl, CTRL_FAILED) !== 0; }
  failureCause(): string { return walFailureText(Atomics.load(this.ctrl, CTRL_FAILED)); }
  currentFileNo(): number { return Atomics.load(this.ctrl, CTRL_FILE_NO); }

  /** After a failure, once the sequencer has failed every append not yet durable: asks the flusher
   *  to drop everything appended so far (it is never written) and to cut its file back to what was
   *  durable. The flusher clears the failure once it can write again. */
  discardUndurable(): void {
    Atomics.store(this.pos, POS_DISCARD_TO, BigInt(this.head));
    Atomics.add(this.ctrl, CTRL_DISCARD_REQ, 1);
    Atomics.add(this.ctrl, CTRL_HEAD_SIGNAL, 1);
    Atomics.notify(this.ctrl, CTRL_HEAD_SIGNAL);
  }

  /** Bytes the writer may still use without overwriting frames the flusher has not written. */
  private freeBytes(): number { return this.size - (this.head - this.durableSeen); }

  /** Copies a frame into the ring; returns its end offset, or -1 when the ring has no room yet. */
  tryAppend(frame: Uint8Array): number {
    let at = this.head % this.size;
    let pad = 0;
    if (at + frame.length > this.size) pad = this.size - at;
    if (frame.length + pad > this.freeBytes()) {
      this.durableSeen = this.durableOffset();
      if (frame.length + pad > this.freeBytes()) return -1;
    }
    if (pad > 0) {
      if (pad >= 4) this.data.fill(0, at, at + 4);
      this.head += pad;
      at = 0;
    }
    this.data.set(frame, at);
    this.head += frame.length;
    return this.head;
  }

  /** Makes everything appended so far visible to the flusher, and wakes it if it sleeps. The signal
   *  is bumped before the sleeping flag is read, and the flusher sets the flag before it waits on
   *  the signal (both sequentially consistent), so a publish can never slip past a falling-asleep
   *  flusher; while it is busy, no futex call is made at all. The publish that wakes it also clears
   *  the flag: the flusher takes a while to be scheduled on a busy machine, and every publish
   *  meanwhile would otherwise notify again (two futex calls each, under V8's one futex mutex;
   *  measured at 1.5 per append at 64 producers). A flusher that set the flag but has not waited
   *  yet finds the signal moved and does not sleep. */
  publish(): void {
    Atomics.store(this.ctrl, CTRL_HEAD_LOW31, this.head & LOW31);
    Atomics.add(this.ctrl, CTRL_HEAD_SIGNAL, 1);
    if (Atomics.load(this.ctrl, CTRL_FLUSHER_SLEEPING) !== 0 && Atomics.compareExchange(this.ctrl, CTRL_FLUSHER_SLEEPING, 1, 0) === 1) {
      Atomics.notify(this.ctrl, CTRL_HEAD_SIGNAL);
    }
  }

  durableSignal(): number { return Atomics.load(this.ctrl, CTRL_DURABLE_SIGNAL); }

  /** Resolves when the flusher has committed again since `seen` was read. */
  waitDurable(seen: number): Promise<unknown> {
    const r = Atomics.waitAsync(this.ctrl, CTRL_DURABLE_SIGNAL, seen);
    return r.async ? r.value : Promise.resolve(r.value);
  }

  /** The flusher is gone (crashed or exited): no append may be acknowledged any more, and every
   *  waiter is woken so pending appends fail instead of hanging. */
  markFailed(): void {
    Atomics.store(this.ctrl, CTRL_FAILED, WalFailure.FLUSHER_GONE);
    Atomics.add(this.ctrl, CTRL_DURABLE_SIGNAL, 1);
    Atomics.notify(this.ctrl, CTRL_DURABLE_SIGNAL);
  }

  stop(): void {
    Atomics.store(this.ctrl, CTRL_STOP, 1);
    Atomics.add(this.ctrl, CTRL_HEAD_SIGNAL, 1);
    Atomics.notify(this.ctrl, CTRL_HEAD_SIGNAL);
  }
}
