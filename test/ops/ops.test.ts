// The ops listener: /metrics counts what the data bridge served; /healthz and /readyz answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../helpers/server.ts';

test('ops listener serves /metrics, /healthz and /readyz on its own port', async (t) => {
  const srv = await startServer({ args: ['--metrics-listen', '127.0.0.1:0'] });
  t.after(() => srv.stop());
  const deadline = Date.now() + 10_000;
  let m: RegExpExecArray | null = null;
  while (!(m = /svcd ops on http:\/\/127\.0\.0\.1:(\d+)/.exec(srv.output())) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.ok(m, srv.output());
  const ops = `http://127.0.0.1:${m[1]}`;
  assert.notEqual(Number(m[1]), srv.port);
  assert.equal((await fetch(`${srv.baseUrl}/v1/buckets/nope`)).status, 404);
  assert.equal((await fetch(`${srv.baseUrl}/healthz`)).status, 200);
  const metrics = await (await fetch(`${ops}/metrics`)).text();
  assert.match(metrics, /svcd_requests_total\{verb="GetBucket",status="404"\} 1/);
  assert.match(metrics, /svcd_request_seconds_bucket/);
  assert.equal((await fetch(`${ops}/healthz`)).status, 200);
  assert.equal((await fetch(`${ops}/readyz`)).status, 200);
  // The ops surface carries no data-plane routes.
  assert.equal((await fetch(`${ops}/v1/buckets`)).status, 404);
});
