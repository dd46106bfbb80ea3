// The local metadata store survives a reload, cuts a torn journal tail, and compacts into a snapshot.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { META_JOURNAL_BYTES_MAX } from '../../src/config/limits.ts';
import { crc32c } from '../../src/storage/format/crc32c.ts';
import { LocalMetadataStore } from '../../src/storage/metadata/local-store.ts';
import { DependencyHealth } from '../../src/storage/dependency-health.ts';
import { unpackStreamRows, type StreamMeta } from '../../src/storage/metadata/metadata-store.ts';
import { removeDir, tempDir } from '../helpers/server.ts';
import { SmallFs, tmpfsSkipReason } from '../crash/fault-kit.ts';

/** Free room left on the small file system in the compaction test: the journal's next rows fit in it,
 *  a snapshot of every row does not. */
const COMPACTION_FAULT_ROOM_BYTES = 256 * 1024;

const stream = (key: string, trim = 0): StreamMeta => ({
  stream_id: `id-${key}`, bucket: 'b', key, config: { class: 'standard' }, created_at_unix_ms: 1, creation_token: '',
  fencing_token: '', trim_seq: trim, settled_end_seq: 0, settled_end_ts: 0, segments: [],
});

test('state written before a reload is there after it, deletes included', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const a = new LocalMetadataStore(dir, 1000);
  await a.load();
  await a.putBucket({ name: 'b', config: { location: 'x' }, created_at_unix_ms: 1, creation_token: 'tok' });
  await Promise.all([a.putStream(stream('k1')), a.putStream(stream('k2')), a.putCredential({ key_id: 'ck_1', scope: 'svc:admin' })]);
  await a.putStream(stream('k1', 7));
  await a.deleteStream('b', 'k2');
  await a.close();
  const b = new LocalMetadataStore(dir, 1000);
  const s = await b.load();
  assert.deepEqual(s.buckets.map((x) => [x.name, x.creation_token]), [['b', 'tok']]);
  assert.deepEqual(unpackStreamRows(s.streams).map((x) => [x.key, x.trim_seq]), [['k1', 7]]);
  assert.deepEqual(s.deleted, [{ bucket: 'b', key: 'k2' }]);
  assert.deepEqual(s.credentials.map((c) => c.key_id), ['ck_1']);
  await b.close();
});

test('a torn journal tail is cut and the whole entries before it survive', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const a = new LocalMetadataStore(dir, 1000);
  await a.load();
  await a.putStream(stream('k1'));
  await a.close();
  const journal = join(dir, 'journal.log');
  const size = statSync(journal).size;
  appendFileSync(journal, Buffer.from([200, 0, 0, 0, 1, 2, 3, 4, 123, 34]));
  const b = new LocalMetadataStore(dir, 1000);
  const s = await b.load();
  assert.deepEqual(unpackStreamRows(s.streams).map((x) => x.key), ['k1']);
  assert.equal(statSync(journal).size, size);
  await b.putStream(stream('k3'));
  await b.close();
  const c = new LocalMetadataStore(dir, 1000);
  assert.deepEqual(unpackStreamRows((await c.load()).streams).map((x) => x.key).sort(), ['k1', 'k3']);
  await c.close();
});

/** A store's dir after 12 row writes (k0..k11, trim i) with an entry cap of 5: compacted at least once. */
async function compactedStore(t: TestContext): Promise<string> {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const a = new LocalMetadataStore(dir, 5);
  await a.load();
  for (let i = 0; i < 12; i++) await a.putStream(stream(`k${i}`, i));
  await a.close();
  return dir;
}

test('past the entry cap the journal is compacted into a snapshot', async (t) => {
  const dir = await compactedStore(t);
  assert.ok(readdirSync(dir).includes('snapshot.jsonl'));
  const b = new LocalMetadataStore(dir, 5);
  const s = await b.load();
  assert.equal(unpackStreamRows(s.streams).length, 12);
  assert.equal(unpackStreamRows(s.streams).find((x) => x.key === 'k11')?.trim_seq, 11);
  await b.close();
});

test('deleting a bucket forgets its deleted addresses, after a reload too', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const a = new LocalMetadataStore(dir, 1000);
  await a.load();
  await a.putBucket({ name: 'b', config: {}, created_at_unix_ms: 1, creation_token: '' });
  await a.putStream(stream('k1'));
  await a.deleteStream('b', 'k1');
  await a.deleteBucket('b');
  await a.putBucket({ name: 'b', config: {}, created_at_unix_ms: 2, creation_token: '' });
  await a.close();
  const b = new LocalMetadataStore(dir, 1000);
  assert.deepEqual((await b.load()).deleted, []);
  await b.close();
});

