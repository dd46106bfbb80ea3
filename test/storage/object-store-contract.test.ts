// The ObjectStore contract, run against both backends: `fs` (a directory) and `s3` (s3rver on
// loopback, through @aws-sdk/client-s3): whole and ranged reads, overwrite, listing by prefix, a
// missing object as ENOENT, delete, deleteMany. Then what only s3 has: key prefixes that keep two stores apart
// in one bucket, presigned GETs that honour a Range, and a start-up check that names a dead bucket.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FsObjectStore } from '../../src/storage/objects/fs-store.ts';
import type { ObjectStore } from '../../src/storage/objects/object-store.ts';
import { S3ObjectStore } from '../../src/storage/objects/s3-store.ts';
import { removeDir, tempDir } from '../helpers/server.ts';
import { SmallFs, tmpfsSkipReason } from '../crash/fault-kit.ts';
import { startS3, type TestS3 } from '../helpers/s3.ts';

const s3 = await startS3('svcd-contract');
Object.assign(process.env, s3.env); // the SDK in this process reads its credentials from here

const s3Store = (prefix: string, bucket = s3.bucket, endpoint = s3.endpoint): S3ObjectStore =>
  new S3ObjectStore({ backend: 's3', bucket, prefix, region: 'us-east-1', endpoint, forcePathStyle: true });

/** Room left on the small file system in the fs fault test. */
const FS_FAULT_ROOM_BYTES = 256 * 1024;

const dirs: string[] = [];
const backends: { name: string; open(): ObjectStore }[] = [
  { name: 'fs', open: () => { const d = tempDir('svcd-objects-'); dirs.push(d); return new FsObjectStore(d); } },
  { name: 's3', open: () => s3Store(`run-${randomBytes(4).toString('hex')}/`) },
];

after(async () => {
  for (const d of dirs) removeDir(d);
  await s3.close();
});

for (const be of backends) {
  describe(`object store contract (${be.name})`, () => {
    let store: ObjectStore;
    before(() => { store = be.open(); });

    test('an object reads back whole and by byte range; a put replaces it', async () => {
      const body = randomBytes(70_000);
      await store.put('streams/a/00000000000000000000.seg', body);
      assert.deepEqual(await store.get('streams/a/00000000000000000000.seg'), body);
      assert.deepEqual(await store.get('streams/a/00000000000000000000.seg', { offset: 65_000, length: 4000 }), body.subarray(65_000, 69_000));
      assert.deepEqual(await store.get('streams/a/00000000000000000000.seg', { offset: 1, length: 0 }), Buffer.alloc(0));
      await store.put('streams/a/00000000000000000000.seg', Buffer.from('smaller'));
      assert.equal((await store.get('streams/a/00000000000000000000.seg')).toString(), 'smaller');
    });

    test('listing is by prefix, in order; a missing object is ENOENT; delete removes, and again is harmless', async () => {
      await store.put('streams/b/00000000000000000010.seg', Buffer.from('2'));
      await store.put('streams/b/00000000000000000000.seg', Buffer.from('1'));
      await store.put('streams/bc/00000000000000000000.seg', Buffer.from('3'));
      assert.deepEqual(await store.list('streams/b/'), ['streams/b/00000000000000000000.seg', 'streams/b/00000000000000000010.seg']);
      await assert.rejects(store.get('streams/none/x.seg'), (err: NodeJS.ErrnoException) => err.code === 'ENOENT');
      await store.delete('streams/b/00000000000000000000.seg');
      await store.delete('streams/b/00000000000000000000.seg');
      assert.deepEqual(await store.list('streams/b/'), ['streams/b/00000000000000000010.seg']);
      await assert.rejects(store.get('streams/b/00000000000000000000.seg'), (err: NodeJS.ErrnoException) => err.code === 'ENOENT');
    });

    test('a listing stops at its limit, and one longer than a page of 1000 comes back whole', async () => {
      const keys = Array.from({ length: 1005 }, (_, i) => `streams/many/${String(i).padStart(20, '0')}.seg`);
      for (let i = 0; i < keys.length; i += 50) await Promise.all(keys.slice(i, i + 50).map((k) => store.put(k, Buffer.from('x'))));
      const one = await store.list('streams/many/', 1);
      assert.equal(one.length, 1);
      assert.ok(keys.includes(one[0]));
      assert.deepEqual(await store.list('streams/many/'), keys);
      assert.deepEqual(await store.list('streams/none/', 1), []);
    });

    test('deleteMany deletes every key given, past one request\'s 1000 and an absent one included, and nothing else', async () => {
      // The 1005 objects the listing test put, and one that was never there.
      const keys = await store.list('streams/many/');
      assert.equal(keys.length, 1005);
      const kept = keys.pop()!;
      const deleted = await store.deleteMany([...keys, 'streams/many/absent.seg']);
      assert.deepEqual(deleted.sort(), [...keys, 'streams/many/absent.seg'].sort());
      assert.deepEqual(await store.list('streams/many/'), [kept]);
    });
  });
}

