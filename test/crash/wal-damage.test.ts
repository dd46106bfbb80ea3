// Damage in a sealed WAL file (a flipped byte in the middle of an older file, as bit rot or a bad
// copy leaves it) is not a torn write: that file was synced before the next one was created, so the
// records after the damage were acknowledged. Recovery used to cut every file at its first bad frame
// like the newest one's torn tail: acknowledged records vanished and their sequence numbers were
// given out again to new appends. The star now refuses to start, in one line naming the file and the
// byte, and leaves every file as it was; with the file restored it starts and serves every record.
// Found by a soak session reading recovery (its scratch reproduction made this test).
// The local metadata journal gets the same rule: its group commits are framed, so a bad entry with a
// later group after it (synced, acknowledged: a bucket, stream or credential) refuses the start too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { frameInfo, frameIsIntact } from '../../src/storage/format/record-codec.ts';
import { bootToExit, removeDir, startServer, tempDir } from '../helpers/server.ts';
import { walFiles } from './crash-kit.ts';

/** Small WAL files, so a few dozen appends fill several; segments never settle (see below). */
const ARGS = ['--wal-file-bytes-max', '4096', '--wal-settle-after-ms', '600000'];
const RECORDS = 40;

async function post(url: string, path: string, body: unknown): Promise<{ status: number; json: { stream_id?: string; start?: { seq_num: number } } }> {
  const r = await fetch(url + path, { method: 'POST', body: JSON.stringify(body) });
  return { status: r.status, json: (await r.json()) as { stream_id?: string; start?: { seq_num: number } } };
}

test('a bad frame in a sealed WAL file refuses the start and changes nothing; restored, every record is served', { timeout: 120_000 }, async () => {
  const dataDir = tempDir('svcd-wal-damage-');
  try {
    const star = await startServer({ dataDir, args: ARGS });
    assert.equal((await post(star.baseUrl, '/v1/buckets/b', {})).status, 201);
    const created = await post(star.baseUrl, '/v1/streams/b/s', {});
    assert.equal(created.status, 201);
    // Every segment upload fails (a file where the stream's object directory would go), so sealed
    // WAL files stay in the WAL, as they do while an object store is away.
    mkdirSync(join(dataDir, 'objects', 'streams'), { recursive: true });
    writeFileSync(join(dataDir, 'objects', 'streams', created.json.stream_id!), 'not a directory');
    for (let i = 0; i < RECORDS; i++) {
      const a = await post(star.baseUrl, '/v1/streams/b/s/records', { records: [{ body: `r${i}-${'x'.repeat(200)}` }] });
      assert.equal(a.status, 200);
      assert.equal(a.json.start!.seq_num, i);
    }
    await star.kill();

    const files = walFiles(dataDir);
    assert.ok(files.length >= 3, `several WAL files: ${files.map((f) => f.bytes).join(',')}`);
    const first = files[0].path;
    const original = readFileSync(first);
    const frames: number[] = [];
    for (let off = 0; off < original.length && frameIsIntact(original, off, original.length - off); off += frameInfo(original, off).frameBytes) frames.push(off);
    assert.ok(frames.length >= 4, `frames in the first file: ${frames.length}`);
    const damaged = Buffer.from(original);
    const at = frames[2] + frameInfo(original, frames[2]).frameBytes - 5;
    damaged[at] ^= 0x20;
    writeFileSync(first, damaged);
    const sizes = walFiles(dataDir).map((f) => f.bytes);

    const { code, err } = await bootToExit(['--listen', '127.0.0.1:0', '--data-dir', dataDir, ...ARGS]);
    assert.equal(code, 2, `refused at boot: ${err}`);
    assert.match(err, new RegExp(`WAL file .*${files[0].path.split('/').pop()!.replace('.', '\\.')} is damaged at byte ${frames[2]} `));
    assert.doesNotMatch(err, /^\s+at /m, 'one line, no stack trace');
    assert.deepEqual(walFiles(dataDir).map((f) => f.bytes), sizes, 'no WAL file was cut');
    assert.deepEqual(readFileSync(first), damaged, 'the damaged file is as it was');

    writeFileSync(first, original);
    const restored = await startServer({ dataDir, args: ARGS });
    try {
      const read = await fetch(`${restored.baseUrl}/v1/streams/b/s/records?seq_num=0`);
      assert.equal(read.status, 200);
      const records = ((await read.json()) as { records: { seq_num: number }[] }).records;
      assert.deepEqual(records.map((r) => r.seq_num), Array.from({ length: RECORDS }, (_, i) => i), 'every acknowledged record');
      const next = await post(restored.baseUrl, '/v1/streams/b/s/records', { records: [{ body: 'after' }] });
      assert.equal(next.json.start!.seq_num, RECORDS, 'numbering goes on after them');
    } finally {
      await restored.stop();
    }
  } finally {
    removeDir(dataDir);
  }
});

test('a bad entry in the metadata journal that later commits follow refuses the start; restored, every stream is there', { timeout: 60_000 }, async () => {
  const dataDir = tempDir('svcd-meta-damage-');
  try {
    const star = await startServer({ dataDir });
    assert.equal((await post(star.baseUrl, '/v1/buckets/b', {})).status, 201);
    for (const key of ['s1', 's2', 's3']) assert.equal((await post(star.baseUrl, `/v1/streams/b/${key}`, {})).status, 201);
    await star.kill();

    const journal = join(dataDir, 'meta', 'journal.log');
    const original = readFileSync(journal);
    const at = original.indexOf('"s2"'); // inside the entry that created s2, with s3's after it
    assert.ok(at > 0);
    const damaged = Buffer.from(original);
    damaged[at + 1] ^= 0x01;
    writeFileSync(journal, damaged);
    const { code, err } = await bootToExit(['--listen', '127.0.0.1:0', '--data-dir', dataDir]);
    assert.equal(code, 2, `refused at boot: ${err}`);
    assert.match(err, /metadata: the local journal .*journal\.log is damaged at byte \d+ /);
    assert.doesNotMatch(err, /^\s+at /m, 'one line, no stack trace');
    assert.deepEqual(readFileSync(journal), damaged, 'the journal was not cut');

    writeFileSync(journal, original);
    const restored = await startServer({ dataDir });
    try {
      const list = await fetch(`${restored.baseUrl}/v1/streams/b`);
      const streams = ((await list.json()) as { streams: { key: string }[] }).streams;
      assert.deepEqual(streams.map((s) => s.key), ['s1', 's2', 's3']);
    } finally {
      await restored.stop();
    }
  } finally {
    removeDir(dataDir);
  }
});
