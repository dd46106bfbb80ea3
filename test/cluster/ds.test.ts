// Durable Streams (/ds) on a cluster of two real stars sharing PostgreSQL and s3rver: a DS request
// for a stream another star leads hops there once, as the data plane's do, with every protocol header
// carried both ways; so a client may ask either star: creates, producer appends and their duplicates,
// catch-up reads, long-polls and SSE all answer as on one star.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { postgresSkipReason, TEST_POSTGRES_URL } from '../helpers/postgres.ts';
import { startCluster, type TestCluster } from './kit.ts';

const skip = await postgresSkipReason();
const KEYS = ['d0', 'd1', 'd2', 'd3', 'd4', 'd5'];
const REQUEST_MS_MAX = 10_000;
/** The longest an SSE read waits for the records it expects (a bound, not a speed). */
const SSE_WAIT_MS_MAX = 20_000;

describe('cluster: Durable Streams at either star', { skip }, () => {
  let c: TestCluster;
  let sql: pg.Client;
  before(async () => {
    c = await startCluster(2, ['--ds-long-poll-ms', '5000']);
    sql = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await sql.connect();
  });
  after(async () => {
    await sql?.end();
    await c?.close();
  });

  const ds = (star: number, key: string, query = ''): string => `${c.url(star)}/ds/v1/stream/${key}${query}`;
  const send = async (star: number, key: string, method: string, body: string | undefined, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(ds(star, key), { method, body, headers: { 'Content-Type': 'text/plain', ...headers }, signal: AbortSignal.timeout(REQUEST_MS_MAX) });

  test('creates, producer appends, duplicates, reads, long-polls and SSE answer alike at both stars', async () => {
    const holders: string[] = [];
    for (const [i, key] of KEYS.entries()) {
      const at = i % 2;
      const other = 1 - at;
      const put = await send(at, key, 'PUT', 'a');
      assert.equal(put.status, 201, await put.text());
      assert.equal(put.headers.get('location'), ds(at, key), 'Location names the star the client asked');
      const producer = { 'Producer-Id': 'p', 'Producer-Epoch': '0', 'Producer-Seq': '0' };
      const first = await send(other, key, 'POST', 'b', producer);
      assert.equal(first.status, 200, await first.text());
      assert.equal(first.headers.get('producer-seq'), '0');
      const dup = await send(at, key, 'POST', 'b', producer);
      assert.equal(dup.status, 204, 'a retry through the other star is a duplicate');
      assert.equal(dup.headers.get('producer-seq'), '0');

      const read = await fetch(ds(other, key, '?offset=-1'), { signal: AbortSignal.timeout(REQUEST_MS_MAX) });
      assert.equal(read.status, 200);
      assert.equal(await read.text(), 'ab');
      assert.equal(read.headers.get('stream-up-to-date'), 'true');
      const next = read.headers.get('stream-next-offset');
      assert.ok(next, 'Stream-Next-Offset is relayed');

      // A long-poll at one star at the tail; an append through the other wakes it.
      const poll = fetch(ds(at, key, `?offset=${next}&live=long-poll`), { signal: AbortSignal.timeout(REQUEST_MS_MAX) });
      await new Promise((r) => setTimeout(r, 200));
      const more = await send(other, key, 'POST', 'c');
      assert.equal(more.status, 204, await more.text());
      const polled = await poll;
      assert.equal(polled.status, 200);
      assert.equal(await polled.text(), 'c');

      // SSE from the start, through the other star.
      const ctl = new AbortController();
      const timer = setTimeout(() => ctl.abort(), SSE_WAIT_MS_MAX);
      const sse = await fetch(ds(other, key, '?offset=-1&live=sse'), { signal: ctl.signal });
      assert.equal(sse.status, 200);
      assert.match(sse.headers.get('content-type') ?? '', /^text\/event-stream/);
      let text = '';
      /** The text of the data events so far (a catch-up joins records into one event). */
      const data = (): string => [...text.matchAll(/event: data\ndata:(.*)\n/g)].map((m) => m[1]).join('');
      const reader = sse.body!.getReader();
      while (data().length < 3) {
        const { value, done } = await reader.read();
        if (done) break;
        text += Buffer.from(value).toString();
      }
      ctl.abort();
      clearTimeout(timer);
      assert.equal(data(), 'abc', text);

      const h = await sql.query<{ holder: string }>(`SELECT holder FROM ${c.schema}.leases WHERE bucket = 'ds' AND key = $1`, [Buffer.from(key)]);
      holders.push(h.rows[0]?.holder ?? '');
    }
    // Each stream went to the star its address hashes to, whichever was asked: some were asked at
    // the star that does not lead them, so requests hopped.
    assert.ok(KEYS.some((_, i) => holders[i] !== `star-${i % 2}` && holders[i] !== ''), `leaders ${holders.join(', ')}`);
  });
});
