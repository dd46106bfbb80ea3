// Health-checked upstreams: the Gateway probes each star's bridge (GET /healthz) and tries a star that
// failed its probe last, until a probe passes again. Checked on the probe itself (a hung, an erring
// and a healthy server), on the upstream list's marks, and end to end with two real stars: one
// stopped (SIGSTOP: its kernel still accepts connections, so only the probe can tell) is skipped for
// new requests and used again once it runs; one killed and restarted on its port comes back too.
// Every wait is on the Gateway's own log line of the change, bounded; nothing assumes a timing.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GATEWAY_UPSTREAM_DOWN_MS } from '../../src/config/limits.ts';
import { probeOnce } from '../../src/gateway/health.ts';
import { parseUpstream, Upstreams } from '../../src/gateway/upstreams.ts';
import { removeDir, startServer, waitForOutput, type RunningServer } from '../helpers/server.ts';
import { startGatewayChild, type Gateway } from './child.ts';

/** Each request through the Gateway gives up after this long: one sent to a stopped star would hang. */
const REQUEST_MS_MAX = 10_000;
/** Requests sent while a star is marked: enough that round robin would have reached it several times. */
const REQUESTS = 6;

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: URL }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`) };
}

test('a probe: 200 is healthy; another status, a refused connect and no answer in time are not', async () => {
  const ok = await listen((req, res) => { res.writeHead(req.url === '/healthz' ? 200 : 404).end('{}'); });
  const erring = await listen((_req, res) => { res.writeHead(503).end(); });
  const hung = await listen(() => { /* never answers */ });
  try {
    assert.deepEqual(await probeOnce(ok.url, 5000).result, { healthy: true });
    assert.deepEqual(await probeOnce(erring.url, 5000).result, { healthy: false, why: '/healthz answered 503' });
    assert.deepEqual(await probeOnce(hung.url, 100).result, { healthy: false, why: 'no answer in 100 ms' });
    const closed = ok.url;
    ok.server.closeAllConnections();
    await new Promise<void>((r) => ok.server.close(() => r()));
    assert.deepEqual(await probeOnce(closed, 5000).result, { healthy: false, why: 'ECONNREFUSED' });
    const cancelled = probeOnce(hung.url, 60_000);
    cancelled.cancel();
    assert.equal((await cancelled.result).healthy, false, 'a cancelled probe ends at once');
  } finally {
    for (const s of [erring.server, hung.server]) {
      s.closeAllConnections();
      s.close();
    }
  }
});

test('a failed probe puts a star last until a probe passes; a pass lifts an older refused-connect mark, not a newer one', () => {
  let now = 1000;
  const [a, b] = ['a:1', 'b:2'].map(parseUpstream);
  const ups = new Upstreams([a, b], () => now);
  const lastOf = (): string => ups.order('bucket/key').at(-1)!.origin;
  const firstOf = (): string => ups.order('bucket/key')[0].origin;
  const home = firstOf();
  const other = home === a.origin ? b : a;
  const homeUrl = home === a.origin ? a : b;
  assert.equal(ups.probed(homeUrl, false, now), true, 'a change of verdict is reported');
  assert.equal(ups.probed(homeUrl, false, now), false, 'the same verdict again is not');
  assert.equal(lastOf(), home);
  now += 10 * GATEWAY_UPSTREAM_DOWN_MS;
  assert.equal(lastOf(), home, 'held past any interval: only a passing probe lifts it');
  assert.deepEqual(new Set([0, 1].map(() => ups.order()[0].origin)), new Set([other.origin]), 'round robin skips it too');
  assert.equal(ups.probed(homeUrl, true, now), true);
  assert.equal(firstOf(), home, 'back once a probe passes');

  const sent = now;
  now += 1;
  ups.markDown(homeUrl);
  ups.probed(homeUrl, true, sent);
  assert.equal(lastOf(), home, 'a probe sent before a refused connect does not lift its mark');
  now += 1;
  ups.probed(homeUrl, true, now);
  assert.equal(firstOf(), home, 'a probe sent after it does');
});

/** Which star answered a bucket listing: each star holds one bucket of its own. */
async function whichStar(gw: Gateway): Promise<string> {
  const r = await fetch(`${gw.url}/v1/buckets`, { signal: AbortSignal.timeout(REQUEST_MS_MAX) });
  assert.equal(r.status, 200);
  const names = ((await r.json()) as { buckets: { name: string }[] }).buckets.map((b) => b.name);
  assert.equal(names.length, 1, `one bucket per star: ${names.join(',')}`);
  return names[0];
}

async function starsSeen(gw: Gateway, n: number): Promise<Set<string>> {
  const seen = new Set<string>();
  for (let i = 0; i < n; i++) seen.add(await whichStar(gw));
  return seen;
}

describe('gateway health probes in front of two stars', () => {
  const stars: RunningServer[] = [];
  let gw: Gateway;
  const upstream = (i: number): string => `http://127.0.0.1:${stars[i].port}`;
  /** Probe-verdict lines so far of star i, and a wait for the next one. */
  const verdicts = (i: number): number => gw.output().split(`upstream ${upstream(i)} `).length - 1;
  const nextVerdict = async (i: number, before: number, re: RegExp): Promise<void> => {
    await waitForOutput({ output: () => gw.output().split(`upstream ${upstream(i)} `).slice(before + 1).join('\n') }, re);
  };

  before(async () => {
    stars.push(...await Promise.all([startServer({ engine: 'node' }), startServer({ engine: 'node' })]));
    for (const [i, s] of stars.entries()) {
      const r = await fetch(`${s.baseUrl}/v1/buckets/on-star-${i}`, { method: 'POST', body: '{}' });
      assert.equal(r.status, 201);
    }
    gw = await startGatewayChild(['--upstream', `${upstream(0)},${upstream(1)}`]);
  });
  after(async () => {
    // A stopped star must run again to stop.
    for (const s of stars) s.proc.kill('SIGCONT');
    await gw?.stop();
    for (const s of stars) {
      await s.stop();
      removeDir(s.dataDir);
    }
  });

  test('both stars serve while healthy', async () => {
    assert.deepEqual(await starsSeen(gw, REQUESTS), new Set(['on-star-0', 'on-star-1']));
  });

  test('a stopped star is skipped once its probe fails, and used again once it answers', async () => {
    const seen = verdicts(0);
    stars[0].proc.kill('SIGSTOP');
    await nextVerdict(0, seen, /failed its health probe \(no answer in \d+ ms\)/);
    // Sent to the stopped star, a request would wait out its head timeout: each one returning at all,
    // and from star 1, is the skip.
    assert.deepEqual(await starsSeen(gw, REQUESTS), new Set(['on-star-1']));
    stars[0].proc.kill('SIGCONT');
    await nextVerdict(0, seen + 1, /answers its health probe again/);
    assert.deepEqual(await starsSeen(gw, REQUESTS), new Set(['on-star-0', 'on-star-1']));
  });

  test('a killed star is marked down by its probe and comes back when restarted on its port', async () => {
    const seen = verdicts(1);
    const { port, dataDir } = stars[1];
    await stars[1].kill();
    await nextVerdict(1, seen, /failed its health probe \(ECONNREFUSED\)/);
    assert.deepEqual(await starsSeen(gw, REQUESTS), new Set(['on-star-0']));
    stars[1] = await startServer({ engine: 'node', dataDir, args: ['--listen', `127.0.0.1:${port}`] });
    await nextVerdict(1, seen + 1, /answers its health probe again/);
    assert.deepEqual(await starsSeen(gw, REQUESTS), new Set(['on-star-0', 'on-star-1']));
  });
});
