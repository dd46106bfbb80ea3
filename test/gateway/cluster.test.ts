// The Gateway as a real child process in front of a real three-star cluster (one PostgreSQL schema,
// one s3rver bucket): it takes every star's bridge as an upstream and follows each stream's leader
// itself. Appends through it to streams led by each of the stars land at dense positions without
// moving any lease; an event stream through it carries records appended through another star; a star
// SIGKILLed under it (not the stream's leader) leaves it serving; no caller ever sees a 421.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'node:http';
import pg from 'pg';
import { postgresSkipReason, TEST_POSTGRES_URL } from '../helpers/postgres.ts';
import { call, ok } from '../crash/fault-kit.ts';
import { startCluster, type TestCluster } from '../cluster/kit.ts';
import { waitForOutput } from '../helpers/server.ts';
import { startGatewayChild, type Gateway } from './child.ts';
import { parseUpstream, Upstreams } from '../../src/gateway/upstreams.ts';

const skip = await postgresSkipReason();

/** How long a subscriber waits for the records it expects. */
const SSE_WAIT_MS = 20_000;
/** A read through the gateway of a stream whose leader is stopped: two health probes (about 5 s)
 *  and a second round; a bound, not an expectation. */
const GATEWAY_READ_WAIT_MS = 30_000;
/** Appends per stream through the Gateway in each check. */
const APPENDS_PER_STREAM = 8;

interface Ack { start: { seq_num: number }; end: { seq_num: number } }
interface Lease { holder: string; epoch: string }

