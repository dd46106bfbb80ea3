// Piscina task: build one stream's settled segment from its WAL frames (sealing each frame's crc32c
// off the event loop) and upload it through the object store.

import { frameInfo, frameTimestamps, contentBytes, forEachRecord } from '../storage/format/record-codec.ts';
import type { SegmentMeta } from '../storage/metadata/metadata-store.ts';
import type { ObjectStoreConfig, ObjectStore } from '../storage/objects/object-store.ts';
import { FsObjectStore } from '../storage/objects/fs-store.ts';
import { buildSegment } from '../storage/segments/segment-format.ts';

export interface SettleTask {
  store: ObjectStoreConfig;
  objectKey: string;
  frames: Uint8Array[];
}

let store: ObjectStore | undefined;

export default async function settle(task: SettleTask): Promise<SegmentMeta> {
  store ??= new FsObjectStore(task.store.dir);
  const seg = buildSegment(task.frames);
  let content = 0;
  for (const f of task.frames) forEachRecord(f, 0, 0, (r) => { content += contentBytes(r); return true; });
  await store.put(task.objectKey, seg.bytes);
  const first = frameInfo(task.frames[0]);
  const lastFrame = task.frames[task.frames.length - 1];
  const last = frameInfo(lastFrame);
  const lastTs = frameTimestamps(lastFrame);
  return {
    object_key: task.objectKey,
    first_seq: first.firstSeq,
    end_seq: last.firstSeq + last.recordCount,
    min_ts: seg.entries[0].minTs,
    max_ts: lastTs[lastTs.length - 1] ?? 0,
    content_bytes: content,
    size_bytes: seg.bytes.length,
    footer_offset: seg.footerOffset,
    footer_bytes: seg.footerBytes,
  };
}
