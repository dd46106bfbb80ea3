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
import { GATEWAY_UPSTREAM_DOWN_MS, GATEWAY_UPSTREAM_WEDGED_PROBES } from '../../src/config/limits.ts';
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
    assert.deepEqual(await probeOnce(erring.url, 5000).result, { healthy: false, why: '/healthz answered 503', answered: true });
    assert.deepEqual(await probeOnce(hung.url, 100).result, { healthy: false, why: 'no answer in 100 ms', answered: false });
    const closed = ok.url;
    ok.server.closeAllConnections();
    await new Promise<void>((r) => ok.server.close(() => r()));
    assert.deepEqual(await probeOnce(closed, 5000).result, { healthy: false, why: 'ECONNREFUSED', answered: false });
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
  const firstFailedAt = now;
  assert.equal(ups.probed(homeUrl, false, now), true, 'a change of verdict is reported');
  assert.equal(ups.wedgedSince(homeUrl), undefined, 'one failed probe is not taken for a wedged star');
  now += 1;
  assert.equal(ups.probed(homeUrl, false, now), false, 'the same verdict again is not');
  assert.equal(ups.wedgedSince(homeUrl), firstFailedAt, `${GATEWAY_UPSTREAM_WEDGED_PROBES} in a row are, since the first was sent`);
  // Each further failure moves it on: what was sent after the first failed probe (a 421 followed to
  // the stopped star) has gone unanswered through the latest ones, and is given up too.
  const laterFailedAt = now;
  now += 1;
  ups.probed(homeUrl, false, now);
  assert.equal(ups.wedgedSince(homeUrl), GATEWAY_UPSTREAM_WEDGED_PROBES === 2 ? laterFailedAt : firstFailedAt, 'since the first of the latest ones');
  assert.equal(lastOf(), home);
  now += 10 * GATEWAY_UPSTREAM_DOWN_MS;
  assert.equal(lastOf(), home, 'held past any interval: only a passing probe lifts it');
  assert.deepEqual(new Set([0, 1].map(() => ups.order()[0].origin)), new Set([other.origin]), 'round robin skips it too');
  assert.equal(ups.probed(homeUrl, true, now), true);
  assert.equal(firstOf(), home, 'back once a probe passes');
  assert.equal(ups.wedgedSince(homeUrl), undefined, 'and no longer wedged');

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

  test('a stopped star: what waits on it is given up after two failed probes (GET on to the next star, POST 503), and its silent event stream ends', { timeout: 90_000 }, async () => {
    // A stream of star 0's that the Gateway sends to star 0 first (each star is a cluster of its own here).
    const ups = new Upstreams([parseUpstream(upstream(0)), parseUpstream(upstream(1))]);
    const key = Array.from({ length: 64 }, (_, i) => `k${i}`).find((k) => ups.order(`on-star-0/${k}`)[0].origin === upstream(0))!;
    assert.equal((await fetch(`${upstream(0)}/v1/streams/on-star-0/${key}`, { method: 'POST', body: '{}' })).status, 201);
    const ac = new AbortController();
    const sub = await fetch(`${gw.url}/v1/streams/on-star-0/${key}/records/subscribe?seq_num=0`, { signal: ac.signal });
    assert.equal(sub.status, 200);
    let streamed = '';
    let ended = false;
    const reading = (async () => {
      const reader = sub.body!.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) { ended = true; return; }
        streamed += Buffer.from(value).toString();
      }
    })().catch(() => {});
    // The star's opening comment is through: whatever comes after the stop comes from the Gateway.
    while (!streamed.includes(': open')) await new Promise((r) => setTimeout(r, 20));

    const seen = verdicts(0);
    stars[0].proc.kill('SIGSTOP');
    const stoppedAt = streamed.length;
    try {
      // Sent while star 0 still passes for healthy: round robin gives it one of the two listings, and
      // the append's stream starts there. Each waits on a star that will not answer; the bound is
      // REQUEST_MS_MAX, far below the Gateway's 30 s head timeout.
      const listings = [0, 1].map(() => whichStar(gw));
      const append = fetch(`${gw.url}/v1/streams/on-star-0/${key}/records`, {
        method: 'POST', body: JSON.stringify({ records: [{ body: 'x' }] }), signal: AbortSignal.timeout(REQUEST_MS_MAX),
      });
      assert.deepEqual(new Set(await Promise.all(listings)), new Set(['on-star-1']), 'the listing sent to the stopped star was answered by the other');
      const refused = await append;
      assert.equal(refused.status, 503, await refused.clone().text());
      assert.equal(refused.headers.get('retry-after'), '1');
      assert.match(((await refused.json()) as { error: string }).error, /stopped answering/);
      await nextVerdict(0, seen, /failed its health probe/);
      // Once the star is taken for wedged, its silent event stream ends (a caller watching no
      // heartbeat would wait on it as long as the star stays stopped), and cleanly: the caller
      // resumes with its cursor. The Gateway adds nothing to it: no heartbeat the star never sent.
      await reading;
      assert.equal(ended, true, 'the stream of a stopped star ends');
      assert.equal(streamed.slice(stoppedAt), '', 'with nothing added after the stop');
    } finally {
      ac.abort();
      await reading;
      stars[0].proc.kill('SIGCONT');
    }
    await nextVerdict(0, seen + 1, /answers its health probe again/);
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
    // A probe in flight when the star dies sees its connection reset; any later one is refused.
    await nextVerdict(1, seen, /failed its health probe \((ECONNREFUSED|ECONNRESET)\)/);
    assert.deepEqual(await starsSeen(gw, REQUESTS), new Set(['on-star-0']));
    stars[1] = await startServer({ engine: 'node', dataDir, args: ['--listen', `127.0.0.1:${port}`] });
    await nextVerdict(1, seen + 1, /answers its health probe again/);
    assert.deepEqual(await starsSeen(gw, REQUESTS), new Set(['on-star-0', 'on-star-1']));
  });
});

