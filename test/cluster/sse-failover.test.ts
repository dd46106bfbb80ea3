// SSE in a cluster: a subscriber connected through a star that does not lead the stream follows the
// records appended through any star; when the leader is killed, its stream simply ends, and a
// reconnect with Last-Event-ID to another star continues with no gap and no repeat.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { postgresSkipReason, TEST_POSTGRES_URL } from '../helpers/postgres.ts';
import { call, ok, sleep } from '../crash/fault-kit.ts';
import { startCluster, type TestCluster } from './kit.ts';

const skip = await postgresSkipReason();

/** How long the test waits for records it expects before it gives up. */
const DELIVERY_WAIT_MS_MAX = 30_000;

/** One SSE connection: the records it delivered, the last event id, and whether it ended. */
interface Sub { bodies: string[]; lastId: string; ended: Promise<void>; close(): void }

function subscribe(url: string, path: string, lastId?: string): Sub {
  const ctl = new AbortController();
  const sub: Sub = { bodies: [], lastId: lastId ?? '', ended: Promise.resolve(), close: () => ctl.abort() };
  sub.ended = (async () => {
    try {
      const res = await fetch(url + path, { headers: lastId ? { 'last-event-id': lastId } : {}, signal: ctl.signal });
      assert.equal(res.status, 200);
      const decoder = new TextDecoder();
      let buf = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const frame = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const id = /^id: (.*)$/m.exec(frame)?.[1];
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (id !== undefined && data !== undefined && !/^event:/m.test(frame)) {
            const batch = JSON.parse(data) as { records: { body: string }[] };
            sub.bodies.push(...batch.records.map((r) => r.body));
            sub.lastId = id;
          }
        }
      }
    } catch { /* aborted, or the star went away: the stream simply ends */ }
  })();
  return sub;
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    assert.ok(Date.now() - t0 < DELIVERY_WAIT_MS_MAX, `timed out waiting: ${what}`);
    await sleep(50);
  }
}

describe('SSE across a leader kill', { skip, timeout: 120_000 }, () => {
  let c: TestCluster;
  let sql: pg.Client;
  before(async () => {
    c = await startCluster(3);
    sql = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await sql.connect();
  });
  after(async () => {
    await sql?.end();
    await c?.close();
  });

  test('a subscriber through another star reconnects with Last-Event-ID to a third star: no gap, no repeat', async () => {
    await ok(c.url(0), 'POST', '/v1/buckets/se', {});
    await ok(c.url(0), 'POST', '/v1/streams/se/live', {});
    await ok(c.url(0), 'POST', '/v1/streams/se/live/records', { records: [{ body: 'b0' }] });
    const lease = await sql.query<{ holder: string }>(`SELECT holder FROM ${c.schema}.leases WHERE bucket = 'se' AND key = $1`, [Buffer.from('live')]);
    const leader = Number(lease.rows[0].holder.replace('star-', ''));
    const via = (leader + 1) % 3;
    const third = (leader + 2) % 3;
    const path = '/v1/streams/se/live/records/subscribe?seq_num=0';
    const first = subscribe(c.url(via), path);
    const sent = ['b0'];
    for (let i = 1; i <= 5; i++) {
      await ok(c.url(third), 'POST', '/v1/streams/se/live/records', { records: [{ body: `b${i}` }] });
      sent.push(`b${i}`);
    }
    await until(() => first.bodies.length >= sent.length, 'live records through a star that does not lead');
    assert.deepEqual(first.bodies, sent);

    await c.stars[leader].kill();
    await first.ended; // the hop's stream ends with its leader
    // Appends resume once the lease moves; the subscriber reconnects to the third star with its cursor.
    for (let i = 6; i <= 10; i++) {
      let a = await call(c.url(third), 'POST', '/v1/streams/se/live/records', { records: [{ body: `b${i}` }] });
      while (a.status !== 200) { assert.equal(a.status, 503, a.text); await sleep(100); a = await call(c.url(third), 'POST', '/v1/streams/se/live/records', { records: [{ body: `b${i}` }] }); }
      sent.push(`b${i}`);
    }
    const second = subscribe(c.url(third), '/v1/streams/se/live/records/subscribe', first.lastId);
    const seen = first.bodies.length;
    await until(() => seen + second.bodies.length >= sent.length, 'the rest after the reconnect');
    second.close();
    await second.ended;
    assert.deepEqual([...first.bodies, ...second.bodies], sent, 'every record once, in order, across the reconnect');
  });
});
