// One star, both transports: the same key bytes, percent-encoded on HTTP and raw on gRPC, name one
// stream, whether or not they are UTF-8.
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { call } from './client.ts';
import { startGrpcChild, type GrpcChild } from './child.ts';

describe('byte keys across HTTP and gRPC', () => {
  let g: GrpcChild;
  before(async () => { g = await startGrpcChild(); });
  after(async () => { await g.stop(); });

  for (const [name, key] of [['UTF-8', Buffer.from('eu/ü', 'utf8')], ['not UTF-8', Buffer.from([0x80, 0x2f, 0xff, 0xed, 0xa0, 0x80])]] as const) {
    it(`a ${name} key written on HTTP reads back on gRPC, and the other way`, async () => {
      const base = g.server.baseUrl;
      const bucket = `bk${name.length}`;
      assert.equal((await fetch(`${base}/v1/buckets/${bucket}`, { method: 'POST', body: '{}' })).status, 201);
      const seg = [...key].map((x) => `%${x.toString(16).padStart(2, '0')}`).join('');
      const created = await fetch(`${base}/v1/streams/${bucket}/${seg}`, { method: 'POST', body: '{}' });
      assert.equal(created.status, 201, await created.clone().text());
      const ack = await fetch(`${base}/v1/streams/${bucket}/${seg}/records`, { method: 'POST', body: '{"records":[{"body":"via http"}]}' });
      assert.equal(ack.status, 200, await ack.clone().text());

      const got = await call(g.data.GetStream.bind(g.data), { bucket, key });
      assert.equal(got.info?.stream_id, (await created.json() as { stream_id: string }).stream_id);
      await call(g.data.Append.bind(g.data), { bucket, key, records: [{ body: Buffer.from('via grpc') }] });
      const page = await (await fetch(`${base}/v1/streams/${bucket}/${seg}/records?seq_num=0`)).json() as { records: { body: string }[] };
      assert.deepEqual(page.records.map((r) => r.body), ['via http', 'via grpc']);
    });
  }
});
