// Piscina task: settle one sealed WAL file. The worker reads the file itself (no record bytes cross
// threads), groups the intact frames of the requested streams, builds one segment per stream (frames
// with their crc32c, then the footer index) and uploads it through the object store.

import { readFile } from 'node:fs/promises';
import { FRAME_RECORDS, contentBytes, forEachRecord, frameInfo, frameIsIntact, frameTimestamps } from '../storage/format/record-codec.ts';
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
  const buf = Buffer.from(task.bytes.buffer, task.bytes.byteOffset, task.bytes.length);
  return settleWalBytes(buf, task.streams, workerStore(task.store));
}

/** Settles the whole frames of one WAL file's bytes: one segment per requested stream, uploaded to
 *  `objects`. (The seeded simulation in test/sim calls it with an in-memory WAL and store.) */
export async function settleWalBytes(buf: Buffer, streams: SettleTask['streams'], objects: ObjectStore): Promise<SettledSegment[]> {
  const want = new Map(streams.map((s) => [s.streamId, s.fromSeq]));
  const byStream = new Map<string, Uint8Array[]>();
  let off = 0;
  while (off < buf.length && frameIsIntact(buf, off, buf.length - off)) {
    const info = frameInfo(buf, off);
    const from = want.get(info.streamId);
    if (info.kind === FRAME_RECORDS && from !== undefined && info.firstSeq >= from) {
      let list = byStream.get(info.streamId);
      if (!list) byStream.set(info.streamId, (list = []));
      list.push(buf.subarray(off, off + info.frameBytes));
    }
    off += info.frameBytes;
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

/** One stream's frames from a WAL file as a segment: its bytes and its row entry. */
function segmentOf(streamId: string, frames: Uint8Array[]): { bytes: Uint8Array; segment: SegmentMeta } {
  const seg = buildSegment(frames, true); // verified intact by the caller: their checksums stand
  let content = 0;
  for (const f of frames) forEachRecord(f, 0, 0, (r) => { content += contentBytes(r); return true; });
  const first = frameInfo(frames[0]);
  const lastFrame = frames[frames.length - 1];
  const last = frameInfo(lastFrame);
  const lastTs = frameTimestamps(lastFrame);
  const endSeq = last.firstSeq + last.recordCount;
  return {
    bytes: seg.bytes,
    segment: {
      object_key: segmentKey(streamId, first.firstSeq, endSeq),
      first_seq: first.firstSeq,
      end_seq: endSeq,
      min_ts: seg.entries[0].minTs,
      max_ts: lastTs[lastTs.length - 1] ?? 0,
      content_bytes: content,
      size_bytes: seg.bytes.length,
      footer_offset: seg.footerOffset,
      footer_bytes: seg.footerBytes,
    },
  };
}
