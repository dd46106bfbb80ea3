// The `local` metadata backend: state in memory, made durable by an append-only journal of
// checksummed JSON entries (group-committed with fdatasync) plus a snapshot that the journal is
// compacted into.
//
// Each group commit is one write that starts with a `group` entry giving the bytes of the entries
// after it, so a load tells a torn tail from damage: a group is written only after the one before it
// was synced, so only the last group can be torn (it is cut, and none of its entries applied: none
// was acknowledged), while a bad entry with anything after its group was synced and acknowledged,
// and the store refuses to load rather than silently drop it and every entry after it. Entries
// written before groups existed (one per entry) are still read; a bad one with no group after it is
// cut as a torn tail.
//
// Stream rows are held packed (packed-row.ts), one string each, and the snapshot is a line per row
// after a header line, so a million streams load and compact without one giant JSON document (past
// about 512 MiB V8 cannot even hold it as a string) and without a million object graphs. The
// journal is compacted once it is META_JOURNAL_ENTRIES_MAX entries or META_JOURNAL_BYTES_MAX long, and
// a quarter of the snapshot's bytes: each compaction rewrites every row, so it must come rarer as rows
// grow, and a restart replays at most that quarter.
//
// A failed journal write (a full disk, EIO) makes the store unhealthy and refuses writes; with
// backoff it cuts the journal back to its last synced entry, proves a small entry can be written and
// synced, and reloads its maps from disk (a failed batch's entries were applied to them before the
// write), so what it serves is exactly what a restart would load.

