// The `fs` object store: one file per object under a directory. put writes a temp file, fsyncs it and
// renames it into place, so a reader never sees a half-written object.

import { mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { ByteRange, ObjectStore } from './object-store.ts';

async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try { await fh.sync(); } finally { await fh.close(); }
}

export class FsObjectStore implements ObjectStore {
  constructor(private readonly root: string) {}

  private pathOf(key: string): string {
    if (key.includes('..')) throw new Error(`bad object key ${key}`);
    return join(this.root, ...key.split('/'));
  }

  /** No CallBound: a local disk's calls end by themselves. */
  async put(key: string, body: Uint8Array): Promise<void> {
    const path = this.pathOf(key);
    const created = await mkdir(dirname(path), { recursive: true });
    if (created !== undefined) {
      // New directories must survive a crash too: sync each parent whose entries changed.
      for (let d = dirname(path); d.length >= created.length && d !== dirname(d); d = dirname(d)) await syncDir(dirname(d));
    }
    const tmp = `${path}.tmp-${process.pid}`;
    const fh = await open(tmp, 'w');
    let whole = false;
    try {
      await fh.writeFile(body);
      await fh.datasync();
      whole = true;
    } finally {
      try {
        await fh.close();
      } finally {
        // An object cut short (a full disk) would keep the room its retry, and the WAL, need.
        if (!whole) await rm(tmp, { force: true });
      }
    }
    await rename(tmp, path);
    await syncDir(dirname(path));
  }

  async get(key: string, range?: ByteRange): Promise<Buffer> {
    const fh = await open(this.pathOf(key), 'r');
    try {
      if (!range) return await fh.readFile();
      const out = Buffer.allocUnsafe(range.length);
      let got = 0;
      while (got < range.length) {
        const { bytesRead } = await fh.read(out, got, range.length - got, range.offset + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      return got === range.length ? out : out.subarray(0, got);
    } finally {
      await fh.close();
    }
  }

  async list(prefix: string, limit = Infinity): Promise<string[]> {
    const out: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      let entries;
      try { entries = await readdir(dir, { withFileTypes: true }); } catch { return; }
      for (const e of entries) {
        if (out.length >= limit) return;
        const p = join(dir, e.name);
        if (e.isDirectory()) await walk(p);
        else if (!e.name.includes('.tmp-')) {
          const key = relative(this.root, p).split(sep).join('/');
          if (key.startsWith(prefix)) out.push(key);
        }
      }
    };
    await walk(this.root);
    return out.sort();
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async deleteMany(keys: readonly string[]): Promise<string[]> {
    const deleted: string[] = [];
    for (const key of keys) {
      try {
        await this.delete(key);
        deleted.push(key);
      } catch {
        // left out: the caller tries it again
      }
    }
    return deleted;
  }
}
