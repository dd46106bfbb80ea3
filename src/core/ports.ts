// Ports: what core/ needs from the outside world, passed in by main.ts (the composition root), so the
// sequencer never reaches for a clock, a timer, randomness, a thread or a disk by itself.

import type { SegmentMeta } from '../storage/metadata/metadata-store.ts';

export interface Clock { nowMs(): number }

export interface Timers {
  setTimeout(fn: () => void, ms: number): { cancel(): void };
  setInterval(fn: () => void, ms: number): { cancel(): void };
  /** Runs `fn` after the current I/O callbacks (setImmediate): lets acks go out before fan-out. */
  defer(fn: () => void): void;
}

export interface Ids { uuid(): string }

/** Who leads each stream, and at which epoch (DESIGN.md: Cluster, Leases). The star sequences a
 *  stream's appends and acknowledges them only at the epoch this port answers: an append sequenced
 *  at one epoch and made durable after the port answers another (or none) is not acknowledged, and
 *  the stream leaves this star. The same epochs guard the metadata store's stream writes. Serving
 *  validity (until when a lease may be served from memory) is the leadership's own business: it
 *  answers undefined once this star may no longer write the stream. */
export interface Leadership {
  /** The epoch this star leads (bucket, key) at; undefined when it does not lead it. */
  epochOf(bucket: string, key: string): number | undefined;
}

/** One star alone: it leads every stream, always, at epoch 0 (there are no lease rows; the admin
 *  views show epoch 0 on a star alone). */
export const soleLeadership: Leadership = { epochOf: () => 0 };

/** The commit log: where the star puts each sequenced frame and learns when it is durable. On a star
 *  alone it is the log ring, drained by the flusher thread into the local WAL with fdatasync
 *  (storage/wal/log-ring.ts); in a cluster, one object per group commit plus one PostgreSQL
 *  statement that records each stream's chunk under its lease epoch (cluster/commit-log.ts), which
 *  refuses, entry by entry, what a stale leader sequenced (takeRefusal). */
export interface LogPort {
  readonly capacityBytes: number;
  /** Copies a frame in; returns its end offset, or -1 when there is no room yet. */
  tryAppend(frame: Uint8Array): number;
  publish(): void;
  durableOffset(): number;
  durableSignal(): number;
  waitDurable(seen: number): Promise<unknown>;
  /** True while the WAL cannot be written (disk full, an I/O error, the flusher gone). */
  failed(): boolean;
  /** Why, in a few words ('' when it is not failing). */
  failureCause(): string;
  /** After a failure: everything appended and not durable is dropped, never to be written; the
   *  failure clears by itself once the WAL can be written again. */
  discardUndurable(): void;
  /** The WAL file new frames go to (read after a failure clears). */
  currentFileNo(): number;
  /** A log that commits stream by stream (the cluster's): why the entry ending at `end` was not
   *  acknowledged although the durable offset passed it, once; undefined when it committed. */
  takeRefusal?(end: number): Refusal | undefined;
  /** A log that commits stream by stream: the stream's sequencing went back to its committed tail
   *  (a refusal with `rewind`), so none of its frames appended so far ever commits; those appended
   *  from now on may. */
  rewind?(streamId: string): void;
}

/** An entry the log did not acknowledge: `cause` in a few words, and whether it may have been stored
 *  all the same (its commit's outcome could not be learnt: the caller must look before retrying). */
export interface Refusal {
  cause: string;
  outcomeUnknown: boolean;
  /** Certainly not stored, and the stream's lease not in question (a cluster's group commit whose
   *  object never reached the object store, so nothing was asked of PostgreSQL): the star keeps the
   *  stream, its committed tail still served from memory, and sequences it again from that tail
   *  (LogPort.rewind) rather than dropping it, which would leave every later request to reload the
   *  tail from the object store that just failed. */
  rewind?: boolean;
  /** Refused only because an earlier entry of its stream was (or because its stream was reloaded or
   *  rewound since it was sequenced): that earlier refusal decided what became of the stream. */
  followOn?: boolean;
}

/** A stream whose frames in a sealed WAL file should settle, from `fromSeq` on. */
export interface SettleRequest {
  streamId: string;
  fromSeq: number;
}

/** Builds settled segments from a sealed WAL file and uploads them (a piscina worker reads the file
 *  itself, so no record bytes cross threads). Returns one segment per stream that had frames. */
export interface SegmentSettler {
  settle(fileNo: number, streams: SettleRequest[]): Promise<{ streamId: string; segment: SegmentMeta }[]>;
}

/** Fetches settled segments back and checks them (storage/segments/segment-check.ts): what the
 *  auditor verifies. The star runs it off the event loop (a piscina worker, one task for a group of
 *  segments); a test may run it in process. */
export interface SegmentChecker {
  /** What is wrong with each stored segment (undefined: nothing), in order. Throws when the store
   *  did not answer. */
  check(segs: SegmentMeta[]): Promise<(string | undefined)[]>;
}

/** Removes a sealed, fully settled WAL file. */
export interface WalJanitor {
  removeFile(fileNo: number): void;
}
