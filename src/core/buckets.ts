// The buckets a star knows (spec: Bucket; States: POST, PUT, DELETE): their rows in name order,
// written through the metadata store. A bucket exists for callers only once its row is durable; a
// row write whose outcome is unknown (the store failed mid-write) makes the bucket suspect, and
// the star acknowledges nothing until reconcile() has read it back.

import { LIST_PAGE_MAX } from '../config/limits.ts';
import type { BucketMeta, MetadataStore } from '../storage/metadata/metadata-store.ts';
import { ServiceError, invalid, notFound } from './errors.ts';
import { OrderedMap } from './ordered-keys.ts';
import type { BucketCreate, ListPage } from './service-api.ts';
import { DEFAULT_BUCKET_CONFIG, type BucketConfig, type BucketInfo } from './types.ts';

/** A bucket as the API shows it, from its row. */
export function bucketInfoOf(b: BucketMeta): BucketInfo {
  return { name: b.name, ...(b.config as unknown as BucketConfig), created_at_unix_ms: b.created_at_unix_ms, creation_token: b.creation_token };
}

export interface BucketsDeps {
  metadata: MetadataStore;
  clock: { nowMs(): number };
  /** The express storage class's bucket ('' or absent: none, and no bucket may default to express). */
  expressBucket?: string;
  /** This star as refusals name it. */
  starName: string;
  /** How many streams the bucket holds on this star (a bucket is deleted only empty). */
  streamsIn(name: string): number;
}

export class Buckets {
  private readonly rows = new OrderedMap<BucketMeta>();
  /** Creations whose row write is still pending (a converging retry waits for it). */
  private readonly creating = new Map<string, Promise<void>>();
  /** Buckets whose last row write failed: read back before anything else is written. */
  private readonly suspects = new Set<string>();

  constructor(private readonly d: BucketsDeps) {}

  load(rows: Iterable<BucketMeta>): void {
    for (const b of rows) this.rows.set(b.name, b);
  }

  get(name: string): BucketMeta | undefined { return this.rows.get(name); }
  has(name: string): boolean { return this.rows.has(name); }

  require(name: string): BucketMeta {
    const b = this.rows.get(name);
    if (!b) throw notFound(`bucket ${name} not found`);
    return b;
  }

  /** True while a bucket row write's outcome is unknown. */
  get suspect(): boolean { return this.suspects.size > 0; }

  info(b: BucketMeta): BucketInfo { return bucketInfoOf(b); }

  async create(name: string, body: BucketCreate): Promise<BucketInfo> {
    const token = body.creation_token ?? '';
    const existing = this.rows.get(name);
    if (existing) {
      if (token !== '' && existing.creation_token === token) {
        await this.creating.get(name); // converge only once the creation is durable
        if (this.rows.get(name) === existing) return this.info(existing);
        return this.create(name, body);
      }
      throw new ServiceError('already_exists', `bucket ${name} already exists`);
    }
    const meta: BucketMeta = { name, config: { ...this.configOf(body) }, created_at_unix_ms: this.d.clock.nowMs(), creation_token: token };
    this.rows.set(name, meta);
    const write = this.rowWrite(name, this.d.metadata.putBucket(meta));
    this.creating.set(name, write.then(() => undefined, () => undefined));
    try {
      await write;
    } catch (err) {
      if (this.rows.get(name) === meta) this.rows.delete(name); // not durable: it never existed
      throw err;
    } finally {
      this.creating.delete(name);
    }
    return this.info(meta);
  }

  /** PUT replaces the caller-writable config whole: unset fields fall back to the defaults. */
  async update(name: string, body: Partial<BucketConfig>): Promise<BucketInfo> {
    const b = this.require(name);
    const meta: BucketMeta = { ...b, config: { ...this.configOf(body) } };
    this.rows.set(name, meta);
    try {
      await this.rowWrite(name, this.d.metadata.putBucket(meta));
    } catch (err) {
      if (this.rows.get(name) === meta) this.rows.set(name, b);
      throw err;
    }
    return this.info(meta);
  }

  async delete(name: string): Promise<void> {
    const b = this.require(name);
    const streams = this.d.streamsIn(name);
    if (streams > 0) throw new ServiceError('bucket_not_empty', `bucket ${name} is not empty: delete its ${streams} stream(s) first`);
    this.rows.delete(name);
    try {
      await this.rowWrite(name, this.d.metadata.deleteBucket(name));
    } catch (err) {
      if (!this.rows.has(name)) this.rows.set(name, b);
      throw err;
    }
  }

  list(startAfter: string, limit: number): ListPage<BucketInfo> {
    const { entries, more } = this.rows.page(startAfter, Math.min(Math.max(limit, 1), LIST_PAGE_MAX));
    return { items: entries.map(([, b]) => this.info(b)), next: more ? entries[entries.length - 1][0] : '' };
  }

  /** The bucket as the shared store holds it now (absent: deleted, unless streams of it are held here). */
  sync(name: string, row: BucketMeta | undefined): void {
    if (row) this.rows.set(name, row);
    else if (this.d.streamsIn(name) === 0) this.rows.delete(name);
  }

  /** Reads every suspect bucket back and takes what the store holds as the truth (what a restart
   *  would load). Stops, leaving the rest suspect, when the store stops answering. */
  async reconcile(): Promise<void> {
    for (const name of [...this.suspects]) {
      if (!this.d.metadata.healthy()) return;
      const row = await this.d.metadata.readBucket(name);
      if (row || this.rows.has(name)) this.sync(name, row);
      this.suspects.delete(name);
    }
  }

  /** The config a create or a replace asks for, over the defaults. */
  private configOf(body: Partial<BucketConfig>): BucketConfig {
    const config: BucketConfig = { ...DEFAULT_BUCKET_CONFIG };
    for (const k of Object.keys(config) as (keyof BucketConfig)[]) {
      const v = body[k];
      if (v !== undefined) (config as unknown as Record<string, unknown>)[k] = v;
    }
    // A bucket whose streams would default to express needs somewhere to put their objects.
    if (config.default_class === 'express' && !this.d.expressBucket) {
      throw invalid(`${this.d.starName} has no express bucket set (--express-bucket); a bucket cannot default its streams to class express`);
    }
    return config;
  }

  /** A row write: when it fails, the store may hold it or not, so the row is read back. */
  private rowWrite(name: string, write: Promise<void>): Promise<void> {
    return write.catch((err: unknown) => {
      this.suspects.add(name);
      throw err;
    });
  }
}
