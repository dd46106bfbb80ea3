// An event stream relayed by a star that does not lead the stream (the one-hop proxy, src/api/proxy.ts)
// is cut by the relaying star once its consumer has not drained for --sse-stall-ms, as the leader's
// own pump would cut it. The leader may never see the stall: the relay pauses its side of the hop,
// and a quiet stream's frames sit in the relay's buffers. Here the relay's bound is 1 s and the
// leader's the default 60 s, so the leader's subscription ending soon after the consumer stops
// reading can only be the relay's cut.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { postgresSkipReason, TEST_POSTGRES_URL } from '../helpers/postgres.ts';
import { waitForOutput } from '../helpers/server.ts';
import { until } from '../crash/fault-kit.ts';
import { request, startCluster, type TestCluster } from './kit.ts';

const skip = await postgresSkipReason();

/** The relaying star's stall bound. */
const RELAY_STALL_MS = 1000;
/** One request's longest wait. */
const REQUEST_MS_MAX = 10_000;
/** How long the cut may take to be seen: a liveness bound, far under the leader's own 60 s. */
const CUT_WAIT_MS_MAX = 30_000;
/** Appends made while the consumer is paused: far more than the sockets' buffers on the way hold. */
const PAUSED_APPENDS = 40;
const RECORD_BYTES = 256 * 1024;
const RECORDS_PER_APPEND = 4;

/** The open event streams a star's ops listener counts. */
async function sseOpen(ops: string): Promise<number> {
  const m = /^svcd_sse_open (\d+)$/m.exec(await (await fetch(`${ops}/metrics`)).text());
  assert.ok(m, 'the metric is exposed');
  return Number(m[1]);
}

describe('a relayed event stream whose consumer stops reading', { skip, timeout: 120_000 }, () => {
  let c: TestCluster;
  let sql: pg.Client;
  before(async () => {
    // Star 0 leads (it takes the stream's lease with the first append; the key `s0` hashes to it
    // whether or not it has seen star 1 yet) with the default stall bound; star 1 relays with a short one.
    c = await startCluster(2, (i) => ['--metrics-listen', '127.0.0.1:0', ...(i === 1 ? ['--sse-stall-ms', String(RELAY_STALL_MS)] : [])]);
    sql = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await sql.connect();
  });
  after(async () => {
    await sql?.end();
    await c?.close();
  });

  test('is cut by the relaying star at its stall bound, and the leader\'s subscription ends with it', async () => {
    const ops = async (i: number): Promise<string> => `http://127.0.0.1:${(await waitForOutput(c.stars[i], /svcd ops on http:\/\/127\.0\.0\.1:(\d+)/))[1]}`;
    const leaderOps = await ops(0);
    assert.equal((await request(c.url(0), 'POST', '/v1/buckets/rs', {}, REQUEST_MS_MAX)).status, 201);
    assert.equal((await request(c.url(0), 'POST', '/v1/streams/rs/s0', {}, REQUEST_MS_MAX)).status, 201);
    assert.equal((await request(c.url(0), 'POST', '/v1/streams/rs/s0/records', { records: [{ body: 'first' }] }, REQUEST_MS_MAX)).status, 200);
    const holder = (await sql.query<{ holder: string }>(`SELECT holder FROM ${c.schema}.leases WHERE bucket = 'rs' AND key = $1`, [Buffer.from('s0')])).rows[0]?.holder;
    assert.equal(holder, 'star-0', 'star 0 leads the stream');

    const sock: Socket = connect(c.stars[1].port, '127.0.0.1');
    let received = '';
    let closed = false;
    sock.on('data', (d: Buffer) => { received += d.toString('latin1'); });
    sock.on('close', () => { closed = true; });
    sock.on('error', () => undefined);
    try {
      sock.write('GET /v1/streams/rs/s0/records/subscribe?seq_num=0 HTTP/1.1\r\nHost: x\r\n\r\n');
      await until('the relayed stream\'s first frame', () => received.includes('first'), CUT_WAIT_MS_MAX);
      assert.match(received, /^HTTP\/1\.1 200 /);
      assert.equal(await sseOpen(leaderOps), 1, 'the leader serves the hop\'s subscription');
      sock.pause(); // the consumer stops reading: the relay's socket to it fills
      const body = 'x'.repeat(RECORD_BYTES);
      for (let i = 0; i < PAUSED_APPENDS; i++) {
        const r = await request(c.url(0), 'POST', '/v1/streams/rs/s0/records', { records: Array.from({ length: RECORDS_PER_APPEND }, () => ({ body })) }, REQUEST_MS_MAX);
        assert.equal(r.status, 200);
      }
      // The relay cuts its consumer and drops its hop: the leader's subscription ends, long before
      // the leader's own 60 s bound could end it, and while the consumer still reads nothing.
      await until('the leader\'s subscription to end', async () => (await sseOpen(leaderOps)) === 0, CUT_WAIT_MS_MAX);
      assert.equal(closed, false, 'the consumer has read nothing meanwhile');
      // Read on: what was buffered arrives, then the connection ends.
      sock.resume();
      await until('the consumer\'s connection to end', () => closed, CUT_WAIT_MS_MAX);
    } finally {
      sock.destroy();
    }
  });
});
