// Conformance: timestamping modes, the arrival cap, monotonic timestamps, time-based reads and the tail's time.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, startServer, type RunningServer } from '../helpers/server.ts';
import { Client, streamPath, assertError, stopServer } from './client.ts';

const HOUR = 3_600_000;
/** The server runs on this machine and shares its clock; allow this much slack for clock reads. */
const SLACK_MS = 1000;

for (const engine of ENGINES) {
  describe(`timestamps (${engine})`, () => {
    let srv: RunningServer;
    let c: Client;
    before(async () => { srv = await startServer({ engine }); c = new Client(srv.baseUrl); });
    after(() => stopServer(srv));

    async function stamps(bucket: string, key: string): Promise<number[]> {
      const page = await c.readOk(bucket, key, { seq_num: 0 });
      return page.records.map((r) => r.timestamp_ms);
    }

    test('client-prefer (the default) keeps a client time in the past', async () => {
      const { bucket, key } = await c.freshStream();
      const past = Date.now() - HOUR;
      const ack = await c.appendOk(bucket, key, [{ body: 'a', timestamp_ms: past }]);
      assert.equal(ack.start.timestamp_ms, past, 'the ack start carries the first record time');
      assert.deepEqual(await stamps(bucket, key), [past]);
    });

    test('client-prefer stamps arrival time on a record without one', async () => {
      const { bucket, key } = await c.freshStream({ timestamping_mode: 'client-prefer' });
      const t0 = Date.now();
      await c.appendOk(bucket, key, [{ body: 'a' }]);
      const t1 = Date.now();
      const [ts] = await stamps(bucket, key);
      assert.ok(ts >= t0 - SLACK_MS && ts <= t1 + SLACK_MS, `arrival stamp ${ts} should be within [${t0}, ${t1}]`);
    });

    test('a client time later than arrival is capped at arrival', async () => {
      const { bucket, key } = await c.freshStream({ timestamping_mode: 'client-prefer' });
      const future = Date.now() + 24 * HOUR;
      const t0 = Date.now();
      await c.appendOk(bucket, key, [{ body: 'a', timestamp_ms: future }]);
      const t1 = Date.now();
      const [ts] = await stamps(bucket, key);
      assert.ok(ts < future, 'a future time must be capped');
      assert.ok(ts >= t0 - SLACK_MS && ts <= t1 + SLACK_MS, `capped stamp ${ts} should be the arrival time`);
    });

    test('timestamping_uncapped keeps a client time later than arrival', async () => {
      const { bucket, key } = await c.freshStream({ timestamping_mode: 'client-prefer', timestamping_uncapped: true });
      const future = Date.now() + 24 * HOUR;
      await c.appendOk(bucket, key, [{ body: 'a', timestamp_ms: future }]);
      assert.deepEqual(await stamps(bucket, key), [future]);
      assert.equal((await c.tail(bucket, key)).timestamp_ms, future);
    });

    test('client-require answers 400 for a record without a time and appends nothing', async () => {
      const { bucket, key } = await c.freshStream({ timestamping_mode: 'client-require' });
      assertError(await c.append(bucket, key, [{ body: 'a' }]), 400, 'missing timestamp');
      assertError(await c.append(bucket, key, [{ body: 'a', timestamp_ms: 1000 }, { body: 'b' }]), 400, 'one missing timestamp in a batch');
      assert.equal((await c.tail(bucket, key)).seq_num, 0);
      await c.appendOk(bucket, key, [{ body: 'a', timestamp_ms: 1000 }, { body: 'b', timestamp_ms: 2000 }]);
      assert.deepEqual(await stamps(bucket, key), [1000, 2000]);
    });

    test('client-require still caps a future time unless uncapped', async () => {
      const { bucket, key } = await c.freshStream({ timestamping_mode: 'client-require' });
      const future = Date.now() + 24 * HOUR;
      await c.appendOk(bucket, key, [{ body: 'a', timestamp_ms: future }]);
      const [ts] = await stamps(bucket, key);
      assert.ok(ts < future && ts <= Date.now() + SLACK_MS, `stamp ${ts} must be capped at arrival`);
    });

    test('arrival ignores the client time', async () => {
      const { bucket, key } = await c.freshStream({ timestamping_mode: 'arrival' });
      const t0 = Date.now();
      await c.appendOk(bucket, key, [{ body: 'a', timestamp_ms: 1234 }, { body: 'b', timestamp_ms: t0 + 24 * HOUR }, { body: 'c' }]);
      const t1 = Date.now();
      for (const ts of await stamps(bucket, key)) {
        assert.ok(ts >= t0 - SLACK_MS && ts <= t1 + SLACK_MS, `arrival stamp ${ts} should be within [${t0}, ${t1}]`);
      }
    });

    test('arrival with uncapped still ignores the client time', async () => {
      const { bucket, key } = await c.freshStream({ timestamping_mode: 'arrival', timestamping_uncapped: true });
      const t0 = Date.now();
      await c.appendOk(bucket, key, [{ body: 'a', timestamp_ms: t0 + 24 * HOUR }]);
      const [ts] = await stamps(bucket, key);
      assert.ok(ts <= Date.now() + SLACK_MS && ts >= t0 - SLACK_MS, `stamp ${ts} should be the arrival time`);
    });

    test('timestamps never go backwards within a batch: an earlier one is raised', async () => {
      const { bucket, key } = await c.freshStream();
      await c.appendOk(bucket, key, [
        { body: 'a', timestamp_ms: 5000 }, { body: 'b', timestamp_ms: 3000 }, { body: 'c', timestamp_ms: 7000 },
      ]);
      assert.deepEqual(await stamps(bucket, key), [5000, 5000, 7000]);
    });

    test('timestamps never go backwards across batches', async () => {
      const { bucket, key } = await c.freshStream();
      await c.appendOk(bucket, key, [{ body: 'a', timestamp_ms: 9000 }]);
      const ack = await c.appendOk(bucket, key, [{ body: 'b', timestamp_ms: 1000 }]);
      assert.equal(ack.start.timestamp_ms, 9000, 'the ack reports the raised time');
      assert.deepEqual(await stamps(bucket, key), [9000, 9000]);
    });

    test('a record without a time after a client time in the past gets arrival time', async () => {
      const { bucket, key } = await c.freshStream();
      const t0 = Date.now();
      await c.appendOk(bucket, key, [{ body: 'a', timestamp_ms: 1000 }, { body: 'b' }]);
      const [a, b] = await stamps(bucket, key);
      assert.equal(a, 1000);
      assert.ok(b >= t0 - SLACK_MS, `arrival stamp ${b}`);
    });

    test('stamps within a stream are non-decreasing under mixed input', async () => {
      const { bucket, key } = await c.freshStream();
      const now = Date.now();
      await c.appendOk(bucket, key, [{ body: '1', timestamp_ms: now - 10_000 }, { body: '2' }]);
      await c.appendOk(bucket, key, [{ body: '3', timestamp_ms: now - 20_000 }, { body: '4', timestamp_ms: now + HOUR }]);
      await c.appendOk(bucket, key, [{ body: '5' }, { body: '6', timestamp_ms: 1 }]);
      const ts = await stamps(bucket, key);
      assert.equal(ts.length, 6);
      for (let i = 1; i < ts.length; i++) assert.ok(ts[i] >= ts[i - 1], `timestamps went backwards: ${ts}`);
      assert.ok(ts[5] <= Date.now() + SLACK_MS, 'the capped future time never leaks');
    });

    test("the tail's timestamp_ms is the last record's time, and the ack tail agrees", async () => {
      const { bucket, key } = await c.freshStream();
      assert.deepEqual(await c.tail(bucket, key), { seq_num: 0, timestamp_ms: 0 });
      const ack = await c.appendOk(bucket, key, [{ body: 'a', timestamp_ms: 1000 }, { body: 'b', timestamp_ms: 2500 }]);
      assert.equal(ack.tail.timestamp_ms, 2500);
      assert.deepEqual(await c.tail(bucket, key), { seq_num: 2, timestamp_ms: 2500 });
    });

    test('a read by timestamp_ms resolves once to a sequence number', async () => {
      const { bucket, key } = await c.freshStream();
      await c.appendOk(bucket, key, [
        { body: 'a', timestamp_ms: 100 }, { body: 'b', timestamp_ms: 200 }, { body: 'c', timestamp_ms: 200 }, { body: 'd', timestamp_ms: 300 },
      ]);
      const page = await c.readOk(bucket, key, { timestamp_ms: 200, limit: 2 });
      assert.deepEqual(page.records.map((r) => [r.seq_num, r.body]), [[1, 'b'], [2, 'c']], 'equal stamps: the first at or after');
      const until = await c.readOk(bucket, key, { timestamp_ms: 150, until_ms: 300 });
      assert.deepEqual(until.records.map((r) => r.body), ['b', 'c']);
    });

    test('a negative timestamp_ms start is accepted and reads from the beginning', async () => {
      const { bucket, key } = await c.freshStream();
      await c.appendOk(bucket, key, [{ body: 'a', timestamp_ms: 10 }]);
      const page = await c.readOk(bucket, key, { timestamp_ms: -5 });
      assert.deepEqual(page.records.map((r) => r.body), ['a']);
    });

    test('reconfiguring the mode to arrival takes effect for later appends', async () => {
      const { bucket, key } = await c.freshStream({ timestamping_mode: 'client-prefer' });
      await c.appendOk(bucket, key, [{ body: 'a', timestamp_ms: 1000 }]);
      const res = await c.patch(streamPath(bucket, key), { timestamping_mode: 'arrival' });
      assert.equal(res.status, 200, res.text);
      const t0 = Date.now();
      await c.appendOk(bucket, key, [{ body: 'b', timestamp_ms: 2000 }]);
      const [a, b] = await stamps(bucket, key);
      assert.equal(a, 1000, 'an acknowledged record keeps its time');
      assert.ok(b >= t0 - SLACK_MS, `arrival stamp ${b} ignores the client's 2000`);
    });

    test('a bucket default mode applies to streams created in it', async () => {
      const bucket = await c.createBucket({ default_timestamping_mode: 'client-require' });
      await c.createStream(bucket, 'req');
      assertError(await c.append(bucket, 'req', [{ body: 'a' }]), 400);
      await c.appendOk(bucket, 'req', [{ body: 'a', timestamp_ms: 77 }]);
    });
  });
}
