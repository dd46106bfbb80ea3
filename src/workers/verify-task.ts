// Piscina task: the auditor's check of a group of settled segments, on the settle thread. The worker
// fetches each segment through its own store client, so no segment bytes cross threads; only the
// fault texts (or nothing) come back. A group per task, not a segment: 100,000 one-record streams
// settle into 100,000 small segments, and a task each made their checks take 137 s.

import type { ObjectStoreConfig } from '../storage/objects/object-store.ts';
import { checkStoredSegments, type CheckedSegment } from '../storage/segments/segment-check.ts';
import { workerStore } from './worker-store.ts';

export interface VerifyTask {
  store: ObjectStoreConfig;
  segs: CheckedSegment[];
}

export async function verifySegments(task: VerifyTask): Promise<(string | undefined)[]> {
  return checkStoredSegments(workerStore(task.store), task.segs);
}
