// Piscina task: settle one sealed WAL file. The worker reads the file itself (no record bytes cross
// threads), groups the intact frames of the requested streams, builds one segment per stream (frames
// with their crc32c, then the footer index) and uploads it through the object store.

import { readFile } from 'node:fs/promises';
import { FRAME_RECORDS, bytesToUuid, frameIsIntact, readU32, readU64 } from '../storage/format/record-codec.ts';
import type { SegmentMeta } from '../storage/metadata/metadata-store.ts';
import type { ObjectStore, ObjectStoreConfig } from '../storage/objects/object-store.ts';
import { buildSegment } from '../storage/segments/segment-format.ts';
import { segmentKey } from '../storage/segments/segment-key.ts';
import { SETTLE_UPLOADS_CONCURRENT } from '../config/limits.ts';
import { workerStore } from './worker-store.ts';

export interface SettleTask {
  store: ObjectStoreConfig;
  walPath: string;
  streams: { streamId: string; fromSeq: number }[];
}

export interface SettledSegment { streamId: string; segment: SegmentMeta }

export default async function settle(task: SettleTask): Promise<SettledSegment[]> {
  return settleWalBytes(await readFile(task.walPath), task.streams, workerStore(task.store));
}

/** A cluster star's settle: the frames come from its memory, laid back to back (cluster/mem-settler.ts). */
export interface SettleBytesTask {
  store: ObjectStoreConfig;
  bytes: Uint8Array;
  streams: SettleTask['streams'];
}

export async function settleBytes(task: SettleBytesTask): Promise<SettledSegment[]> {
  return settleWalBytes(task.bytes, task.streams, workerStore(task.store));
}

/** Settles the whole frames of one WAL file's bytes: one segment per requested stream, uploaded to
 *  `objects`. (The seeded simulation in test/sim calls it with an in-memory WAL and store.) */
export async function settleWalBytes(buf: Uint8Array, streams: SettleTask['streams'], objects: ObjectStore): Promise<SettledSegment[]> {
  const want = new Map(streams.map((s) => [s.streamId, s.fromSeq]));
  const byStream = new Map<string, Uint8Array[]>();
  let off = 0;
  // Runs of frames are mostly one stream's: its id is made a string only where the id changes.
  let idAt = -1;
  let streamId = '';
  while (off < buf.length && frameIsIntact(buf, off, buf.length - off)) {
    const frameBytes = readU32(buf, off);
    if (buf[off + 8] === FRAME_RECORDS) {
      if (idAt < 0 || !sameStreamId(buf, idAt, off)) streamId = bytesToUuid(buf, off + 16);
      idAt = off;
      const from = want.get(streamId);
      if (from !== undefined && readU64(buf, off + 32) >= from) {
        let list = byStream.get(streamId);
        if (!list) byStream.set(streamId, (list = []));
        list.push(buf.subarray(off, off + frameBytes));
      }
    }
    off += frameBytes;
  }
  // Uploads run SETTLE_UPLOADS_CONCURRENT at a time: one at a time, a WAL file holding 14,000 small
  // streams took 14 s on the fs store (two syncs an object) and longer on S3 (a round trip each).
  // Each segment is built when its upload starts, so at most that many are held at once.
  const jobs = [...byStream];
  const out: SettledSegment[] = new Array<SettledSegment>(jobs.length);
  let next = 0;
  let failed = false;
  const uploader = async (): Promise<void> => {
    while (next < jobs.length && !failed) {
      const i = next++;
      const [streamId, frames] = jobs[i];
      const built = segmentOf(streamId, frames);
      try {
        await objects.put(built.segment.object_key, built.bytes);
      } catch (err) {
        failed = true; // the others take no new upload; the file is settled again from the start
        throw err;
      }
      out[i] = { streamId, segment: built.segment };
    }
  };
  await Promise.all(Array.from({ length: Math.min(SETTLE_UPLOADS_CONCURRENT, jobs.length) }, uploader));
  return out;
}

/** Whether the frames at `a` and `b` carry the same stream id (16 bytes from offset 16). */
function sameStreamId(buf: Uint8Array, a: number, b: number): boolean {
  for (let i = 16; i < 32; i++) if (buf[a + i] !== buf[b + i]) return false;
  return true;
}

/** One stream's frames from a WAL file as a segment: its bytes and its row entry. */
function segmentOf(streamId: string, frames: Uint8Array[]): { bytes: Uint8Array; segment: SegmentMeta } {
  const seg = buildSegment(frames, true); // verified intact by the caller: their checksums stand
  return {
    bytes: seg.bytes,
    segment: {
      object_key: segmentKey(streamId, seg.firstSeq, seg.endSeq),
      first_seq: seg.firstSeq,
      end_seq: seg.endSeq,
      min_ts: seg.minTs,
      max_ts: seg.maxTs,
      content_bytes: seg.contentBytes,
      size_bytes: seg.bytes.length,
      footer_offset: seg.footerOffset,
      footer_bytes: seg.footerBytes,
    },
  };
}
