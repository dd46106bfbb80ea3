// A DS stream also written through svcd's own API (README: records written that way read as data):
// the DS surface's cached state then knows an old tail, and its guarded append misses. The write must
// be decided again on the state reloaded from the records (producer dedup included), not refused, and
// reads must see the outside records (the state catches up with the tail).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, removeDir, startServer } from '../helpers/server.ts';

for (const engine of ENGINES) {
  test(`DS writes after an append through svcd's own API land, in order, deduplicated (${engine})`, async () => {
    const star = await startServer({ engine });
    const ds = `${star.baseUrl}/ds/v1/stream/mixed`;
    const post = async (body: string, seq: number): Promise<number> => {
      const res = await fetch(ds, {
        method: 'POST', body,
        headers: { 'Content-Type': 'text/plain', 'Producer-Id': 'p', 'Producer-Epoch': '0', 'Producer-Seq': String(seq) },
      });
      await res.arrayBuffer();
      return res.status;
    };
    const svcdAppend = async (body: string): Promise<void> => {
      const res = await fetch(`${star.baseUrl}/v1/streams/ds/mixed/records`, { method: 'POST', body: JSON.stringify({ records: [{ body }] }) });
      assert.equal(res.status, 200, await res.text());
    };
    try {
      const put = await fetch(ds, { method: 'PUT', headers: { 'Content-Type': 'text/plain' }, body: 'a' });
      await put.arrayBuffer();
      assert.equal(put.status, 201);
      assert.equal(await post('b', 0), 200);
      await svcdAppend('-x-');
      assert.equal(await post('c', 1), 200, 'the append after an outside write lands');
      await svcdAppend('-y-');
      // Reads see the outside write too: the next offset is past it (meta, a, b, -x-, c, -y-).
      const head = await fetch(ds, { method: 'HEAD' });
      assert.equal(head.headers.get('stream-next-offset'), `${String(6).padStart(16, '0')}_${'0'.repeat(16)}`);
      assert.equal(await post('c', 1), 204, 'a retry of an accepted producer seq is still a duplicate');
      assert.equal(await post('d', 2), 200);
      const closed = await fetch(ds, { method: 'POST', headers: { 'Stream-Closed': 'true' } });
      await closed.arrayBuffer();
      assert.equal(closed.status, 204);
      const read = await fetch(`${ds}?offset=-1`);
      assert.equal(read.status, 200);
      assert.equal(await read.text(), 'ab-x-c-y-d');
      assert.equal(read.headers.get('stream-closed'), 'true');
    } finally {
      await star.stop();
      removeDir(star.dataDir);
    }
  });
}
