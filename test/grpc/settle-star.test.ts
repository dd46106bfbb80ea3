// SettleStar on a star started as the binary starts it: the current WAL file is sealed and settled
// before the call answers, so a ReadPlan right after it vends segments covering every record, and a
// Read still returns them (now from the object store). With --max-read-records the gRPC Read clamps
// to the star's flag, as HTTP does.
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { bytes, call } from './client.ts';
import { startGrpcChild, type GrpcChild } from './child.ts';
import { loadConfig } from '../../src/config/config.ts';
import { AUTH_FLAGS, startStar } from '../../src/server.ts';
import { removeDir, tempDir } from '../helpers/server.ts';

describe('SettleStar settles now', () => {
  let c: GrpcChild;
  before(async () => {
    // A long settle-after and a large WAL file: nothing settles unless SettleStar asks.
    c = await startGrpcChild({ args: ['--wal-settle-after-ms', '3600000', '--max-read-records', '5'] });
    await call(c.data.CreateBucket.bind(c.data), { bucket: 'settle', config: { create_stream_on_append: true } });
  });
  after(async () => { await c?.stop(); });

  it('seals and settles the WAL before answering; the plan then covers every record', async () => {
    const key = bytes('k');
    await call(c.data.Append.bind(c.data), { bucket: 'settle', key, records: Array.from({ length: 7 }, (_, i) => ({ body: bytes(`r${i}`) })) });
    const before = await call(c.data.ReadPlan.bind(c.data), { bucket: 'settle', key, seq_num: 0 });
    assert.deepEqual([before.entries.length, before.vended_until], [0, 0], 'nothing settled yet');
    await call(c.data.SettleStar.bind(c.data), {});
    const plan = await call(c.data.ReadPlan.bind(c.data), { bucket: 'settle', key, seq_num: 0 });
    assert.equal(plan.entries.length, 1);
    assert.deepEqual([plan.entries[0].first_seq_num, plan.entries[0].end_seq_num, plan.vended_until], [0, 7, 7]);
    await call(c.data.SettleStar.bind(c.data), {}); // nothing new: answers at once
  });

  it('clamps a Read to --max-read-records, for limit 0 and above the flag', async () => {
    const key = bytes('k');
    for (const limit of [0, 100]) {
      const page = await call(c.data.Read.bind(c.data), { bucket: 'settle', key, seq_num: 0, limit });
      assert.deepEqual(page.records.map((r) => r.body.toString()), ['r0', 'r1', 'r2', 'r3', 'r4'], `limit ${limit}`);
    }
  });
});

describe('SettleStar right behind an append that sealed the file itself', () => {
  it('waits for that file too, although it is not yet queued to settle when SettleStar starts', async () => {
    // In process, so SettleStar starts before the sealing append's ROTATE is durable: the window in
    // which the file is sealed but not yet queued. Every append fills the tiny WAL file.
    const dataDir = tempDir('svcd-settle-race-');
    const running = await startStar(loadConfig(
      ['--listen', '', '--data-dir', dataDir, '--wal-file-bytes-max', '100', '--wal-settle-after-ms', '3600000'], {}, AUTH_FLAGS,
    ));
    try {
      const star = running.star;
      await star.createBucket('b', {});
      await star.createStream('b', 'k', {});
      for (let round = 1; round <= 3; round++) {
        const ack = star.append('b', 'k', { records: [{ body: Buffer.alloc(200, 97), headers: [] }] });
        await star.settle();
        await ack;
        const plan = await star.readPlan('b', 'k', { kind: 'seq_num', value: 0 }, 256);
        assert.equal(plan.vended_until, round, `round ${round}: the record the append sealed is settled`);
      }
    } finally {
      await running.stop();
      removeDir(dataDir);
    }
  });
});