test('a snapshot written before rows were packed (snapshot.json) loads, and the next compaction replaces it', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  mkdirSync(dir, { recursive: true });
  const legacy = {
    buckets: [{ name: 'b', config: {}, created_at_unix_ms: 1, creation_token: '' }],
    streams: [stream('old', 3), { ...stream('seg'), settled_end_seq: 2, segments: [{ object_key: 'streams/id-seg/00000000000000000000.seg', first_seq: 0, end_seq: 2, min_ts: 5, max_ts: 6, content_bytes: 10, size_bytes: 90, footer_offset: 60, footer_bytes: 30 }] }],
    deleted: [{ bucket: 'b', key: 'gone' }],
    credentials: [{ key_id: 'ck_1' }],
  };
  writeFileSync(join(dir, 'snapshot.json'), JSON.stringify(legacy));
  const a = new LocalMetadataStore(dir, 5);
  const s = await a.load();
  assert.deepEqual(unpackStreamRows(s.streams), legacy.streams);
  assert.deepEqual(s.deleted, legacy.deleted);
  for (let i = 0; i < 6; i++) await a.putStream(stream(`k${i}`));
  await a.close();
  assert.ok(readdirSync(dir).includes('snapshot.jsonl'));
  assert.ok(!readdirSync(dir).includes('snapshot.json'), 'the legacy snapshot is removed once a new one stands');
  const b = new LocalMetadataStore(dir, 5);
  const again = unpackStreamRows((await b.load()).streams);
  assert.deepEqual(again.filter((r) => r.key === 'old' || r.key === 'seg'), legacy.streams);
  assert.equal(again.length, 8);
  await b.close();
});

test('a snapshot cut short is refused at load, not half loaded', async (t) => {
  const dir = await compactedStore(t);
  const snap = join(dir, 'snapshot.jsonl');
  const lines = readFileSync(snap, 'utf8').split('\n');
  assert.ok(lines.length > 3);
  // Cut whole lines off the end (a row line missing) and, separately, a line in half.
  truncateSync(snap, Buffer.byteLength(lines.slice(0, -2).join('\n') + '\n'));
  await assert.rejects(new LocalMetadataStore(dir, 5).load(), /stream rows where its header says/);
  truncateSync(snap, statSync(snap).size - 5);
  await assert.rejects(new LocalMetadataStore(dir, 5).load(), /is cut/);
});

test('the journal is compacted only once it is a quarter of the snapshot: compactions come rarer as rows grow', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const journal = join(dir, 'journal.log');
  // close() waits for a compaction under way, so each phase is read after one.
  const a = new LocalMetadataStore(dir, 5);
  await a.load();
  await a.putStreams(Array.from({ length: 400 }, (_, i) => stream(`k${i}`)));
  for (let i = 0; i < 4; i++) await a.putStream(stream(`k${i}`, 1)); // the fifth entry: the cap, compacts 400 rows
  await a.close();
  assert.equal(statSync(journal).size, 0);
  const snapBytes = statSync(join(dir, 'snapshot.jsonl')).size;
  const b = new LocalMetadataStore(dir, 5);
  await b.load();
  for (let i = 0; i < 10; i++) await b.putStream(stream(`k${i}`, 2)); // past the cap, far below a quarter of the snapshot
  await b.close();
  assert.ok(statSync(journal).size > 0 && statSync(journal).size < snapBytes / 4, 'not compacted yet');
  const c = new LocalMetadataStore(dir, 5);
  await c.load();
  await c.putStreams(Array.from({ length: 150 }, (_, i) => stream(`k${i}`, 3)));
  await c.close();
  assert.equal(statSync(journal).size, 0, 'compacted once the journal passed a quarter of the snapshot');
  const d = new LocalMetadataStore(dir, 5);
  const rows = unpackStreamRows((await d.load()).streams);
  assert.equal(rows.length, 400);
  assert.equal(rows.find((r) => r.key === 'k0')?.trim_seq, 3);
  assert.equal(rows.find((r) => r.key === 'k200')?.trim_seq, 0);
  await d.close();
});

/** One journal entry as written before group commits were framed: u32 length, u32 crc32c of the JSON
 *  body, the body. */
function entry(e: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(e));
  const head = Buffer.alloc(8);
  head.writeUInt32LE(body.length, 0);
  head.writeUInt32LE(crc32c(body), 4);
  return Buffer.concat([head, body]);
}

test('a journal written before rows were packed (whole rows as objects) still replays', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'journal.log'), Buffer.concat([
    entry({ op: 'streams', s: [stream('k1', 2), stream('k2')] }),
    entry({ op: 'stream-del', bucket: 'b', key: 'k2' }),
    entry({ op: 'streams', s: [stream('k1', 5)] }),
  ]));
  const a = new LocalMetadataStore(dir, 1000);
  const s = await a.load();
  assert.deepEqual(unpackStreamRows(s.streams), [stream('k1', 5)]);
  assert.deepEqual(s.deleted, [{ bucket: 'b', key: 'k2' }]);
  await a.putStream(stream('k3'));
  await a.close();
  const b = new LocalMetadataStore(dir, 1000);
  assert.deepEqual(unpackStreamRows((await b.load()).streams).map((r) => [r.key, r.trim_seq]), [['k1', 5], ['k3', 0]]);
  await b.close();
});