describe('s3 object store: prefixes, presigned GETs, the start-up check', () => {
  test('two prefixes in one bucket never see each other\'s objects', async () => {
    const a = s3Store('star-a/');
    const b = s3Store('star-b/');
    await a.put('k.seg', Buffer.from('from a'));
    await b.put('k.seg', Buffer.from('from b'));
    assert.equal((await a.get('k.seg')).toString(), 'from a');
    assert.deepEqual(await b.list(''), ['k.seg']);
    await a.delete('k.seg');
    assert.equal((await b.get('k.seg')).toString(), 'from b');
  });

  test('a presigned URL GETs the object with the consumer\'s own Range, and a tampered one is refused', async () => {
    const store = s3Store('presign/');
    const body = randomBytes(10_000);
    await store.put('seg', body);
    const url = await store.presignGet('seg', Date.now() + 60_000, Date.now());
    assert.ok(url.startsWith(`${s3.endpoint}/${s3.bucket}/presign/seg?`), url);
    const part = await fetch(url, { headers: { Range: 'bytes=100-199' } });
    assert.equal(part.status, 206);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), body.subarray(100, 200));
    const tampered = await fetch(url.replace('presign/seg', 'presign/other'));
    assert.ok(tampered.status === 403 || tampered.status === 404, `a URL for another key is refused (${tampered.status})`);
  });

  test('check() passes on the bucket and names a missing bucket or a dead endpoint', async () => {
    await s3Store('').check();
    await assert.rejects(s3Store('', 'no-such-bucket').check(), /objects: s3 bucket no-such-bucket/);
    const dead: TestS3 = await startS3('gone');
    const endpoint = dead.endpoint;
    await dead.close();
    await assert.rejects(s3Store('', 'gone', endpoint).check(), /objects: s3 bucket gone at http:\/\/127\.0\.0\.1:\d+ did not answer/);
  });
});

test('fs: a put the file system has no room for leaves no partial object behind, so a smaller one then fits', { skip: tmpfsSkipReason() }, async (t) => {
  const fs = new SmallFs(tempDir('svcd-objects-fs-'), 1024 * 1024);
  t.after(() => { fs.unmount(); removeDir(fs.dir); });
  const store = new FsObjectStore(join(fs.dir, 'objects'));
  await store.put('streams/a/warm.seg', Buffer.alloc(10)); // its directories exist before the disk fills
  const reserve = join(fs.dir, 'reserve');
  writeFileSync(reserve, Buffer.alloc(FS_FAULT_ROOM_BYTES));
  fs.fill();
  rmSync(reserve);
  await assert.rejects(store.put('streams/a/big.seg', randomBytes(2 * FS_FAULT_ROOM_BYTES)), /ENOSPC/);
  assert.deepEqual(readdirSync(join(fs.dir, 'objects/streams/a')), ['warm.seg']);
  const fits = randomBytes(FS_FAULT_ROOM_BYTES - 16 * 1024);
  await store.put('streams/a/fits.seg', fits);
  assert.deepEqual(await store.get('streams/a/fits.seg'), fits);
});
