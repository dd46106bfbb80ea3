// The local metadata store survives a reload, cuts a torn journal tail, and compacts into a snapshot.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { LocalMetadataStore } from '../../src/storage/metadata/local-store.ts';
import type { StreamMeta } from '../../src/storage/metadata/metadata-store.ts';
import { removeDir, tempDir } from '../helpers/server.ts';

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
  assert.deepEqual(s.streams.map((x) => [x.key, x.trim_seq]), [['k1', 7]]);
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
  assert.deepEqual(s.streams.map((x) => x.key), ['k1']);
  assert.equal(statSync(journal).size, size);
  await b.putStream(stream('k3'));
  await b.close();
  const c = new LocalMetadataStore(dir, 1000);
  assert.deepEqual((await c.load()).streams.map((x) => x.key).sort(), ['k1', 'k3']);
  await c.close();
});

test('past the entry cap the journal is compacted into a snapshot', async (t) => {
  const dir = tempDir();
  t.after(() => removeDir(dir));
  const a = new LocalMetadataStore(dir, 5);
  await a.load();
  for (let i = 0; i < 12; i++) await a.putStream(stream(`k${i}`, i));
  await a.close();
  assert.ok(readdirSync(dir).includes('snapshot.json'));
  const b = new LocalMetadataStore(dir, 5);
  const s = await b.load();
  assert.equal(s.streams.length, 12);
  assert.equal(s.streams.find((x) => x.key === 'k11')?.trim_seq, 11);
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
