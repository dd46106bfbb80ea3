// Opens the object store a config names: on the main thread (reads, trims, presigning) and in each
// settle worker (uploads), from the same plain config.

import { FsObjectStore } from './fs-store.ts';
import type { ObjectStoreConfig } from './object-store.ts';
import { S3ObjectStore } from './s3-store.ts';

export function openObjectStore(cfg: ObjectStoreConfig): FsObjectStore | S3ObjectStore {
  return cfg.backend === 's3' ? new S3ObjectStore(cfg) : new FsObjectStore(cfg.dir);
}
