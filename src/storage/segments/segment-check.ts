// A settled segment fetched back whole and checked (segment-format.ts segmentFault): what the
// auditor asks of every segment it verifies. The star runs it on the settle thread
// (workers/verify-task.ts), because checking a WAL file's worth of frames is a long synchronous
// pass: 312 ms for an 84 MB segment of 100 B appends, which on the event loop held every ack that long.

import type { SegmentMeta } from '../metadata/metadata-store.ts';
import type { ObjectStore } from '../objects/object-store.ts';
import { segmentFault } from './segment-format.ts';

/** The fault of a segment the store no longer has. */
export const SEGMENT_MISSING = 'missing from the object store';

export type CheckedSegment = Pick<SegmentMeta, 'object_key' | 'size_bytes' | 'footer_offset' | 'footer_bytes'>;

/** What is wrong with the stored segment (undefined: nothing). Throws when the store did not answer:
 *  that is no finding, and the check is tried again later. */
export async function checkStoredSegment(objects: ObjectStore, seg: CheckedSegment): Promise<string | undefined> {
  let bytes: Uint8Array;
  try {
    bytes = await objects.get(seg.object_key);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return SEGMENT_MISSING;
    throw err;
  }
  return segmentFault(bytes, seg);
}

/** checkStoredSegment for each, one at a time, in order. */
export async function checkStoredSegments(objects: ObjectStore, segs: readonly CheckedSegment[]): Promise<(string | undefined)[]> {
  const out: (string | undefined)[] = [];
  for (const seg of segs) out.push(await checkStoredSegment(objects, seg));
  return out;
}
