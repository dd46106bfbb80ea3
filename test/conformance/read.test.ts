// Conformance: the read query (starts, knobs, clamp, encoding), tail, and create_stream_on_read.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, startServer, type RunningServer } from '../helpers/server.ts';
import {
  Client, streamPath, assertError, assertJsonContentType, assertPosition, bodies, b64, stopServer,
} from './client.ts';

for (const engine of ENGINES) {
  describe(`read (${engine})`, () => {
    let srv: RunningServer;
    let c: Client;
    before(async () => { srv = await startServer({ engine }); c = new Client(srv.baseUrl); });
    after(() => stopServer(srv));

    async function streamWith(n: number): Promise<{ bucket: string; key: string; path: string }> {
      const s = await c.freshStream();
      if (n > 0) await c.appendOk(s.bucket, s.key, bodies(n));
      return s;
    }

    test('read from seq_num answers 200 {records, tail} with full records', async () => {
      const { bucket, key } = await streamWith(3);
      const res = await c.read(bucket, key, { seq_num: 0 });
      assert.equal(res.status, 200, res.text);
      assertJsonContentType(res.headers);
      assertPosition(res.body.tail, 'tail');
      assert.equal(res.body.tail.seq_num, 3);
      assert.equal(res.body.records.length, 3);
      res.body.records.forEach((r: any, i: number) => {
        assert.equal(r.seq_num, i);
        assert.equal(typeof r.timestamp_ms, 'number');
        assert.equal(r.body, `r${i}`);
        assert.ok(!('body_b64' in r), 'a UTF-8 body rides its plain name only');
      });
    });

    test('read from the middle starts at that seq_num', async () => {
      const { bucket, key } = await streamWith(5);
      const page = await c.readOk(bucket, key, { seq_num: 3 });
      assert.deepEqual(page.records.map((r) => r.seq_num), [3, 4]);
    });

    test('a read at exactly the tail is 200 with no records', async () => {
      const { bucket, key } = await streamWith(2);
      const page = await c.readOk(bucket, key, { seq_num: 2 });
      assert.deepEqual(page.records, []);
      assert.equal(page.tail.seq_num, 2);
      const fresh = await streamWith(0);
      const empty = await c.readOk(fresh.bucket, fresh.key, { seq_num: 0 });
      assert.deepEqual(empty.records, []);
      assert.deepEqual(empty.tail, { seq_num: 0, timestamp_ms: 0 }, 'a fresh stream has tail {0, 0}');
    });

    test('a read past the tail without clamp is 416, its envelope {error} alone (the spec gives `tail` only to the 412)', async () => {
      const { bucket, key } = await streamWith(2);
      const res = await c.read(bucket, key, { seq_num: 3 });
      assertError(res, 416);
      assert.deepEqual(Object.keys(res.body), ['error']);
      const far = await c.read(bucket, key, { seq_num: 1_000_000 });
      assertError(far, 416, 'far past the tail');
    });

    test('a read past the tail with clamp is an empty page at the tail', async () => {
      const { bucket, key } = await streamWith(2);
      const page = await c.readOk(bucket, key, { seq_num: 50, clamp: true });
      assert.deepEqual(page.records, []);
      assert.equal(page.tail.seq_num, 2);
      const off = await c.readOk(bucket, key, { seq_num: 0, clamp: false });
      assert.equal(off.records.length, 2, 'clamp=false is an ordinary read');
    });

    test('exactly one start is required', async () => {
      const { bucket, key } = await streamWith(2);
      assertError(await c.read(bucket, key, {}), 400, 'no start');
      assertError(await c.read(bucket, key, { limit: 5 }), 400, 'knobs but no start');
      assertError(await c.read(bucket, key, { seq_num: 0, tail_offset: 1 }), 400, 'seq_num + tail_offset');
      assertError(await c.read(bucket, key, { seq_num: 0, timestamp_ms: 0 }), 400, 'seq_num + timestamp_ms');
      assertError(await c.read(bucket, key, { timestamp_ms: 0, tail_offset: 0 }), 400, 'timestamp_ms + tail_offset');
    });

    test('malformed query values are 400', async () => {
      const { bucket, key } = await streamWith(1);
      assertError(await c.read(bucket, key, { seq_num: 'abc' }), 400, 'seq_num text');
      assertError(await c.read(bucket, key, { seq_num: -1 }), 400, 'seq_num negative');
      assertError(await c.read(bucket, key, { seq_num: 1.5 }), 400, 'seq_num fraction');
      assertError(await c.read(bucket, key, { seq_num: '' }), 400, 'seq_num empty');
      assertError(await c.read(bucket, key, { tail_offset: -1 }), 400, 'tail_offset negative');
      assertError(await c.read(bucket, key, { seq_num: 0, limit: 'many' }), 400, 'limit text');
      assertError(await c.read(bucket, key, { seq_num: 0, max_bytes: -5 }), 400, 'max_bytes negative');
      assertError(await c.read(bucket, key, { seq_num: 0, until_ms: 'later' }), 400, 'until_ms text');
      assertError(await c.read(bucket, key, { seq_num: 0, clamp: 'maybe' }), 400, 'clamp not a boolean');
      assertError(await c.read(bucket, key, { seq_num: 0, format: 'hex' }), 400, 'unknown format');
    });

    test('read of a missing stream or bucket is 404', async () => {
      const { bucket } = await streamWith(0);
      assertError(await c.read(bucket, 'nope', { seq_num: 0 }), 404);
      assertError(await c.read('no-such-bucket-zz', 'nope', { seq_num: 0 }), 404, 'missing bucket');
      assertError(await c.get(`${streamPath(bucket, 'nope')}/records/tail`), 404, 'tail of a missing stream');
    });

    test('tail_offset starts that many records before the tail, clamped at 0', async () => {
      const { bucket, key } = await streamWith(5);
      const two = await c.readOk(bucket, key, { tail_offset: 2 });
      assert.deepEqual(two.records.map((r) => r.seq_num), [3, 4]);
      const zero = await c.readOk(bucket, key, { tail_offset: 0 });
      assert.deepEqual(zero.records, []);
      const over = await c.readOk(bucket, key, { tail_offset: 100 });
      assert.deepEqual(over.records.map((r) => r.seq_num), [0, 1, 2, 3, 4]);
    });

    test('limit caps the page', async () => {
      const { bucket, key } = await streamWith(10);
      const page = await c.readOk(bucket, key, { seq_num: 2, limit: 3 });
      assert.deepEqual(page.records.map((r) => r.seq_num), [2, 3, 4]);
      assert.equal(page.tail.seq_num, 10, 'the tail is the stream tail, not the page end');
      const one = await c.readOk(bucket, key, { tail_offset: 5, limit: 1 });
      assert.deepEqual(one.records.map((r) => r.seq_num), [5]);
    });

    test('limit is clamped to 8192', async () => {
      const { bucket, key } = await streamWith(0);
      await c.appendOk(bucket, key, Array.from({ length: 8200 }, (_, i) => ({ body: String(i) })));
      const page = await c.readOk(bucket, key, { seq_num: 0, limit: 100_000 });
      assert.equal(page.records.length, 8192);
      assert.equal(page.records[8191].seq_num, 8191);
      const rest = await c.readOk(bucket, key, { seq_num: 8192, limit: 100_000 });
      assert.deepEqual(rest.records.map((r) => r.seq_num), [8192, 8193, 8194, 8195, 8196, 8197, 8198, 8199]);
    });

    test('max_bytes caps the page but at least one record always returns; 0 means the maximum', async () => {
      const { bucket, key } = await streamWith(0);
      const body = 'z'.repeat(1000);
      await c.appendOk(bucket, key, [{ body }, { body }, { body }]);
      const tiny = await c.readOk(bucket, key, { seq_num: 0, max_bytes: 1 });
      assert.equal(tiny.records.length, 1, 'one record returns even when bigger than max_bytes');
      assert.equal(tiny.records[0].body, body);
      const two = await c.readOk(bucket, key, { seq_num: 0, max_bytes: 2500 });
      assert.equal(two.records.length, 2, 'two ~1000 byte records fit in 2500 bytes, three do not');
      const zero = await c.readOk(bucket, key, { seq_num: 0, max_bytes: 0 });
      assert.equal(zero.records.length, 3, 'max_bytes 0 takes the maximum');
    });

    test('a page of records made of many headers is cut by their count and their framing; paging on reads every record once', async () => {
      // 1,024 one-byte headers a record is 1 KiB of content but 1,024 objects to decode and encode:
      // an 8 MiB page of them was 8 million (36 s of the event loop; six at once ran a star out of
      // heap). A page holds at most READ_PAGE_HEADERS_MAX (65,536) headers, and each counts
      // READ_HEADER_METER_BYTES (8) against max_bytes.
      const { bucket, key } = await streamWith(0);
      const headers = Array.from({ length: 1024 }, (_, i) => ({ name: String.fromCharCode(97 + (i % 26)), value: '' }));
      const total = 150;
      for (let at = 0; at < total; at += 50) {
        await c.appendOk(bucket, key, Array.from({ length: 50 }, (_, i) => ({ body: `r${at + i}`, headers })));
      }
      const first = await c.readOk(bucket, key, { seq_num: 0 });
      assert.equal(first.records.length, 64, 'a page stops at 65,536 headers');
      assert.equal(first.records[0].headers.length, 1024);
      // 2 bytes of body (r0, r1, r2) and 1,024 × (1 + 8) of headers: three such records take 27,654
      // bytes (by content alone 3,078, and 26 records would fit).
      const metered = await c.readOk(bucket, key, { seq_num: 0, max_bytes: 3 * (2 + 1024 * 9) });
      assert.equal(metered.records.length, 3, 'max_bytes counts each header\'s framing');
      const seen: string[] = [];
      for (let seq = 0; seq < total;) {
        const page = await c.readOk(bucket, key, { seq_num: seq });
        assert.ok(page.records.length > 0);
        for (const r of page.records) seen.push(r.body);
        seq = page.records[page.records.length - 1].seq_num + 1;
      }
      assert.deepEqual(seen, Array.from({ length: total }, (_, i) => `r${i}`));
    });

    test('until_ms is an exclusive upper time bound', async () => {
      const { bucket, key } = await streamWith(0);
      await c.appendOk(bucket, key, [
        { body: 'a', timestamp_ms: 1000 }, { body: 'b', timestamp_ms: 2000 }, { body: 'c', timestamp_ms: 3000 },
      ]);
      const page = await c.readOk(bucket, key, { seq_num: 0, until_ms: 2000 });
      assert.deepEqual(page.records.map((r) => r.body), ['a']);
      const incl = await c.readOk(bucket, key, { seq_num: 0, until_ms: 2001 });
      assert.deepEqual(incl.records.map((r) => r.body), ['a', 'b']);
      const none = await c.readOk(bucket, key, { seq_num: 0, until_ms: 1000 });
      assert.deepEqual(none.records, []);
      assert.equal(none.tail.seq_num, 3);
    });

    test('a non-UTF-8 body comes back as body_b64; a UTF-8 body as body (per field)', async () => {
      const { bucket, key } = await streamWith(0);
      const bin = Buffer.from([0xff, 0xfe, 0x00, 0x80]);
      await c.appendOk(bucket, key, [
        { body_b64: bin.toString('base64'), headers: [{ name: 'ok', value_b64: bin.toString('base64') }] },
        { body_b64: b64('valid utf8 é'), headers: [{ name_b64: bin.toString('base64'), value: 'plain' }] },
      ]);
      const page = await c.readOk(bucket, key, { seq_num: 0 });
      const [r0, r1] = page.records;
      assert.equal(r0.body_b64, bin.toString('base64'));
      assert.ok(!('body' in r0), 'a non-UTF-8 body has no plain body field');
      assert.deepEqual(r0.headers, [{ name: 'ok', value_b64: bin.toString('base64') }]);
      assert.equal(r1.body, 'valid utf8 é', 'a base64-appended UTF-8 body reads back as text');
      assert.ok(!('body_b64' in r1));
      assert.deepEqual(r1.headers, [{ name_b64: bin.toString('base64'), value: 'plain' }]);
    });

    test('format=base64 makes every byte field base64 in its plain name', async () => {
      const { bucket, key } = await streamWith(0);
      const bin = Buffer.from([0xc3, 0x28, 0xa0]);
      await c.appendOk(bucket, key, [
        { body: 'text', headers: [{ name: 'h', value: 'v' }] },
        { body_b64: bin.toString('base64') },
      ]);
      const page = await c.readOk(bucket, key, { seq_num: 0, format: 'base64' });
      const [r0, r1] = page.records;
      assert.equal(r0.body, b64('text'));
      assert.deepEqual(r0.headers, [{ name: b64('h'), value: b64('v') }]);
      assert.equal(r1.body, bin.toString('base64'));
      assert.ok(!('body_b64' in r0) && !('body_b64' in r1), 'no _b64 siblings under format=base64');
      const raw = await c.readOk(bucket, key, { seq_num: 0, format: 'raw' });
      assert.equal(raw.records[0].body, 'text', 'format=raw is the default encoding');
    });

    test('records carry timestamps; GET tail answers the Position of the last record', async () => {
      const { bucket, key, path } = await streamWith(0);
      await c.appendOk(bucket, key, [{ body: 'a', timestamp_ms: 5000 }, { body: 'b', timestamp_ms: 6000 }]);
      const res = await c.get(`${path}/records/tail`);
      assert.equal(res.status, 200, res.text);
      assertJsonContentType(res.headers);
      assert.deepEqual(res.body, { seq_num: 2, timestamp_ms: 6000 });
      const page = await c.readOk(bucket, key, { seq_num: 0 });
      assert.deepEqual(page.tail, { seq_num: 2, timestamp_ms: 6000 });
    });

    test('read from timestamp_ms starts at the first record stamped at or after it', async () => {
      const { bucket, key } = await streamWith(0);
      await c.appendOk(bucket, key, [
        { body: 'a', timestamp_ms: 1000 }, { body: 'b', timestamp_ms: 2000 }, { body: 'c', timestamp_ms: 3000 },
      ]);
      assert.deepEqual((await c.readOk(bucket, key, { timestamp_ms: 2000 })).records.map((r) => r.body), ['b', 'c']);
      assert.deepEqual((await c.readOk(bucket, key, { timestamp_ms: 1500 })).records.map((r) => r.body), ['b', 'c']);
      assert.deepEqual((await c.readOk(bucket, key, { timestamp_ms: 0 })).records.map((r) => r.body), ['a', 'b', 'c']);
      const after = await c.readOk(bucket, key, { timestamp_ms: 3001 });
      assert.deepEqual(after.records, [], 'a time after the last record is an empty page');
    });

    test('create_stream_on_read: a read of a missing stream is an empty page and creates it', async () => {
      const bucket = await c.createBucket({ create_stream_on_read: true, default_retention_max_age_ms: 604_800_000 });
      const page = await c.readOk(bucket, 'lazy', { seq_num: 0 });
      assert.deepEqual(page.records, []);
      assert.deepEqual(page.tail, { seq_num: 0, timestamp_ms: 0 });
      const got = await c.get(streamPath(bucket, 'lazy'));
      assert.equal(got.status, 200, `the stream exists after the read: ${got.text}`);
      assert.equal(got.body.retention_max_age_ms, 604_800_000, 'created from the bucket defaults');
      const ack = await c.appendOk(bucket, 'lazy', bodies(1));
      assert.equal(ack.start.seq_num, 0);
    });

    test('create_stream_on_read: a read the new stream would refuse (a start past its tail, 416) creates nothing; clamped, it creates', async () => {
      const bucket = await c.createBucket({ create_stream_on_read: true });
      assertError(await c.read(bucket, 'past', { seq_num: 5 }), 416);
      assertError(await c.get(streamPath(bucket, 'past')), 404, 'not created');
      const clamped = await c.readOk(bucket, 'past', { seq_num: 5, clamp: true });
      assert.deepEqual(clamped.records, []);
      assert.equal((await c.get(streamPath(bucket, 'past'))).status, 200, 'a clamped read creates it');
    });

    test('without create_stream_on_read a read does not create the stream', async () => {
      const bucket = await c.createBucket({ create_stream_on_append: true });
      assertError(await c.read(bucket, 'lazy', { seq_num: 0 }), 404);
      assertError(await c.get(streamPath(bucket, 'lazy')), 404);
    });

    test('paging through a stream with limit visits every record once', async () => {
      const { bucket, key } = await streamWith(25);
      const seen: number[] = [];
      let next = 0;
      for (let i = 0; i < 100 && next < 25; i++) {
        const page = await c.readOk(bucket, key, { seq_num: next, limit: 7 });
        assert.ok(page.records.length > 0 && page.records.length <= 7);
        seen.push(...page.records.map((r) => r.seq_num));
        next = page.records[page.records.length - 1].seq_num + 1;
      }
      assert.deepEqual(seen, Array.from({ length: 25 }, (_, i) => i));
    });

    test('a leading byte-order mark is content: it reads back as written, never stripped', async () => {
      const s = await c.freshStream();
      await c.appendOk(s.bucket, s.key, [{ body: '\ufeffhello', headers: [{ name: '\ufeffh', value: '\ufeffv' }] }, { body_b64: b64(Buffer.from('\ufeffhi')) }]);
      const page = await c.readOk(s.bucket, s.key, { seq_num: 0 });
      assert.equal(page.records[0].body, '\ufeffhello');
      assert.deepEqual(page.records[0].headers, [{ name: '\ufeffh', value: '\ufeffv' }]);
      assert.equal(page.records[1].body, '\ufeffhi');
    });
  });
}
