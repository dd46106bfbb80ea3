// The Gateway's upstream list (upstreams.ts): entries as host:port or URLs, a stream's requests start
// at one star, others go round robin, a star marked down goes last until its interval passes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GATEWAY_UPSTREAM_DOWN_MS } from '../../src/config/limits.ts';
import { leaderUrl, parseUpstream, Upstreams } from '../../src/gateway/upstreams.ts';
import { loadGatewayConfig } from '../../src/gateway/cli.ts';

test('upstream entries: host:port or http(s) URLs; anything else is refused', () => {
  assert.equal(parseUpstream('127.0.0.1:7070').href, 'http://127.0.0.1:7070/');
  assert.equal(parseUpstream('https://star.example:7443').href, 'https://star.example:7443/');
  for (const bad of ['ftp://x', 'http://a:1/path', 'http://u:p@a:1', '']) assert.throws(() => parseUpstream(bad), bad);
  assert.equal(leaderUrl('10.0.0.2:7071', new URL('https://a:1'))?.href, 'https://10.0.0.2:7071/');
  assert.equal(leaderUrl('not an address', new URL('http://a:1')), undefined);
  assert.equal(leaderUrl(undefined, new URL('http://a:1')), undefined);
});

test('the flag repeats and takes comma lists; the variable takes a comma list', () => {
  const cfg = loadGatewayConfig(['--upstream', 'a:1', '--upstream', 'b:2, http://c:3', '--upstream', 'a:1'], {});
  assert.deepEqual(cfg.upstreams.map((u) => u.origin), ['http://a:1', 'http://b:2', 'http://c:3']);
  const env = loadGatewayConfig([], { SVCD_GATEWAY_UPSTREAM: 'x:1,y:2' });
  assert.deepEqual(env.upstreams.map((u) => u.origin), ['http://x:1', 'http://y:2']);
  assert.deepEqual(loadGatewayConfig([], {}).upstreams.map((u) => u.origin), ['http://127.0.0.1:7070']);
  assert.throws(() => loadGatewayConfig(['--upstream', 'ftp://x'], {}), /--upstream/);
});

test('a stream starts at one star; other requests rotate; a star marked down goes last for its interval', () => {
  let now = 1000;
  const ups = new Upstreams(['a:1', 'b:2', 'c:3'].map(parseUpstream), () => now);
  const first = ups.order('bucket/key')[0];
  for (let i = 0; i < 5; i++) assert.equal(ups.order('bucket/key')[0].origin, first.origin, 'stable per stream');
  const firsts = new Set([0, 1, 2].map(() => ups.order()[0].origin));
  assert.equal(firsts.size, 3, 'round robin');
  ups.markDown(first);
  const order = ups.order('bucket/key');
  assert.equal(order.length, 3, 'a star marked down is still tried, last');
  assert.equal(order[2].origin, first.origin);
  now += GATEWAY_UPSTREAM_DOWN_MS + 1;
  assert.equal(ups.order('bucket/key')[0].origin, first.origin, 'back after the interval');
});