import { closeSync, existsSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, unlinkSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { META_JOURNAL_BYTES_MAX, META_JOURNAL_PROBE_BYTES, META_JOURNAL_RETRY_MS_MAX, META_JOURNAL_RETRY_MS_MIN } from '../../config/limits.ts';
import { DependencyHealth } from '../dependency-health.ts';
import { crc32c } from '../format/crc32c.ts';
import { MetadataUnavailableError, type BucketMeta, type CredentialMeta, type MetadataStore, type MetaState, type StoredFormat, type StreamMeta, type StreamRows } from './metadata-store.ts';
import { packRow, unpackRow, type PackedRow } from './packed-row.ts';
import { BootError } from '../../config/boot-error.ts';

type Entry =
  | { op: 'bucket'; b: BucketMeta }
  | { op: 'bucket-del'; name: string }
  /** Stream rows as objects: what journals written before rows were packed hold. */
  | { op: 'streams'; s: StreamMeta[] }
  /** Stream rows, packed: a third of the bytes, and replayed without unpacking. */
  | { op: 'rows'; r: [bucket: string, key: string, packed: PackedRow][] }
  | { op: 'stream-del'; bucket: string; key: string }
  | { op: 'cred'; c: CredentialMeta }
  | { op: 'format'; f: StoredFormat }
  /** Written by the recovery probe; changes nothing. */
  | { op: 'nop'; pad: string }
  /** Opens a group commit: the entries that follow it, `bytes` long, were written and synced together. */
  | { op: 'group'; bytes: number };

/** An entry whose checksum matched, and where the next one starts. */
interface ReadEntry { e: Entry; next: number }

const ENTRY_HEADER_BYTES = 8;
/** The snapshot's first line: everything but the stream rows, which follow one per line. */
interface SnapshotHeader {
  snapshot_version: 2;
  format?: StoredFormat;
  buckets: BucketMeta[];
  deleted: { bucket: string; key: string }[];
  credentials: CredentialMeta[];
  /** Stream lines that follow: a snapshot with fewer is refused, never half loaded. */
  streams: number;
}
/** A snapshot is written in chunks of about this many bytes (the rows are copied first, so the
 *  event loop is never held for the whole file). */
const SNAPSHOT_CHUNK_BYTES = 1 << 20;
/** The journal is compacted only once its bytes reach this share of the snapshot's. */
const JOURNAL_SNAPSHOT_RATIO_MIN = 0.25;

const addr = (bucket: string, key: string): string => `${bucket}\u0000${key}`;
const splitAddr = (a: string): [string, string] => {
  const i = a.indexOf('\u0000'); // bucket names hold no NUL; keys may
  return [a.slice(0, i), a.slice(i + 1)];
};

export class LocalMetadataStore implements MetadataStore {
  private readonly dir: string;
  private readonly buckets = new Map<string, BucketMeta>();
  /** Stream rows by address, packed. */
  private readonly streams = new Map<string, PackedRow>();
  private readonly deleted = new Map<string, { bucket: string; key: string }>();
  private readonly credentials = new Map<string, CredentialMeta>();
  private format: StoredFormat | undefined;
  private fh: FileHandle | undefined;
  private entriesSinceSnapshot = 0;
  private snapshotBytes = 0;
  private pending: { bytes: Buffer; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private flushing = false;
  /** Set after a failed write until recovery: the journal may end in torn bytes, so nothing more is
   *  written until they are cut (a later entry behind them would be lost at load). */
  private failed: unknown;
  /** Bytes of the journal known synced: where a failed write's torn bytes are cut. */
  private journalBytes = 0;
  private recoverTimer: ReturnType<typeof setTimeout> | undefined;
  private recoverDelayMs = META_JOURNAL_RETRY_MS_MIN;
  /** After a failed compaction: the journal's entry count at which the next one is tried. */
  private compactRetryAtEntries = 0;
  /** Compactions failed in a row (the first is logged). */
  private compactFailures = 0;
  readonly health: DependencyHealth;

  constructor(dir: string, private readonly journalEntriesMax: number, health?: DependencyHealth) {
    this.dir = dir;
    this.health = health ?? new DependencyHealth('metadata store (local journal)', undefined);
  }

  private get journalPath(): string { return join(this.dir, 'journal.log'); }
  private get snapshotPath(): string { return join(this.dir, 'snapshot.jsonl'); }
  /** Where a snapshot is written before it is renamed into place. */
  private get snapshotTmpPath(): string { return `${this.snapshotPath}.tmp`; }
  /** The snapshot as one JSON document, before rows were packed: read if no newer one exists. */
  private get legacySnapshotPath(): string { return join(this.dir, 'snapshot.json'); }

  async load(): Promise<MetaState> {
    mkdirSync(this.dir, { recursive: true });
    // A snapshot a crash cut short before its rename holds nothing the journal lacks, only room.
    rmSync(this.snapshotTmpPath, { force: true });
    this.readDisk();
    this.fh = await open(this.journalPath, 'a');
    return this.state();
  }

  /** Fills the maps from the snapshot and the journal, cutting a torn journal tail. */
  private readDisk(): void {
    this.buckets.clear();
    this.streams.clear();
    this.deleted.clear();
    this.credentials.clear();
    this.format = undefined;
    this.entriesSinceSnapshot = 0;
    this.journalBytes = 0;
    this.snapshotBytes = 0;
    if (existsSync(this.snapshotPath)) this.readSnapshot();
    else if (existsSync(this.legacySnapshotPath)) {
      const snap = JSON.parse(readFileSync(this.legacySnapshotPath, 'utf8')) as Omit<MetaState, 'streams'> & { streams: StreamMeta[] };
      this.loadHeader(snap);
      for (const s of snap.streams) this.streams.set(addr(s.bucket, s.key), packRow(s));
    }
    if (existsSync(this.journalPath)) {
      const buf = readFileSync(this.journalPath);
      const off = this.replayJournal(buf);
      if (off < buf.length) {
        const fd = openSync(this.journalPath, 'r+');
        try {
          ftruncateSync(fd, off);
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
      }
      this.journalBytes = off;
    }
  }

  /** Applies the journal's whole groups (and entries from before groups) in order; returns where the
   *  whole ones end, the torn tail starting there. Throws when a bad entry was followed by more
   *  writes, so it was synced: damage, not a tear. */
  private replayJournal(buf: Buffer): number {
    let off = 0;
    while (off < buf.length) {
      const head = entryAt(buf, off, buf.length);
      if (head === undefined) {
        if (groupAfter(buf, off + 1) !== undefined) throw this.damaged(buf, off);
        return off;
      }
      if (head.e.op !== 'group') { // written before group commits were framed
        this.apply(head.e);
        this.entriesSinceSnapshot += 1;
        off = head.next;
        continue;
      }
      const end = head.next + head.e.bytes;
      const present = Math.min(end, buf.length);
      const group: Entry[] = [];
      let at = head.next;
      while (at < present) {
        const x = entryAt(buf, at, present);
        if (x === undefined || x.e.op === 'group') break;
        group.push(x.e);
        at = x.next;
      }
      if (at !== end) {
        if (end < buf.length) throw this.damaged(buf, at);
        return off; // the last group, torn: none of it was acknowledged
      }
      for (const e of group) this.apply(e);
      this.entriesSinceSnapshot += group.length;
      off = end;
    }
    return off;
  }

  /** The refusal for a journal with a bad entry that later writes followed. */
  private damaged(buf: Buffer, off: number): Error {
    return new BootError(
      `metadata: the local journal ${this.journalPath} is damaged at byte ${off} of ${buf.length} `
      + '(no whole checksummed entry there), and later group commits follow it, so it was synced: not a torn write. '
      + 'The star will not start rather than drop the buckets, streams and credentials written from there on: '
      + 'restore the file from a copy',
    );
  }

  private loadHeader(h: Omit<MetaState, 'streams'>): void {
    for (const b of h.buckets) this.buckets.set(b.name, b);
    for (const d of h.deleted) this.deleted.set(addr(d.bucket, d.key), d);
    for (const c of h.credentials) this.credentials.set(c.key_id, c);
    this.format = h.format;
  }

  /** Reads snapshot.jsonl: a header line, then `<address as JSON>\t<packed row>` per line. */
  private readSnapshot(): void {
    const buf = readFileSync(this.snapshotPath);
    this.snapshotBytes = buf.length;
    let nl = buf.indexOf(10);
    if (nl < 0) throw new Error(`${this.snapshotPath}: no header line`);
    const header = JSON.parse(buf.toString('utf8', 0, nl)) as SnapshotHeader;
    if (header.snapshot_version !== 2) throw new Error(`${this.snapshotPath}: unknown snapshot version ${String(header.snapshot_version)}`);
    this.loadHeader(header);
    let rows = 0;
    for (let off = nl + 1; off < buf.length; off = nl + 1) {
      nl = buf.indexOf(10, off);
      const tab = buf.indexOf(9, off);
      if (nl < 0 || tab < 0 || tab > nl) throw new Error(`${this.snapshotPath}: row line ${rows + 1} is cut`);
      this.streams.set(JSON.parse(buf.toString('utf8', off, tab)) as string, buf.toString('utf8', tab + 1, nl));
      rows += 1;
    }
    if (rows !== header.streams) throw new Error(`${this.snapshotPath}: ${rows} stream rows where its header says ${header.streams}`);
  }

  private rows(): StreamRows {
    const streams = this.streams;
    return {
      size: streams.size,
      forEach: (fn) => {
        for (const [a, packed] of streams) {
          const [bucket, key] = splitAddr(a);
          fn(bucket, key, packed);
        }
      },
    };
  }

  private state(): MetaState {
    return {
      ...(this.format ? { format: this.format } : {}),
      buckets: [...this.buckets.values()],
      streams: this.rows(),
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
          this.streams.set(addr(s.bucket, s.key), packRow(s));
          this.deleted.delete(addr(s.bucket, s.key));
        }
        break;
      case 'rows':
        for (const [bucket, key, packed] of e.r) {
          this.streams.set(addr(bucket, key), packed);
          this.deleted.delete(addr(bucket, key));
        }
        break;
      case 'stream-del':
        this.streams.delete(addr(e.bucket, e.key));
        this.deleted.set(addr(e.bucket, e.key), { bucket: e.bucket, key: e.key });
        break;
      case 'cred': this.credentials.set(e.c.key_id, e.c); break;
      case 'format': this.format ??= e.f; break;
      case 'nop': case 'group': break;
    }
  }

  private write(e: Entry): Promise<void> {
    if (this.failed !== undefined) return Promise.reject(new MetadataUnavailableError(`the metadata journal cannot be written (${errorText(this.failed)}); retrying`));
    this.apply(e);
    const bytes = encodeEntry(e);
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
          const group = groupBytes(batch.map((p) => p.bytes));
          await writeWhole(this.fh, group);
          await this.fh.datasync();
          this.entriesSinceSnapshot += batch.length;
          this.journalBytes += group.length;
          for (const p of batch) p.resolve();
        } catch (err) {
          if (this.failed === undefined) {
            this.failed = err;
            this.health.failed(errorText(err));
            this.scheduleRecover();
          }
          const refusal = new MetadataUnavailableError(`metadata journal write failed: ${errorText(err)}`, { cause: err });
          for (const p of batch) p.reject(refusal);
          continue;
        }
        if ((this.entriesSinceSnapshot >= this.journalEntriesMax || this.journalBytes >= META_JOURNAL_BYTES_MAX)
          && this.journalBytes >= this.snapshotBytes * JOURNAL_SNAPSHOT_RATIO_MIN
          && this.entriesSinceSnapshot >= this.compactRetryAtEntries) {
          // A failed compaction leaves the journal whole and in use. It is tried again once as many
          // entries again were journaled, not after every group: on a full disk each try writes
          // until the disk refuses.
          await this.compact().catch((err: unknown) => {
            this.compactRetryAtEntries = this.entriesSinceSnapshot + this.journalEntriesMax;
            if (this.compactFailures++ === 0) this.health.warn(`journal compaction failed (${errorText(err)}); the journal stays in use, and compaction is tried again after ${this.journalEntriesMax} more entries`);
          });
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  private scheduleRecover(): void {
    if (this.recoverTimer) return;
    const delayMs = this.recoverDelayMs;
    this.recoverDelayMs = Math.min(this.recoverDelayMs * 2, META_JOURNAL_RETRY_MS_MAX);
    this.recoverTimer = setTimeout(() => {
      this.recoverTimer = undefined;
      void this.recover().catch((err: unknown) => {
        this.health.failed(errorText(err));
        this.scheduleRecover();
      });
    }, delayMs);
    this.recoverTimer.unref?.();
  }

  /** Cuts the journal back to its synced entries, proves an entry can be written and synced, and
   *  reloads the maps from disk; throws while it cannot. */
  private async recover(): Promise<void> {
    if (this.flushing || !this.fh) throw new Error('the journal is busy');
    await this.fh.truncate(this.journalBytes);
    // The probe must find new room, not just the bytes the cut gave back, or a full disk would flap
    // between failing and recovering; it is cut away again once it is synced.
    const probe = groupBytes([encodeEntry({ op: 'nop', pad: ' '.repeat(META_JOURNAL_PROBE_BYTES) })]);
    try {
      await writeWhole(this.fh, probe);
      await this.fh.datasync();
    } finally {
      await this.fh.truncate(this.journalBytes).catch(() => undefined);
    }
    await this.fh.datasync();
    this.readDisk();
    this.failed = undefined;
    this.recoverDelayMs = META_JOURNAL_RETRY_MS_MIN;
    this.health.succeeded();
  }

  /** Writes the whole state as a snapshot (temp + fsync + rename) and starts an empty journal. The
   *  state is copied first (the rows are immutable strings: a copy of references), so entries applied
   *  while it is written are not in it; they are journaled after the cut. */
  private async compact(): Promise<void> {
    const header: SnapshotHeader = {
      snapshot_version: 2, ...(this.format ? { format: this.format } : {}),
      buckets: [...this.buckets.values()], deleted: [...this.deleted.values()], credentials: [...this.credentials.values()],
      streams: this.streams.size,
    };
    const addrs = [...this.streams.keys()];
    const rows = [...this.streams.values()];
    const tmp = this.snapshotTmpPath;
    const out = await open(tmp, 'w');
    let bytes = 0;
    let whole = false;
    try {
      let chunk = [`${JSON.stringify(header)}\n`];
      let chunkChars = chunk[0].length;
      const put = async (): Promise<void> => {
        const b = Buffer.from(chunk.join(''), 'utf8');
        await writeWhole(out, b);
        bytes += b.length;
        chunk = [];
        chunkChars = 0;
      };
      for (let i = 0; i < addrs.length; i++) {
        const line = `${JSON.stringify(addrs[i])}\t${rows[i]}\n`;
        chunk.push(line);
        chunkChars += line.length;
        if (chunkChars >= SNAPSHOT_CHUNK_BYTES) await put();
      }
      await put();
      await out.sync();
      whole = true;
    } finally {
      try {
        await out.close();
      } finally {
        // A snapshot cut short (a full disk) would hold the room the journal's next groups need.
        if (!whole) rmSync(tmp, { force: true });
      }
    }
    renameSync(tmp, this.snapshotPath);
    // The new snapshot must be durable by name before the journal it replaces is cut.
    this.syncDir();
    if (existsSync(this.legacySnapshotPath)) {
      unlinkSync(this.legacySnapshotPath);
      this.syncDir();
    }
    this.snapshotBytes = bytes;
    this.compactRetryAtEntries = 0;
    this.compactFailures = 0;
    await this.fh?.truncate(0);
    // Counted as empty once cut, synced or not: the snapshot holds every entry, and a recovery that cut
    // back to a stale length would pad the journal with zeros, which a later group would then follow.
    this.journalBytes = 0;
    this.entriesSinceSnapshot = 0;
    await this.fh?.datasync();
  }

  private syncDir(): void {
    const dir = openSync(this.dir, 'r');
    try { fsyncSync(dir); } finally { closeSync(dir); }
  }

  putBucket(b: BucketMeta): Promise<void> { return this.write({ op: 'bucket', b }); }
  deleteBucket(name: string): Promise<void> { return this.write({ op: 'bucket-del', name }); }
  putStream(s: StreamMeta): Promise<void> { return this.putStreams([s]); }
  putStreams(s: StreamMeta[]): Promise<void> { return this.write({ op: 'rows', r: s.map((row) => [row.bucket, row.key, packRow(row)]) }); }
  deleteStream(bucket: string, key: string): Promise<void> { return this.write({ op: 'stream-del', bucket, key }); }
  putCredential(c: CredentialMeta): Promise<void> { return this.write({ op: 'cred', c }); }
  async putFormat(f: StoredFormat): Promise<StoredFormat> {
    if (this.format) return this.format;
    await this.write({ op: 'format', f });
    return this.format ?? f;
  }
  async readCredential(keyId: string): Promise<CredentialMeta | undefined> { return this.credentials.get(keyId); }
  async listCredentials(): Promise<CredentialMeta[]> { return [...this.credentials.values()]; }
  // Read back only from a healthy store: while it fails, the maps hold entries whose write failed
  // (recovery reloads them from disk).
  async readStream(bucket: string, key: string): Promise<{ row?: StreamMeta; deleted: boolean }> {
    this.requireHealthy();
    const packed = this.streams.get(addr(bucket, key));
    return { row: packed === undefined ? undefined : unpackRow(bucket, key, packed), deleted: this.deleted.has(addr(bucket, key)) };
  }
  packedStream(bucket: string, key: string): PackedRow | undefined {
    return this.failed === undefined ? this.streams.get(addr(bucket, key)) : undefined;
  }
  async readBucket(name: string): Promise<BucketMeta | undefined> {
    this.requireHealthy();
    return this.buckets.get(name);
  }

  private requireHealthy(): void {
    if (this.failed !== undefined) throw new MetadataUnavailableError(`the metadata journal cannot be written (${errorText(this.failed)}); retrying`);
  }
  healthy(): boolean { return this.failed === undefined; }

  async close(): Promise<void> {
    if (this.recoverTimer) clearTimeout(this.recoverTimer);
    while (this.flushing || this.pending.length) await new Promise((r) => setImmediate(r));
    await this.fh?.close();
    this.fh = undefined;
  }
}

function encodeEntry(e: Entry): Buffer {
  const body = Buffer.from(JSON.stringify(e), 'utf8');
  const bytes = Buffer.allocUnsafe(ENTRY_HEADER_BYTES + body.length);
  bytes.writeUInt32LE(body.length, 0);
  bytes.writeUInt32LE(crc32c(body), 4);
  body.copy(bytes, ENTRY_HEADER_BYTES);
  return bytes;
}

/** One group commit's bytes: the `group` entry, then the entries. */
function groupBytes(entries: Buffer[]): Buffer {
  let bytes = 0;
  for (const e of entries) bytes += e.length;
  return Buffer.concat([encodeEntry({ op: 'group', bytes }), ...entries]);
}

/** The entry at `off` if one whole, checksummed and parseable ends by `end`. */
function entryAt(buf: Buffer, off: number, end: number): ReadEntry | undefined {
  if (off + ENTRY_HEADER_BYTES > end) return undefined;
  const next = off + ENTRY_HEADER_BYTES + buf.readUInt32LE(off);
  if (next > end) return undefined;
  const body = buf.subarray(off + ENTRY_HEADER_BYTES, next);
  if (buf.readUInt32LE(off + 4) !== crc32c(body)) return undefined;
  try {
    const e = JSON.parse(body.toString('utf8')) as Entry;
    return typeof e === 'object' && e !== null && typeof e.op === 'string' ? { e, next } : undefined;
  } catch {
    return undefined; // zeros, say: an empty body's crc32c is 0
  }
}

const GROUP_PREFIX = Buffer.from('{"op":"group"');

/** The first whole `group` entry starting after `from`, found by its body's opening text: inside an
 *  entry's JSON that text can only begin a body (a string holding it has its quotes escaped). */
function groupAfter(buf: Buffer, from: number): ReadEntry | undefined {
  for (let off = buf.indexOf(GROUP_PREFIX, from + ENTRY_HEADER_BYTES); off >= 0; off = buf.indexOf(GROUP_PREFIX, off + 1)) {
    const x = entryAt(buf, off - ENTRY_HEADER_BYTES, buf.length);
    if (x?.e.op === 'group') return x;
  }
  return undefined;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Writes all of `bytes`: on a nearly full disk a write can take only part of them without an error
 *  (the next one then fails with ENOSPC), and a short write must never count as a durable entry. */
async function writeWhole(fh: FileHandle, bytes: Buffer): Promise<void> {
  for (let off = 0; off < bytes.length;) {
    const { bytesWritten } = await fh.write(bytes, off, bytes.length - off);
    if (bytesWritten <= 0) throw Object.assign(new Error('the journal write made no progress'), { code: 'EIO' });
    off += bytesWritten;
  }
}
