// One object store client per worker thread, opened by the first task that needs it (every task of
// a pool carries the same configuration).

import type { ObjectStore, ObjectStoreConfig } from '../storage/objects/object-store.ts';
import { openObjectStore } from '../storage/objects/open-store.ts';

let store: ObjectStore | undefined;

export function workerStore(cfg: ObjectStoreConfig): ObjectStore {
  store ??= openObjectStore(cfg);
  return store;
}
