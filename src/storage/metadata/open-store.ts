// Picks the metadata backend the config names; the star and the credentials CLI open it the same way.

import { join } from 'node:path';
import type { MetadataConfig } from '../../config/config.ts';
import type { DependencyHealth } from '../dependency-health.ts';
import { META_JOURNAL_ENTRIES_MAX } from '../../config/limits.ts';
import { LocalMetadataStore } from './local-store.ts';
import type { MetadataStore } from './metadata-store.ts';
import { PostgresMetadataStore } from './postgres-store.ts';

/** `health` gets the store's outages (a star passes one that logs them and feeds /metrics). */
export function openMetadataStore(cfg: MetadataConfig, dataDir: string, health?: DependencyHealth): MetadataStore {
  return cfg.backend === 'postgres'
    ? new PostgresMetadataStore({ url: cfg.url, schema: cfg.schema, health })
    : new LocalMetadataStore(join(dataDir, 'meta'), META_JOURNAL_ENTRIES_MAX, health);
}