describe('gateway in front of a three-star cluster', { skip }, () => {
  let c: TestCluster;
  let gw: Gateway;
  let sql: pg.Client;
  /** Every status the Gateway answered, so the tests can say none was a 421. */
  const statuses: number[] = [];
  const lease = async (key: string): Promise<Lease> => {
    const r = await sql.query<Lease>(`SELECT holder, epoch::text AS epoch FROM ${c.schema}.leases WHERE bucket = 'gc' AND key = $1`, [Buffer.from(key)]);
    assert.equal(r.rows.length, 1, `one lease for ${key}`);
    return r.rows[0];
  };
  /** 421s the stars answered (to the gateway: nobody else sends svcd-follow-leader). */
  const misdirected = async (): Promise<number> => {
    let n = 0;
    for (let i = 0; i < 3; i++) {
      const ops = (await waitForOutput(c.stars[i], /svcd ops on (http:\/\/127\.0\.0\.1:\d+)/))[1];
      const text = await (await fetch(`${ops}/metrics`)).text();
      for (const m of text.matchAll(/svcd_requests_total\{[^}]*status="421"\} (\d+)/g)) n += Number(m[1]);
    }
    return n;
  };
  const viaGateway = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const a = await call(gw.url, method, path, body);
    statuses.push(a.status);
    assert.ok(a.status < 300, `${method} ${path} through the gateway: ${a.status} ${a.text}`);
    return a.body as unknown;
  };
  const appendThrough = async (key: string, n: number, tag: string): Promise<number[]> => {
    const starts: number[] = [];
    for (let i = 0; i < n; i++) {
      const ack = await viaGateway('POST', `/v1/streams/gc/${key}/records`, { records: [{ body: `${tag}-${i}` }] }) as Ack;
      starts.push(ack.start.seq_num);
    }
    return starts;
  };

  const keys = ['', '', ''];
  before(async () => {
    c = await startCluster(3, ['--metrics-listen', '127.0.0.1:0']);
    sql = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await sql.connect();
    const bridge = (i: number): string => `127.0.0.1:${c.stars[i].port}`;
    // Both spellings of several upstreams: the flag repeated, and a comma list.
    gw = await startGatewayChild(['--upstream', bridge(0), '--upstream', `${bridge(1)},${bridge(2)}`]);
    await ok(c.url(0), 'POST', '/v1/buckets/gc', {});
    // Leases go to the star a stream's address hashes to: make streams until each star leads one,
    // and name them keys[i] (led by star i).
    for (let n = 0; keys.some((k) => k === '') && n < 30; n++) {
      await ok(c.url(0), 'POST', `/v1/streams/gc/k${n}`, {});
      await ok(c.url(0), 'POST', `/v1/streams/gc/k${n}/records`, { records: [{ body: 'seed' }] });
      const i = Number((await lease(`k${n}`)).holder.replace('star-', ''));
      if (keys[i] === '') keys[i] = `k${n}`;
    }
    assert.ok(keys.every((k) => k !== ''), `a stream led by each star: ${keys.join(',')}`);
  });
  after(async () => {
    await gw?.stop();
    await sql?.end();
    await c?.close();
  });

  test('appends through the gateway to streams led by each star land at dense positions, and no lease moves', async () => {
    const leases = async (): Promise<Lease[]> => [await lease(keys[0]), await lease(keys[1]), await lease(keys[2])];
    const before = await leases();
    // The gateway starts a stream at one star by hash, so at least two of the three streams are led
    // by a star it did not pick first: those appends follow a 421 to the leader.
    const starts = await Promise.all([0, 1, 2].map((i) => appendThrough(keys[i], APPENDS_PER_STREAM, 'gw')));
    for (const s of starts) assert.deepEqual(s, Array.from({ length: APPENDS_PER_STREAM }, (_, j) => j + 1), 'dense, after the seed');
    assert.deepEqual(await leases(), before, 'each leader kept its lease and epoch');
    assert.ok(await misdirected() >= APPENDS_PER_STREAM, 'the stars told the gateway where the leaders are, and it followed');
    for (let i = 0; i < 3; i++) {
      // Page by page: a page may end at the settled frontier, before the tail (spec: Read query).
      const bodies: string[] = [];
      for (let pages = 0; bodies.length < APPENDS_PER_STREAM + 1 && pages < APPENDS_PER_STREAM + 1; pages++) {
        const page = await ok(c.url((i + 1) % 3), 'GET', `/v1/streams/gc/${keys[i]}/records?seq_num=${bodies.length}`) as { records: { body: string }[] };
        bodies.push(...page.records.map((r) => r.body));
      }
      assert.deepEqual(bodies, ['seed', ...Array.from({ length: APPENDS_PER_STREAM }, (_, j) => `gw-${j}`)]);
    }
    // Reads by any route a stream names, and routes that name none, all answer through it.
    for (let i = 0; i < 3; i++) assert.equal((await viaGateway('GET', `/v1/streams/gc/${keys[i]}/records/tail`) as { seq_num: number }).seq_num, APPENDS_PER_STREAM + 1);
    for (let i = 0; i < 3; i++) await viaGateway('GET', '/v1/streams/gc');
    assert.ok(!statuses.includes(421));
  });

  test('a subscription through the gateway streams records appended through another star', async () => {
    for (let leader = 0; leader < 3; leader++) {
      const key = keys[leader];
      const from = (await ok(c.url(leader), 'GET', `/v1/streams/gc/${key}/records/tail`) as { seq_num: number }).seq_num;
      const other = (leader + 1) % 3;
      const bodies = [`live-${leader}-a`, `live-${leader}-b`];
      const text = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => { req.destroy(); reject(new Error(`no live records for ${key} within ${SSE_WAIT_MS} ms`)); }, SSE_WAIT_MS);
        const req = request(`${gw.url}/v1/streams/gc/${key}/records/subscribe?seq_num=${from}`, (res) => {
          statuses.push(res.statusCode ?? 0);
          if (res.statusCode !== 200 || !/text\/event-stream/.test(res.headers['content-type'] ?? '')) {
            clearTimeout(timer);
            reject(new Error(`subscribe answered ${res.statusCode} ${res.headers['content-type']}`));
            return;
          }
          let got = '';
          res.on('data', (chunk: Buffer) => {
            got += chunk.toString();
            if (bodies.every((b) => got.includes(`"${b}"`))) { clearTimeout(timer); resolve(got); req.destroy(); }
          });
          // Appended once the stream is open, through a star that does not lead (it hops to the leader).
          void (async () => {
            for (const b of bodies) await ok(c.url(other), 'POST', `/v1/streams/gc/${key}/records`, { records: [{ body: b }] });
          })().catch(reject);
        });
        req.on('error', (err: NodeJS.ErrnoException) => { if (err.code !== 'ECONNRESET') reject(err); });
        req.end();
      });
      assert.match(text, new RegExp(`"seq_num":${from},[^}]*"body":"${bodies[0]}"`), `${key}: live records at their positions`);
    }
    assert.ok(!statuses.includes(421));
  });

  test('a read of a stream whose leader stopped (SIGSTOP) and which the gateway starts at another star is answered, not 503', { timeout: 90_000 }, async () => {
    // The gateway starts a stream at the star its address hashes to; that star names the leader
    // (421) and the gateway follows. With the leader stopped, the followed request is given up after
    // two failed health probes; by then the leader's lease has lapsed, so the read goes round again.
    const upstreams = new Upstreams([0, 1, 2].map((i) => parseUpstream(`127.0.0.1:${c.stars[i].port}`)));
    const firstStar = (key: string): number => [0, 1, 2].find((i) => upstreams.order(`gc/${key}`)[0].port === String(c.stars[i].port))!;
    const leaderIdx = [2, 1, 0].find((i) => firstStar(keys[i]) !== i);
    assert.ok(leaderIdx !== undefined, `a stream the gateway starts away from its leader: ${keys.map((k) => `${k}→${firstStar(k)}`).join(',')}`);
    const key = keys[leaderIdx];
    const tail = (await ok(c.url(leaderIdx), 'GET', `/v1/streams/gc/${key}/records/tail`) as { seq_num: number }).seq_num;
    c.stars[leaderIdx].proc.kill('SIGSTOP');
    try {
      const r = await fetch(`${gw.url}/v1/streams/gc/${key}/records/tail`, { signal: AbortSignal.timeout(GATEWAY_READ_WAIT_MS) });
      const text = await r.text();
      assert.equal(r.status, 200, `the read through the gateway: ${r.status} ${text}`);
      assert.equal((JSON.parse(text) as { seq_num: number }).seq_num, tail);
    } finally {
      c.stars[leaderIdx].proc.kill('SIGCONT');
    }
  });

  test('a star SIGKILLed under the gateway (not the leader) leaves it serving', async () => {
    const victim = 2;
    await c.stars[victim].kill();
    const tails = await Promise.all([0, 1].map(async (i) => (await viaGateway('GET', `/v1/streams/gc/${keys[i]}/records/tail`) as { seq_num: number }).seq_num));
    // Every request: stream requests that hash to the dead star and round-robin ones that land on it
    // are all skipped to a live star, with no error to the caller.
    for (let round = 0; round < 3; round++) {
      for (const i of [0, 1]) {
        const starts = await appendThrough(keys[i], 3, `after-kill-${round}`);
        assert.deepEqual(starts, [0, 1, 2].map((j) => tails[i] + round * 3 + j), `${keys[i]} dense after the kill`);
      }
      await viaGateway('GET', '/v1/streams/gc');
      await viaGateway('GET', '/v1/buckets');
    }
    assert.ok(!statuses.includes(421));
    assert.ok(statuses.every((s) => s < 300), `every answer a success: ${statuses.join(',')}`);
  });
});
