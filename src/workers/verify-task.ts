// Piscina task: the auditor's check of one settled segment, on the settle thread. The worker fetches
// the segment through its own store client, so no segment bytes cross threads; only the fault text
// (or nothing) comes back.

import type { ObjectStoreConfig } from '../storage/objects/object-store.ts';
import { checkStoredSegment, type CheckedSegment } from '../storage/segments/segment-check.ts';
import { workerStore } from './worker-store.ts';

export interface VerifyTask {
  store: ObjectStoreConfig;
  seg: CheckedSegment;
}

export async function verifySegment(task: VerifyTask): Promise<string | undefined> {
  return checkStoredSegment(workerStore(task.store), task.seg);
}
