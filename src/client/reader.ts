// Reads as async iterators: page after page from a sequence number, a timestamp or an offset before
// the tail, until a record limit, a time bound (`untilMs`, exclusive) or the tail as it stood when the
// last page was read. A read never waits for new records; `subscribe` does.

import { READ_RECORDS_MAX } from '../protocol/limits.ts';
import type { RecordPage } from '../protocol/records.ts';
import { SvcError } from './errors.ts';
import type { ReadRecord, ReadStart } from './types.ts';

/** Records asked per page by default (the server clamps a page at 8192 records and 8 MiB). */
export const READ_PAGE_RECORDS_DEFAULT = 1000;
/** The server's cap on records per page (the spec's; a star's flag may change it). */
export const READ_PAGE_RECORDS_MAX = READ_RECORDS_MAX;
/** Empty pages below the tail tolerated in a row before the read is declared broken: the server
 *  always returns at least one record below the tail unless a time bound stopped it. */
const EMPTY_PAGES_BELOW_TAIL_MAX = 3;

export interface PageQuery {
  start: ReadStart;
  limit: number;
  maxBytes?: number;
  untilMs?: number;
  clamp?: boolean;
  signal?: AbortSignal;
}

/** One page as the server answers it: the records and the tail as of the read. */
export type ReadPage = RecordPage;

export interface ReadOptions {
  /** Where to start (exactly one of seqNum, timestampMs, tailOffset). */
  start: ReadStart;
  /** Stop after this many records (all records up to the tail when absent). */
  limit?: number;
  /** Exclusive upper time bound: records stamped at or after it end the read. */
  untilMs?: number;
  /** Pull a start below the trim watermark up to the earliest retained record (else `trimmed`). */
  clamp?: boolean;
  /** Records per request (at most 8192). */
  pageRecords?: number;
  /** Payload bytes per request (0: the server's 8 MiB). */
  pageBytesMax?: number;
  signal?: AbortSignal;
}

/** Pages of records, each as the server answered it, ending per ReadOptions. */
export async function* readPages(fetchPage: (q: PageQuery) => Promise<ReadPage>, opts: ReadOptions): AsyncGenerator<ReadPage> {
  const pageRecords = Math.min(Math.max(1, opts.pageRecords ?? READ_PAGE_RECORDS_DEFAULT), READ_PAGE_RECORDS_MAX);
  let remaining = opts.limit ?? Number.POSITIVE_INFINITY;
  let start: ReadStart = opts.start;
  let emptyBelowTail = 0;
  let clamp = opts.clamp ?? false;
  while (remaining > 0) {
    const page = await fetchPage({
      start,
      limit: Math.min(pageRecords, remaining),
      ...(opts.pageBytesMax !== undefined ? { maxBytes: opts.pageBytesMax } : {}),
      ...(opts.untilMs !== undefined ? { untilMs: opts.untilMs } : {}),
      ...(clamp ? { clamp } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const records = page.records.length > remaining ? page.records.slice(0, remaining) : page.records;
    if (records.length > 0) yield { records, tail: page.tail };
    remaining -= records.length;
    const last = records.at(-1);
    const next = last ? last.seq_num + 1 : 'seqNum' in start ? start.seqNum : undefined;
    if (next === undefined || next >= page.tail.seq_num) return; // caught up (or an empty stream)
    if (records.length === 0) {
      if (opts.untilMs !== undefined) return; // the next record is at or past the time bound
      if (++emptyBelowTail >= EMPTY_PAGES_BELOW_TAIL_MAX) {
        throw new SvcError('protocol', `empty pages at ${next}, below the tail ${page.tail.seq_num}`);
      }
    } else {
      emptyBelowTail = 0;
    }
    start = { seqNum: next };
    clamp = false; // only the first start is clamped: later pages continue exactly
  }
}

/** Records one by one. */
export async function* readRecords(fetchPage: (q: PageQuery) => Promise<ReadPage>, opts: ReadOptions): AsyncGenerator<ReadRecord> {
  for await (const page of readPages(fetchPage, opts)) yield* page.records;
}
