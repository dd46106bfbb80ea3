// Conformance: trimming (watermark, 410, clamp) and fencing (tokens, 412, producer_policy fenced).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, startServer, type RunningServer } from '../helpers/server.ts';
import {
  Client, uniq, streamPath, assertError, assertJsonContentType, assertPosition, bodies, stopServer,
} from './client.ts';

for (const engine of ENGINES) {
  describe(`trim and fence (${engine})`, () => {
    let srv: RunningServer;
    let c: Client;
    before(async () => { srv = await startServer({ engine }); c = new Client(srv.baseUrl); });
    after(() => stopServer(srv));

    async function streamWith(n: number, cfg: Record<string, unknown> = {}): Promise<{ bucket: string; key: string; path: string }> {
      const s = await c.freshStream(cfg);
      if (n > 0) await c.appendOk(s.bucket, s.key, bodies(n));
      return s;
    }

    // ---------------------------------------------------------------- trim
    test('trim {seq_num} is 204; reads below it are 410; the tail is unchanged', async () => {
      const { bucket, key, path } = await streamWith(5);
      const res = await c.post(`${path}/trim`, { seq_num: 2 });
      assert.equal(res.status, 204, res.text);
      assert.equal(res.text, '', '204 has no body');
      const gone = await c.read(bucket, key, { seq_num: 0 });
      assertError(gone, 410, 'read below the watermark');
      assert.ok(!('tail' in gone.body), '410 carries no detail');
      assertError(await c.read(bucket, key, { seq_num: 1 }), 410, 'read just below the watermark');
      const kept = await c.readOk(bucket, key, { seq_num: 2 });
      assert.deepEqual(kept.records.map((r) => r.seq_num), [2, 3, 4], 'numbering never changes');
      assert.deepEqual(kept.records.map((r) => r.body), ['r2', 'r3', 'r4']);
      assert.equal((await c.tail(bucket, key)).seq_num, 5);
    });

    test('clamp pulls a start below the watermark up to the earliest retained record', async () => {
      const { bucket, key, path } = await streamWith(5);
      assert.equal((await c.post(`${path}/trim`, { seq_num: 3 })).status, 204);
      const page = await c.readOk(bucket, key, { seq_num: 0, clamp: true });
      assert.deepEqual(page.records.map((r) => r.seq_num), [3, 4]);
      const off = await c.readOk(bucket, key, { tail_offset: 100, clamp: true });
      assert.deepEqual(off.records.map((r) => r.seq_num), [3, 4], 'tail_offset beyond the retained range, clamped');
    });

    test('a tail_offset start below the watermark is 410 without clamp, as any start is (it is clamped at 0, not at the watermark)', async () => {
      const { bucket, key, path } = await streamWith(5);
      assert.equal((await c.post(`${path}/trim`, { seq_num: 3 })).status, 204);
      assertError(await c.read(bucket, key, { tail_offset: 3 }), 410, 'start 2, below the watermark 3');
      assertError(await c.read(bucket, key, { tail_offset: 100 }), 410, 'start clamped at 0, below the watermark');
      const edge = await c.readOk(bucket, key, { tail_offset: 2 });
      assert.deepEqual(edge.records.map((r) => r.seq_num), [3, 4], 'start 3, the earliest retained record');
    });

    test('the watermark only advances: a lower trim is a no-op 204', async () => {
      const { bucket, key, path } = await streamWith(6);
      assert.equal((await c.post(`${path}/trim`, { seq_num: 4 })).status, 204);
      const lower = await c.post(`${path}/trim`, { seq_num: 1 });
      assert.equal(lower.status, 204, lower.text);
      assertError(await c.read(bucket, key, { seq_num: 2 }), 410, 'records 1..3 stay trimmed');
      const page = await c.readOk(bucket, key, { seq_num: 0, clamp: true });
      assert.equal(page.records[0].seq_num, 4);
      assert.equal((await c.post(`${path}/trim`, { seq_num: 4 })).status, 204, 'the same trim again');
    });

    test('trim to the tail makes every record unreadable but new appends continue numbering', async () => {
      const { bucket, key, path } = await streamWith(3);
      assert.equal((await c.post(`${path}/trim`, { seq_num: 3 })).status, 204);
      assertError(await c.read(bucket, key, { seq_num: 0 }), 410);
      const clamped = await c.readOk(bucket, key, { seq_num: 0, clamp: true });
      assert.deepEqual(clamped.records, []);
      assert.equal(clamped.tail.seq_num, 3);
      const ack = await c.appendOk(bucket, key, bodies(1, 'n'));
      assert.equal(ack.start.seq_num, 3);
      const page = await c.readOk(bucket, key, { seq_num: 0, clamp: true });
      assert.deepEqual(page.records.map((r) => [r.seq_num, r.body]), [[3, 'n0']]);
    });

    test('trim {timestamp_ms} removes the records stamped before it', async () => {
      const { bucket, key, path } = await streamWith(0);
      await c.appendOk(bucket, key, [
        { body: 'a', timestamp_ms: 1000 }, { body: 'b', timestamp_ms: 2000 },
        { body: 'c', timestamp_ms: 3000 }, { body: 'd', timestamp_ms: 4000 },
      ]);
      const res = await c.post(`${path}/trim`, { timestamp_ms: 2500 });
      assert.equal(res.status, 204, res.text);
      assertError(await c.read(bucket, key, { seq_num: 1 }), 410, 'record stamped before the trim time');
      const page = await c.readOk(bucket, key, { seq_num: 0, clamp: true });
      assert.deepEqual(page.records.map((r) => r.body), ['c', 'd'], 'watermark at the first record with ts >= 2500');
      assert.equal((await c.post(`${path}/trim`, { timestamp_ms: 3000 })).status, 204);
      const after3000 = await c.readOk(bucket, key, { seq_num: 0, clamp: true });
      assert.deepEqual(after3000.records.map((r) => r.body), ['c', 'd'], 'a record stamped exactly at the time stays');
      assert.equal((await c.post(`${path}/trim`, { timestamp_ms: 500 })).status, 204, 'an earlier time is a no-op');
      assertError(await c.read(bucket, key, { seq_num: 0 }), 410);
    });

    test('trim needs exactly one of seq_num and timestamp_ms, well typed', async () => {
      const { bucket, key, path } = await streamWith(3);
      assertError(await c.post(`${path}/trim`, {}), 400, 'neither');
      assertError(await c.post(`${path}/trim`, { seq_num: 1, timestamp_ms: 1 }), 400, 'both');
      assertError(await c.post(`${path}/trim`, { seq_num: '1' }), 400, 'string');
      assertError(await c.post(`${path}/trim`, { seq_num: -1 }), 400, 'negative');
      const page = await c.readOk(bucket, key, { seq_num: 0 });
      assert.equal(page.records.length, 3, 'nothing was trimmed');
    });

    test('trim of a missing stream is 404', async () => {
      const bucket = await c.createBucket();
      assertError(await c.post(`${streamPath(bucket, 'nope')}/trim`, { seq_num: 1 }), 404);
    });

    // ---------------------------------------------------------------- fence
    test('fence installs a token: 200 {tail}, visible on GET stream', async () => {
      const { bucket, key, path } = await streamWith(2);
      const res = await c.post(`${path}/fence`, { fencing_token: 't1' });
      assert.equal(res.status, 200, res.text);
      assertJsonContentType(res.headers);
      assertPosition(res.body.tail, 'tail');
      assert.equal(res.body.tail.seq_num, 2);
      const got = await c.get(streamPath(bucket, key));
      assert.equal(got.body.fencing_token, 't1');
    });

    test('on a fenced stream an append without the token or with another is 412 with the installed token', async () => {
      const { bucket, key, path } = await streamWith(1);
      assert.equal((await c.post(`${path}/fence`, { fencing_token: 't1' })).status, 200);
      const none = await c.append(bucket, key, bodies(1));
      assertError(none, 412, 'no token');
      assert.equal(none.body.fencing_token, 't1');
      assert.ok(!('tail' in none.body), 'a fencing mismatch carries no tail');
      const wrong = await c.append(bucket, key, bodies(1), { fencing_token: 't2' });
      assertError(wrong, 412, 'wrong token');
      assert.equal(wrong.body.fencing_token, 't1');
      assert.equal((await c.tail(bucket, key)).seq_num, 1, 'nothing appended');
      const ok = await c.appendOk(bucket, key, bodies(1), { fencing_token: 't1' });
      assert.equal(ok.start.seq_num, 1);
    });

    test('a new token supersedes the old one', async () => {
      const { bucket, key, path } = await streamWith(0);
      assert.equal((await c.post(`${path}/fence`, { fencing_token: 't1' })).status, 200);
      assert.equal((await c.post(`${path}/fence`, { fencing_token: 't2' })).status, 200);
      const old = await c.append(bucket, key, bodies(1), { fencing_token: 't1' });
      assertError(old, 412);
      assert.equal(old.body.fencing_token, 't2');
      await c.appendOk(bucket, key, bodies(1), { fencing_token: 't2' });
      assert.equal((await c.get(streamPath(bucket, key))).body.fencing_token, 't2');
    });

    test('fencing with an empty token clears the fence', async () => {
      const { bucket, key, path } = await streamWith(0);
      assert.equal((await c.post(`${path}/fence`, { fencing_token: 't1' })).status, 200);
      const res = await c.post(`${path}/fence`, { fencing_token: '' });
      assert.equal(res.status, 200, res.text);
      assertPosition(res.body.tail);
      assert.equal((await c.get(streamPath(bucket, key))).body.fencing_token, '');
      await c.appendOk(bucket, key, bodies(1));
    });

    test('fencing with the token absent clears the fence', async () => {
      const { bucket, key, path } = await streamWith(0);
      assert.equal((await c.post(`${path}/fence`, { fencing_token: 't1' })).status, 200);
      const res = await c.post(`${path}/fence`, {});
      assert.equal(res.status, 200, res.text);
      assert.equal((await c.get(streamPath(bucket, key))).body.fencing_token, '');
      await c.appendOk(bucket, key, bodies(1));
    });

    test('fence combines with match_seq_num: both must hold', async () => {
      const { bucket, key, path } = await streamWith(2);
      assert.equal((await c.post(`${path}/fence`, { fencing_token: 'f' })).status, 200);
      const miss = await c.append(bucket, key, bodies(1), { fencing_token: 'f', match_seq_num: 0 });
      assertError(miss, 412, 'right token, wrong seq');
      assert.equal(miss.body.tail.seq_num, 2);
      const ok = await c.appendOk(bucket, key, bodies(1), { fencing_token: 'f', match_seq_num: 2 });
      assert.equal(ok.start.seq_num, 2);
    });

    test('producer_policy fenced with no token installed: an append without a token is 412', async () => {
      const { bucket, key, path } = await streamWith(0, { producer_policy: 'fenced' });
      const res = await c.append(bucket, key, bodies(1));
      assertError(res, 412);
      assert.equal(res.body.fencing_token, '', 'the installed token is empty');
      assert.equal((await c.tail(bucket, key)).seq_num, 0);
      assert.equal((await c.post(`${path}/fence`, { fencing_token: 'p1' })).status, 200);
      assertError(await c.append(bucket, key, bodies(1)), 412, 'still no token');
      const ok = await c.appendOk(bucket, key, bodies(1), { fencing_token: 'p1' });
      assert.equal(ok.start.seq_num, 0);
    });

    test('reconfiguring producer_policy to fenced takes effect for the next append', async () => {
      const { bucket, key, path } = await streamWith(1);
      const res = await c.patch(path, { producer_policy: 'fenced' });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.producer_policy, 'fenced');
      assertError(await c.append(bucket, key, bodies(1)), 412, 'fenced policy, no token');
      assert.equal((await c.post(`${path}/fence`, { fencing_token: 'pp' })).status, 200);
      await c.appendOk(bucket, key, bodies(1), { fencing_token: 'pp' });
      assert.equal((await c.patch(path, { producer_policy: 'any' })).status, 200);
      assertError(await c.append(bucket, key, bodies(1)), 412, 'the installed token still guards the stream');
      assert.equal((await c.post(`${path}/fence`, { fencing_token: '' })).status, 200);
      const ok = await c.appendOk(bucket, key, bodies(1));
      assert.equal(ok.start.seq_num, 2);
    });

    test('fence of a missing stream is 404; a non-string token is 400', async () => {
      const bucket = await c.createBucket();
      assertError(await c.post(`${streamPath(bucket, 'nope')}/fence`, { fencing_token: 'x' }), 404);
      const { path, bucket: b2, key } = await streamWith(0);
      assertError(await c.post(`${path}/fence`, { fencing_token: 42 }), 400);
      assert.equal((await c.get(streamPath(b2, key))).body.fencing_token, '');
    });

    test('a fence does not survive deleting and recreating the stream', async () => {
      const bucket = await c.createBucket();
      const key = uniq('k');
      await c.createStream(bucket, key);
      assert.equal((await c.post(`${streamPath(bucket, key)}/fence`, { fencing_token: 'old' })).status, 200);
      assert.equal((await c.del(streamPath(bucket, key))).status, 204);
      await c.createStream(bucket, key);
      assert.equal((await c.get(streamPath(bucket, key))).body.fencing_token, '');
      await c.appendOk(bucket, key, bodies(1));
    });
  });
}