test('a journal past META_JOURNAL_BYTES_MAX is compacted though it holds few entries', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  // An entry cap no run reaches: only the bytes can trigger the compaction.
  const a = new LocalMetadataStore(dir, 1_000_000);
  await a.load();
  const bulky = (i: number): StreamMeta => ({ ...stream(`k${i}`), creation_token: 'x'.repeat(1000) });
  const perEntry = 5000;
  const entries = Math.ceil(META_JOURNAL_BYTES_MAX / (perEntry * 1000)) + 1;
  for (let e = 0; e < entries; e++) await a.putStreams(Array.from({ length: perEntry }, (_, j) => bulky(e * perEntry + j)));
  await a.close();
  assert.ok(readdirSync(dir).includes('snapshot.jsonl'), `${entries} entries of ${perEntry} rows were compacted`);
  assert.ok(statSync(join(dir, 'journal.log')).size < META_JOURNAL_BYTES_MAX);
  const b = new LocalMetadataStore(dir, 1_000_000);
  assert.equal(unpackStreamRows((await b.load()).streams).length, entries * perEntry);
  await b.close();
});

/** The journal's entries as written: [offset, length] each, `group` entries included. */
function journalEntries(buf: Buffer): { off: number; bytes: number; op: string }[] {
  const out: { off: number; bytes: number; op: string }[] = [];
  for (let off = 0; off + 8 <= buf.length;) {
    const n = buf.readUInt32LE(off);
    out.push({ off, bytes: 8 + n, op: (JSON.parse(buf.toString('utf8', off + 8, off + 8 + n)) as { op: string }).op });
    off += 8 + n;
  }
  return out;
}

/** A store dir whose journal holds three group commits: k1, k2 and k3. */
async function threeGroups(t: TestContext): Promise<{ dir: string; journal: string; buf: Buffer }> {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const a = new LocalMetadataStore(dir, 1000);
  await a.load();
  for (const k of ['k1', 'k2', 'k3']) await a.putStream(stream(k));
  await a.close();
  const journal = join(dir, 'journal.log');
  return { dir, journal, buf: readFileSync(journal) };
}

test('a bad entry that later group commits follow refuses the load, naming the byte, and cuts nothing', async (t) => {
  const { dir, journal, buf } = await threeGroups(t);
  const entries = journalEntries(buf);
  assert.deepEqual(entries.map((e) => e.op), ['group', 'rows', 'group', 'rows', 'group', 'rows']);
  for (const at of [entries[3].off + 20, entries[2].off + 10]) { // the second group's row, then its group entry
    const damaged = Buffer.from(buf);
    damaged[at] ^= 0x20;
    writeFileSync(journal, damaged);
    const b = new LocalMetadataStore(dir, 1000);
    const bad = at >= entries[3].off ? entries[3].off : entries[2].off;
    await assert.rejects(b.load(), new RegExp(`metadata: the local journal .* is damaged at byte ${bad} of ${buf.length} `));
    assert.deepEqual(readFileSync(journal), damaged, 'the journal is left as it was');
  }
  writeFileSync(journal, buf);
  const c = new LocalMetadataStore(dir, 1000);
  assert.deepEqual(unpackStreamRows((await c.load()).streams).map((x) => x.key).sort(), ['k1', 'k2', 'k3']);
  await c.close();
});

test('a torn last group is cut whole (none of its entries applied), zeros too, and the groups before it survive', async (t) => {
  const { dir, journal, buf } = await threeGroups(t);
  const entries = journalEntries(buf);
  const lastGroup = entries[4].off;
  const tails: [string, Buffer][] = [
    ['cut inside the last entry', buf.subarray(0, buf.length - 3)],
    ['cut inside the group entry', buf.subarray(0, lastGroup + 5)],
    ['a byte of the last entry flipped', Buffer.from(buf).fill(buf[buf.length - 2] ^ 0x20, buf.length - 2, buf.length - 1)],
    ['zeros after the whole groups', Buffer.concat([buf.subarray(0, lastGroup), Buffer.alloc(4096)])],
  ];
  for (const [what, bytes] of tails) {
    writeFileSync(journal, bytes);
    const b = new LocalMetadataStore(dir, 1000);
    assert.deepEqual(unpackStreamRows((await b.load()).streams).map((x) => x.key).sort(), ['k1', 'k2'], what);
    assert.equal(statSync(journal).size, lastGroup, `${what}: cut at the last group's start`);
    await b.close();
  }
});

