// Conformance: the append envelope, its acknowledgement, match_seq_num, validation and autocreate.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, startServer, type RunningServer } from '../helpers/server.ts';
import {
  Client, uniq, streamPath, assertError, assertJsonContentType, assertPosition, bodies, b64, stopServer,
} from './client.ts';

const MiB = 1024 * 1024;

for (const engine of ENGINES) {
  describe(`append (${engine})`, () => {
    let srv: RunningServer;
    let c: Client;
    before(async () => { srv = await startServer({ engine }); c = new Client(srv.baseUrl); });
    after(() => stopServer(srv));

    /** Asserts the stream still holds exactly n records. */
    async function assertTail(bucket: string, key: string, n: number, what: string): Promise<void> {
      const t = await c.tail(bucket, key);
      assert.equal(t.seq_num, n, `${what}: tail should stay ${n}`);
    }

    test('append answers 200 {start, end, tail} Positions', async () => {
      const { bucket, key } = await c.freshStream();
      const res = await c.append(bucket, key, bodies(3));
      assert.equal(res.status, 200, res.text);
      assertJsonContentType(res.headers);
      assertPosition(res.body.start, 'start');
      assertPosition(res.body.end, 'end');
      assertPosition(res.body.tail, 'tail');
      assert.equal(res.body.start.seq_num, 0);
      assert.equal(res.body.end.seq_num, 3);
      assert.ok(res.body.tail.seq_num >= res.body.end.seq_num, 'tail is at least end');
      assert.ok(res.body.start.timestamp_ms > 0, 'the first record has a time');
    });

    test('the stream\'s batch_max_records and batch_max_bytes hold on an HTTP append: over them is 400 and stores nothing', async () => {
      const { bucket, key } = await c.freshStream({ batch_max_records: 2, batch_max_bytes: 20 });
      assertError(await c.append(bucket, key, bodies(5)), 400, 'five records over a cap of two');
      assertError(await c.append(bucket, key, [{ body: 'x'.repeat(21) }]), 400, '21 bytes over a cap of 20');
      await assertTail(bucket, key, 0, 'after the refusals');
      await c.appendOk(bucket, key, [{ body: 'x'.repeat(10) }, { body: 'y'.repeat(10) }]);
      await assertTail(bucket, key, 2, 'a batch at both caps');
    });

    test('the stream\'s throughput cap holds on an HTTP append: a batch past the longest wait is 429 and takes nothing; one within it waits and lands', async () => {
      const { bucket, key } = await c.freshStream({ throughput_max_bytes_per_second: 100 });
      // 1,200 bytes at 100 B/s would wait 11 s, past the longest wait: refused at once.
      const over = await c.append(bucket, key, [{ body: 'x'.repeat(1200) }]);
      assertError(over, 429, 'a batch the cap would hold back too long');
      assert.match(over.body.error, /throughput/);
      // Had the refused batch taken its bytes, this one would wait 11 s more and be refused too.
      await c.appendOk(bucket, key, [{ body: 'y'.repeat(150) }]);
      const page = await c.readOk(bucket, key, { seq_num: 0 });
      assert.deepEqual(page.records.map((r) => r.body), ['y'.repeat(150)]);
    });

    test('a bucket\'s default throughput cap holds on the append that creates its stream: past the longest wait is 429 and creates nothing', async () => {
      const bucket = await c.createBucket({ create_stream_on_append: true, default_throughput_max_bytes_per_second: 100 });
      const key = uniq('s');
      const over = await c.append(bucket, key, [{ body: 'x'.repeat(1200) }]);
      assertError(over, 429, 'a creating batch the new stream\'s cap would hold back too long');
      assert.match(over.body.error, /throughput/);
      assertError(await c.get(`${streamPath(bucket, key)}`), 404, 'the refused append made no stream');
      await c.appendOk(bucket, key, [{ body: 'y'.repeat(100) }]);
      // The creating append took the cap's 100 bytes: 1,090 more would wait about 10.9 s, past the longest
      // wait, so they are refused (had it taken nothing, they would wait 9.9 s and land).
      assertError(await c.append(bucket, key, [{ body: 'z'.repeat(1090) }]), 429, 'the cap counts the creating append');
      const page = await c.readOk(bucket, key, { seq_num: 0 });
      assert.deepEqual(page.records.map((r) => r.body), ['y'.repeat(100)]);
    });

    test('sequence numbers continue across batches with no gaps', async () => {
      const { bucket, key } = await c.freshStream();
      const a = await c.appendOk(bucket, key, bodies(2, 'a'));
      const b = await c.appendOk(bucket, key, bodies(1, 'b'));
      const d = await c.appendOk(bucket, key, bodies(4, 'd'));
      assert.deepEqual([a.start.seq_num, a.end.seq_num], [0, 2]);
      assert.deepEqual([b.start.seq_num, b.end.seq_num], [2, 3]);
      assert.deepEqual([d.start.seq_num, d.end.seq_num], [3, 7]);
      assert.equal(d.tail.seq_num, 7);
      const page = await c.readOk(bucket, key, { seq_num: 0 });
      assert.deepEqual(page.records.map((r) => r.seq_num), [0, 1, 2, 3, 4, 5, 6]);
      assert.deepEqual(page.records.map((r) => r.body), ['a0', 'a1', 'b0', 'd0', 'd1', 'd2', 'd3']);
    });

    test('concurrent appends get disjoint ranges covering 0..n without gaps', async () => {
      const { bucket, key } = await c.freshStream();
      const acks = await Promise.all(Array.from({ length: 20 }, (_, i) => c.appendOk(bucket, key, bodies(3, `p${i}-`))));
      const ranges = acks.map((a) => [a.start.seq_num, a.end.seq_num]).sort((x, y) => x[0] - y[0]);
      let next = 0;
      for (const [s, e] of ranges) {
        assert.equal(s, next, 'ranges tile with no gap or overlap');
        assert.equal(e - s, 3);
        next = e;
      }
      assert.equal((await c.tail(bucket, key)).seq_num, 60);
    });

    test('the ack tail tracks the committed tail and GET tail agrees', async () => {
      const { bucket, key } = await c.freshStream();
      const ack = await c.appendOk(bucket, key, bodies(5));
      const t = await c.tail(bucket, key);
      assert.equal(t.seq_num, 5);
      assert.equal(ack.tail.seq_num, 5);
      assert.deepEqual(ack.tail, t);
      const page = await c.readOk(bucket, key, { seq_num: 0 });
      assert.equal(t.timestamp_ms, page.records[4].timestamp_ms, "the tail's time is the last record's");
    });

    test('body, body_b64, headers and empty bodies round-trip', async () => {
      const { bucket, key } = await c.freshStream();
      await c.appendOk(bucket, key, [
        { body: 'plain text ✓' },
        { body_b64: b64('from base64') },
        { body: '' },
        { body: 'h', headers: [{ name: 'content-type', value: 'text/plain' }, { name_b64: b64('n2'), value_b64: b64('v2') }] },
        { body: 'dup', headers: [{ name: 'x', value: '1' }, { name: 'x', value: '2' }] },
      ]);
      const page = await c.readOk(bucket, key, { seq_num: 0 });
      const r = page.records;
      assert.equal(r.length, 5);
      assert.equal(r[0].body, 'plain text ✓');
      assert.equal(r[1].body, 'from base64');
      assert.equal(r[2].body, '');
      assert.equal(r[3].body, 'h');
      assert.deepEqual(r[3].headers, [{ name: 'content-type', value: 'text/plain' }, { name: 'n2', value: 'v2' }]);
      assert.deepEqual(r[4].headers, [{ name: 'x', value: '1' }, { name: 'x', value: '2' }], 'header order and duplicates kept');
      for (const rec of [r[0], r[1], r[2]]) assert.ok(!('headers' in rec), 'headers omitted when empty');
    });

    test('a header without a value carries the empty value', async () => {
      const { bucket, key } = await c.freshStream();
      await c.appendOk(bucket, key, [{ body: 'x', headers: [{ name: 'flag' }] }]);
      const page = await c.readOk(bucket, key, { seq_num: 0 });
      assert.equal(page.records[0].headers.length, 1);
      assert.equal(page.records[0].headers[0].name, 'flag');
      assert.equal(page.records[0].headers[0].value ?? '', '');
      assert.ok(!page.records[0].headers[0].value_b64, 'empty value is valid UTF-8, no _b64 sibling');
    });

    test('match_seq_num equal to the next seq_num appends', async () => {
      const { bucket, key } = await c.freshStream();
      const a = await c.appendOk(bucket, key, bodies(2), { match_seq_num: 0 });
      assert.equal(a.start.seq_num, 0);
      const b = await c.appendOk(bucket, key, bodies(1), { match_seq_num: 2 });
      assert.equal(b.start.seq_num, 2);
      assert.equal(b.end.seq_num, 3);
    });

    test('match_seq_num miss is 412 with the tail and nothing appended', async () => {
      const { bucket, key } = await c.freshStream();
      const ack = await c.appendOk(bucket, key, bodies(3));
      for (const wrong of [0, 2, 4, 100]) {
        const res = await c.append(bucket, key, bodies(2, 'no'), { match_seq_num: wrong });
        assertError(res, 412, `match_seq_num ${wrong}`);
        assert.deepEqual(res.body.tail, ack.tail, 'the 412 carries the committed tail');
        assert.equal(res.body.tail.seq_num, 3, 'tail.seq_num is exactly the next value to try');
        assert.ok(!('fencing_token' in res.body), 'a sequence miss carries no fencing_token');
      }
      await assertTail(bucket, key, 3, 'after misses');
      const retry = await c.appendOk(bucket, key, bodies(1), { match_seq_num: 3 });
      assert.equal(retry.start.seq_num, 3);
      const page = await c.readOk(bucket, key, { seq_num: 0 });
      assert.ok(!page.records.some((r) => String(r.body).startsWith('no')), 'no record of a failed batch landed');
    });

    test('append to a missing stream is 404 unless the bucket creates on append', async () => {
      const bucket = await c.createBucket();
      assertError(await c.append(bucket, 'missing', bodies(1)), 404);
      assertError(await c.get(streamPath(bucket, 'missing')), 404, 'no stream was created');
      assertError(await c.append(uniq('nobucket'), 'missing', bodies(1)), 404, 'missing bucket');
    });

    test('create_stream_on_append creates the stream from the bucket defaults', async () => {
      const bucket = await c.createBucket({
        create_stream_on_append: true, default_retention_max_age_ms: 604_800_000, default_timestamping_mode: 'arrival',
      });
      const ack = await c.appendOk(bucket, 'auto', bodies(2));
      assert.equal(ack.start.seq_num, 0);
      assert.equal(ack.end.seq_num, 2);
      const got = await c.get(streamPath(bucket, 'auto'));
      assert.equal(got.status, 200, got.text);
      assert.equal(got.body.retention_max_age_ms, 604_800_000);
      assert.equal(got.body.timestamping_mode, 'arrival');
      const next = await c.appendOk(bucket, 'auto', bodies(1));
      assert.equal(next.start.seq_num, 2, 'the second append lands on the same stream');
      const page = await c.readOk(bucket, 'auto', { seq_num: 0 });
      assert.equal(page.records.length, 3);
    });

    test('create_stream_on_append with match_seq_num 0 creates; a failed validation creates nothing', async () => {
      const bucket = await c.createBucket({ create_stream_on_append: true });
      assertError(await c.append(bucket, 'invalid', []), 400);
      assertError(await c.get(streamPath(bucket, 'invalid')), 404, 'a 400 append must not create the stream');
      const ack = await c.appendOk(bucket, 'matched', bodies(1), { match_seq_num: 0 });
      assert.equal(ack.start.seq_num, 0);
      // A 412 (a match_seq_num miss or a fencing mismatch) creates nothing either.
      const miss = await c.append(bucket, 'missed', bodies(1), { match_seq_num: 5 });
      assertError(miss, 412, 'a match_seq_num miss on a missing stream');
      assert.deepEqual(miss.body.tail, { seq_num: 0, timestamp_ms: 0 });
      assertError(await c.append(bucket, 'fenced', bodies(1), { fencing_token: 'q' }), 412, 'a fencing mismatch on a missing stream');
      for (const k of ['missed', 'fenced']) assertError(await c.get(streamPath(bucket, k)), 404, `a 412 append must not create ${k}`);
    });

    test('create_stream_on_append: an append the default config refuses (timestamping, batch caps) creates nothing', async () => {
      const bucket = await c.createBucket({ create_stream_on_append: true, default_timestamping_mode: 'client-require', default_batch_max_records: 1, default_batch_max_bytes: 8 });
      assertError(await c.append(bucket, 'no-ts', [{ body: 'x' }]), 400, 'client-require without timestamp_ms');
      assertError(await c.append(bucket, 'two', [{ body: 'x', timestamp_ms: 1 }, { body: 'y', timestamp_ms: 2 }]), 400, 'over batch_max_records');
      assertError(await c.append(bucket, 'big', [{ body: 'x'.repeat(9), timestamp_ms: 1 }]), 400, 'over batch_max_bytes');
      for (const k of ['no-ts', 'two', 'big']) assertError(await c.get(streamPath(bucket, k)), 404, `a refused append must not create ${k}`);
      const ack = await c.appendOk(bucket, 'fits', [{ body: 'x', timestamp_ms: 1 }]);
      assert.equal(ack.end.seq_num, 1, 'an append the config admits still creates its stream');
    });

    test('records must be a non-empty array', async () => {
      const { bucket, key } = await c.freshStream();
      assertError(await c.append(bucket, key, []), 400, 'empty records');
      assertError(await c.post(`${streamPath(bucket, key)}/records`, {}), 400, 'missing records');
      assertError(await c.post(`${streamPath(bucket, key)}/records`, { records: 'x' }), 400, 'records not an array');
      assertError(await c.post(`${streamPath(bucket, key)}/records`, { records: [1] }), 400, 'record not an object');
      assertError(await c.post(`${streamPath(bucket, key)}/records`, { records: [null] }), 400, 'null record');
      await assertTail(bucket, key, 0, 'after invalid envelopes');
    });

    test('each record needs exactly one of body and body_b64', async () => {
      const { bucket, key } = await c.freshStream();
      assertError(await c.append(bucket, key, [{}]), 400, 'neither');
      assertError(await c.append(bucket, key, [{ body: 'a', body_b64: b64('a') }]), 400, 'both');
      assertError(await c.append(bucket, key, [{ body: 'ok' }, {}]), 400, 'one bad record in a batch');
      assertError(await c.post(`${streamPath(bucket, key)}/records`, { records: [{ body: 5 }] }), 400, 'body not a string');
      await assertTail(bucket, key, 0, 'a batch with one bad record appends nothing');
    });

    test('bad base64 is 400', async () => {
      const { bucket, key } = await c.freshStream();
      assertError(await c.append(bucket, key, [{ body_b64: '***not base64***' }]), 400, 'body_b64');
      assertError(await c.append(bucket, key, [{ body: 'x', headers: [{ name_b64: '%%%', value: 'v' }] }]), 400, 'name_b64');
      assertError(await c.append(bucket, key, [{ body: 'x', headers: [{ name: 'n', value_b64: '!!' }] }]), 400, 'value_b64');
      // Padding that pads nothing, padding short of a quantum, and a last character whose unused bits
      // are not zero (two strings for one value) are no base64 either.
      for (const bad of ['==', 'YQ=', 'Y=Q=', 'YQ===', 'YR==', 'AB', 'YWJ=']) {
        assertError(await c.append(bucket, key, [{ body_b64: bad }]), 400, `body_b64 ${bad}`);
      }
      await assertTail(bucket, key, 0, 'after bad base64');
      // Past the record cap, base64 is the cap's 400.
      assertError(await c.append(bucket, key, [{ body_b64: Buffer.alloc(12 * 1024 * 1024, 7).toString('base64') }]), 400, 'body_b64 of 12 MiB');
      await assertTail(bucket, key, 0, 'after bad base64');
      // Canonical base64, padded or not, in either alphabet, is the same bytes.
      for (const good of ['YQ==', 'YQ', '-_8', '+/8=']) assert.equal((await c.append(bucket, key, [{ body_b64: good }])).status, 200, good);
      assert.equal((await c.append(bucket, key, [{ body_b64: Buffer.alloc(1024 * 1024, 7).toString('base64') }])).status, 200, '1 MiB record as base64');
    });

    test('headers: a missing or empty name is 400; both forms of a field are 400; headers must be an array', async () => {
      const { bucket, key } = await c.freshStream();
      assertError(await c.append(bucket, key, [{ body: 'x', headers: [{ value: 'v' }] }]), 400, 'missing name');
      assertError(await c.append(bucket, key, [{ body: 'x', headers: [{ name: '', value: 'v' }] }]), 400, 'empty name (gRPC refuses it too)');
      assertError(await c.append(bucket, key, [{ body: 'x', headers: [{ name_b64: '', value: 'v' }] }]), 400, 'empty name_b64');
      assertError(await c.append(bucket, key, [{ body: 'x', headers: [{ name: 'n', name_b64: b64('n') }] }]), 400, 'name and name_b64');
      assertError(await c.append(bucket, key, [{ body: 'x', headers: [{ name: 'n', value: 'v', value_b64: b64('v') }] }]), 400, 'value and value_b64');
      assertError(await c.post(`${streamPath(bucket, key)}/records`, { records: [{ body: 'x', headers: 'h' }] }), 400, 'headers not an array');
      assertError(await c.post(`${streamPath(bucket, key)}/records`, { records: [{ body: 'x', headers: [{ name: 1 }] }] }), 400, 'name not a string');
      await assertTail(bucket, key, 0, 'after bad headers');
    });

    test('bad match_seq_num, fencing_token or timestamp types are 400', async () => {
      const { bucket, key } = await c.freshStream();
      const p = `${streamPath(bucket, key)}/records`;
      assertError(await c.post(p, { records: bodies(1), match_seq_num: 'zero' }), 400, 'match_seq_num string');
      assertError(await c.post(p, { records: bodies(1), match_seq_num: -1 }), 400, 'match_seq_num negative');
      assertError(await c.post(p, { records: bodies(1), fencing_token: 7 }), 400, 'fencing_token number');
      assertError(await c.post(p, { records: [{ body: 'x', timestamp_ms: 'now' }] }), 400, 'timestamp string');
      assertError(await c.post(p, { records: [{ body: 'x', timestamp_ms: 1.5 }] }), 400, 'timestamp fraction');
      await assertTail(bucket, key, 0, 'after bad types');
    });

    test('65536 records in one batch are accepted; 65537 are 400', async () => {
      const { bucket, key } = await c.freshStream();
      const many = Array.from({ length: 65_537 }, () => ({ body: '' }));
      assertError(await c.append(bucket, key, many), 400, '65537 records');
      await assertTail(bucket, key, 0, 'after the oversized batch');
      const ack = await c.appendOk(bucket, key, many.slice(0, 65_536));
      assert.equal(ack.end.seq_num, 65_536);
    });

    test('a record with more than 1 MiB of content is 400; one just under is accepted', async () => {
      const { bucket, key } = await c.freshStream();
      const big = 'x'.repeat(MiB + 1);
      assertError(await c.append(bucket, key, [{ body: big }]), 400, 'body over 1 MiB');
      assertError(await c.append(bucket, key, [{ body: 'small' }, { body_b64: b64(Buffer.alloc(MiB + 1, 7)) }]), 400, 'b64 body over 1 MiB');
      await assertTail(bucket, key, 0, 'after oversized records');
      const ok = 'y'.repeat(MiB - 4096);
      const ack = await c.appendOk(bucket, key, [{ body: ok }]);
      assert.equal(ack.end.seq_num, 1);
      const page = await c.readOk(bucket, key, { seq_num: 0 });
      assert.equal(page.records[0].body.length, ok.length);
    });
  });
}