describe('a 421 followed to a star already taken for wedged', () => {
  let star: RunningServer;
  let router: { server: Server; url: URL };
  let gw: Gateway;
  /** A followed request that waits on a stopped star must be given up a few probes after it was
   *  sent, well before the Gateway's 30 s head timeout; a bound on a hang, not a timing. */
  const FOLLOWED_MS_MAX = 20_000;

  before(async () => {
    star = await startServer({ engine: 'node' });
    // A star of the cluster that leads nothing: every data request is named to the real star's bridge.
    router = await listen((req, res) => {
      if (req.url === '/healthz') res.writeHead(200).end('{}');
      else res.writeHead(421, { 'svcd-leader': `127.0.0.1:${star.port}`, 'content-type': 'application/json' }).end('{"error":"not the leader"}');
    });
    gw = await startGatewayChild(['--upstream', `http://127.0.0.1:${star.port},${router.url.origin}`]);
  });
  after(async () => {
    star?.proc.kill('SIGCONT');
    await gw?.stop();
    router?.server.closeAllConnections();
    router?.server.close();
    await star?.stop();
    if (star) removeDir(star.dataDir);
  });

  test('is given up a few probes after it was sent, not left to the head timeout', { timeout: 90_000 }, async () => {
    const starUrl = `http://127.0.0.1:${star.port}`;
    const ups = new Upstreams([parseUpstream(starUrl), router.url]);
    const key = Array.from({ length: 64 }, (_, i) => `k${i}`).find((k) => ups.order(`b/${k}`)[0].origin === router.url.origin)!;
    star.proc.kill('SIGSTOP');
    // Its first failed probe was sent before this request; only later ones were sent after it.
    await waitForOutput({ output: () => gw.output() }, new RegExp(`upstream ${starUrl} failed its health probe`));
    const r = await fetch(`${gw.url}/v1/streams/b/${key}/records/tail`, { signal: AbortSignal.timeout(FOLLOWED_MS_MAX) });
    // Given up, it went round once more and was named the same stopped star: retry later.
    assert.equal(r.status, 503, await r.clone().text());
    assert.equal(r.headers.get('retry-after'), '1');
  });
});