test('a group of several entries is applied whole or not at all', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const a = new LocalMetadataStore(dir, 1000);
  await a.load();
  await a.putStream(stream('k0'));
  // The first starts a group commit at once; the two queued behind its fdatasync go out as one.
  await Promise.all([a.putStream(stream('k1')), a.putStream(stream('k2')), a.putStream(stream('k3'))]);
  await a.close();
  const journal = join(dir, 'journal.log');
  const buf = readFileSync(journal);
  const entries = journalEntries(buf);
  assert.deepEqual(entries.map((e) => e.op), ['group', 'rows', 'group', 'rows', 'group', 'rows', 'rows']);
  writeFileSync(journal, buf.subarray(0, entries[6].off + 4)); // its last entry torn
  const b = new LocalMetadataStore(dir, 1000);
  assert.deepEqual(unpackStreamRows((await b.load()).streams).map((x) => x.key), ['k0', 'k1'], 'k2 went with k3');
  await b.close();
});

test('a journal from before group commits were framed: a bad entry at its end is cut, one a group follows refuses', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  mkdirSync(dir, { recursive: true });
  const legacy = Buffer.concat([entry({ op: 'streams', s: [stream('k1')] }), entry({ op: 'streams', s: [stream('k2')] })]);
  const journal = join(dir, 'journal.log');
  const torn = Buffer.from(legacy);
  torn[torn.length - 3] ^= 0x20;
  writeFileSync(journal, torn);
  const a = new LocalMetadataStore(dir, 1000);
  assert.deepEqual(unpackStreamRows((await a.load()).streams).map((x) => x.key), ['k1']);
  await a.putStream(stream('k3')); // a framed group after the legacy entries
  await a.close();
  const b = new LocalMetadataStore(dir, 1000);
  assert.deepEqual(unpackStreamRows((await b.load()).streams).map((x) => x.key).sort(), ['k1', 'k3']);
  await b.close();
  const mixed = readFileSync(journal);
  mixed[10] ^= 0x20; // inside the first legacy entry, with a group after it
  writeFileSync(journal, mixed);
  const c = new LocalMetadataStore(dir, 1000);
  await assert.rejects(c.load(), /metadata: the local journal .* is damaged at byte 0 /);
});

test('a compaction the file system has no room for leaves the journal in use and takes no room from it; with room back, the next one lands', { skip: tmpfsSkipReason() }, async (t) => {
  const fs = new SmallFs(tempDir('svcd-meta-fs-'), 2 * 1024 * 1024);
  t.after(() => { fs.unmount(); removeDir(fs.dir); });
  const dir = join(fs.dir, 'meta');
  const big = (i: number): StreamMeta => stream(`k${i}-${'x'.repeat(4000)}`, i);
  const logged: string[] = [];
  const a = new LocalMetadataStore(dir, 20, new DependencyHealth('metadata store (local journal)', (line) => logged.push(line)));
  await a.load();
  let written = 0;
  // Compacted once with room to spare: a snapshot of about 100 KB.
  for (; written < 25; written++) await a.putStream(big(written));
  assert.ok(readdirSync(dir).includes('snapshot.jsonl'));
  // Leave room for the journal (about 40 more rows) but not for a snapshot of every row.
  const reserve = join(fs.dir, 'reserve');
  writeFileSync(reserve, Buffer.alloc(COMPACTION_FAULT_ROOM_BYTES));
  fs.fill();
  rmSync(reserve);
  for (; written < 55; written++) await a.putStream(big(written));
  assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith('.tmp')), [], 'no half-written snapshot left holding room');
  assert.ok(statSync(join(dir, 'journal.log')).size > 20 * 4000, 'the journal went on past its cap: no compaction could land');
  fs.free();
  // A failed compaction is tried again after as many entries again (20 here), not after every group.
  const journalBytes = (): number => statSync(join(dir, 'journal.log')).size;
  for (let more = 0; journalBytes() > 20 * 4000 && more <= 2 * 20; more++, written++) await a.putStream(big(written));
  assert.ok(journalBytes() < 20 * 4000, 'compacted once there was room');
  assert.equal(logged.filter((l) => /compaction failed \(ENOSPC/.test(l)).length, 1, `one line for the failures in a row: ${logged.join(' | ')}`);
  await a.close();
  // A snapshot a crash left half written is dropped at the next load.
  writeFileSync(join(dir, 'snapshot.jsonl.tmp'), 'torn');
  const b = new LocalMetadataStore(dir, 20);
  const rows = unpackStreamRows((await b.load()).streams);
  assert.equal(rows.length, written);
  for (let i = 0; i < written; i++) assert.equal(rows.find((r) => r.key === big(i).key)?.trim_seq, i);
  assert.ok(!readdirSync(dir).includes('snapshot.jsonl.tmp'));
  await b.close();
});
