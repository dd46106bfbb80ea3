// The ops listener: /metrics counts what the data bridge served; /healthz and /readyz answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, waitForOutput } from '../helpers/server.ts';

test('ops listener serves /metrics, /healthz and /readyz on its own port', async (t) => {
  const srv = await startServer({ args: ['--metrics-listen', '127.0.0.1:0'] });
  t.after(() => srv.stop());
  const m = await waitForOutput(srv, /svcd ops on http:\/\/127\.0\.0\.1:(\d+)/);
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

test('the open-streams gauge counts live SSE subscriptions; HEAD answers headers only and opens none', async (t) => {
  const srv = await startServer({ args: ['--metrics-listen', '127.0.0.1:0'] });
  t.after(() => srv.stop());
  const m = await waitForOutput(srv, /svcd ops on http:\/\/127\.0\.0\.1:(\d+)/);
  const gauge = async (): Promise<string> => /svcd_sse_open (\d+)/.exec(await (await fetch(`http://127.0.0.1:${m[1]}/metrics`)).text())?.[1] ?? '';
  const post = (path: string): Promise<Response> => fetch(srv.baseUrl + path, { method: 'POST', body: '{}' });
  assert.equal((await post('/v1/buckets/g')).status, 201);
  assert.equal((await post('/v1/streams/g/s')).status, 201);

  const head = await fetch(`${srv.baseUrl}/v1/buckets`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.match(head.headers.get('content-type') ?? '', /application\/json/);
  assert.equal(await head.text(), '');
  const headSub = await fetch(`${srv.baseUrl}/v1/streams/g/s/records/subscribe?seq_num=0`, { method: 'HEAD' });
  assert.equal(headSub.status, 200);
  assert.match(headSub.headers.get('content-type') ?? '', /text\/event-stream/);
  assert.equal(await gauge(), '0');

  const ac = new AbortController();
  const sub = await fetch(`${srv.baseUrl}/v1/streams/g/s/records/subscribe?seq_num=0`, { signal: ac.signal });
  assert.equal(sub.status, 200);
  await sub.body!.getReader().read(); // the stream is open
  assert.equal(await gauge(), '1');
  ac.abort();
  const until = Date.now() + 10_000;
  while ((await gauge()) !== '0' && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  assert.equal(await gauge(), '0');
});

