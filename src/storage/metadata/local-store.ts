// The `local` metadata backend: state in memory, made durable by an append-only journal of
// checksummed JSON entries (group-committed with fdatasync) plus a snapshot that the journal is
// compacted into. A torn journal tail is cut at the last whole entry on load.

import { closeSync, existsSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32c } from '../format/crc32c.ts';
import { MetadataUnavailableError, type BucketMeta, type CredentialMeta, type MetadataStore, type MetaState, type StreamMeta } from './metadata-store.ts';

type Entry =
  | { op: 'bucket'; b: BucketMeta }
  | { op: 'bucket-del'; name: string }
  | { op: 'streams'; s: StreamMeta[] }
  | { op: 'stream-del'; bucket: string; key: string }
  | { op: 'cred'; c: CredentialMeta };

const ENTRY_HEADER_BYTES = 8;

const addr = (bucket: string, key: string): string => `${bucket}\u0000${key}`;

export class LocalMetadataStore implements MetadataStore {
  private readonly dir: string;
  private readonly buckets = new Map<string, BucketMeta>();
  private readonly streams = new Map<string, StreamMeta>();
  private readonly deleted = new Map<string, { bucket: string; key: string }>();
  private readonly credentials = new Map<string, CredentialMeta>();
  private fh: FileHandle | undefined;
  private entriesSinceSnapshot = 0;
  private pending: { bytes: Buffer; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private flushing = false;
  /** Set after a failed write: the journal may end in torn bytes, so nothing more is written (a
   *  later entry behind them would be lost at load) and the star must restart to recover. */
  private failed: unknown;

  constructor(dir: string, private readonly journalEntriesMax: number) {
    this.dir = dir;
  }

  private get journalPath(): string { return join(this.dir, 'journal.log'); }
  private get snapshotPath(): string { return join(this.dir, 'snapshot.json'); }

  async load(): Promise<MetaState> {
    mkdirSync(this.dir, { recursive: true });
    if (existsSync(this.snapshotPath)) {
      const snap = JSON.parse(readFileSync(this.snapshotPath, 'utf8')) as MetaState;
      for (const b of snap.buckets) this.buckets.set(b.name, b);
      for (const s of snap.streams) this.streams.set(addr(s.bucket, s.key), s);
      for (const d of snap.deleted) this.deleted.set(addr(d.bucket, d.key), d);
      for (const c of snap.credentials) this.credentials.set(c.key_id, c);
    }
    if (existsSync(this.journalPath)) {
      const buf = readFileSync(this.journalPath);
      let off = 0;
      while (off + ENTRY_HEADER_BYTES <= buf.length) {
        const n = buf.readUInt32LE(off);
        if (off + ENTRY_HEADER_BYTES + n > buf.length) break;
        const body = buf.subarray(off + ENTRY_HEADER_BYTES, off + ENTRY_HEADER_BYTES + n);
        if (buf.readUInt32LE(off + 4) !== crc32c(body)) break;
        this.apply(JSON.parse(body.toString('utf8')) as Entry);
        this.entriesSinceSnapshot += 1;
        off += ENTRY_HEADER_BYTES + n;
      }
      if (off < buf.length) {
        const fd = openSync(this.journalPath, 'r+');
        ftruncateSync(fd, off);
        fsyncSync(fd);
        closeSync(fd);
      }
    }
    this.fh = await open(this.journalPath, 'a');
    return this.state();
  }

  private state(): MetaState {
    return {
      buckets: [...this.buckets.values()],
      streams: [...this.streams.values()],
      deleted: [...this.deleted.values()],
      credentials: [...this.credentials.values()],
    };
  }

  private apply(e: Entry): void {
    switch (e.op) {
      case 'bucket': this.buckets.set(e.b.name, e.b); break;
      case 'bucket-del':
        this.buckets.delete(e.name);
        // A new bucket of the same name starts with no deleted addresses (a never-created stream is 404).
        for (const [k, d] of this.deleted) if (d.bucket === e.name) this.deleted.delete(k);
        break;
      case 'streams':
        for (const s of e.s) {
          this.streams.set(addr(s.bucket, s.key), s);
          this.deleted.delete(addr(s.bucket, s.key));
        }
        break;
      case 'stream-del':
        this.streams.delete(addr(e.bucket, e.key));
        this.deleted.set(addr(e.bucket, e.key), { bucket: e.bucket, key: e.key });
        break;
      case 'cred': this.credentials.set(e.c.key_id, e.c); break;
    }
  }

  private write(e: Entry): Promise<void> {
    if (this.failed !== undefined) return Promise.reject(new MetadataUnavailableError(`metadata journal failed earlier: ${String(this.failed)}`));
    this.apply(e);
    const body = Buffer.from(JSON.stringify(e), 'utf8');
    const bytes = Buffer.allocUnsafe(ENTRY_HEADER_BYTES + body.length);
    bytes.writeUInt32LE(body.length, 0);
    bytes.writeUInt32LE(crc32c(body), 4);
    body.copy(bytes, ENTRY_HEADER_BYTES);
    return new Promise((resolve, reject) => {
      this.pending.push({ bytes, resolve, reject });
      void this.flush();
    });
  }

  /** Group commit: every entry queued while one fdatasync runs goes out with the next. */
  private async flush(): Promise<void> {
    if (this.flushing || !this.fh) return;
    this.flushing = true;
    try {
      while (this.pending.length) {
        const batch = this.pending;
        this.pending = [];
        try {
          if (this.failed !== undefined) throw this.failed;
          await this.fh.writev(batch.map((p) => p.bytes));
          await this.fh.datasync();
          this.entriesSinceSnapshot += batch.length;
          for (const p of batch) p.resolve();
        } catch (err) {
          this.failed ??= err;
          const refusal = new MetadataUnavailableError(`metadata journal write failed: ${(err as Error).message}`, { cause: err });
          for (const p of batch) p.reject(refusal);
          continue;
        }
        if (this.entriesSinceSnapshot >= this.journalEntriesMax) {
          // A failed compaction leaves the journal whole and in use; it is tried again later.
          await this.compact().catch(() => undefined);
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  /** Writes the whole state as a snapshot (temp + fsync + rename) and starts an empty journal. */
  private async compact(): Promise<void> {
    const tmp = `${this.snapshotPath}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.state()));
    const fd = openSync(tmp, 'r+');
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, this.snapshotPath);
    await this.fh?.truncate(0);
    await this.fh?.datasync();
    const dir = openSync(this.dir, 'r');
    fsyncSync(dir);
    closeSync(dir);
    this.entriesSinceSnapshot = 0;
  }

  putBucket(b: BucketMeta): Promise<void> { return this.write({ op: 'bucket', b }); }
  deleteBucket(name: string): Promise<void> { return this.write({ op: 'bucket-del', name }); }
  putStream(s: StreamMeta): Promise<void> { return this.write({ op: 'streams', s: [s] }); }
  putStreams(s: StreamMeta[]): Promise<void> { return this.write({ op: 'streams', s }); }
  deleteStream(bucket: string, key: string): Promise<void> { return this.write({ op: 'stream-del', bucket, key }); }
  putCredential(c: CredentialMeta): Promise<void> { return this.write({ op: 'cred', c }); }
  async listCredentials(): Promise<CredentialMeta[]> { return [...this.credentials.values()]; }
  healthy(): boolean { return this.failed === undefined; }

  async close(): Promise<void> {
    while (this.flushing || this.pending.length) await new Promise((r) => setImmediate(r));
    await this.fh?.close();
    this.fh = undefined;
  }
}
