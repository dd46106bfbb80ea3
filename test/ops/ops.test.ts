// The ops listener: /metrics counts what the data bridge served; /healthz and /readyz answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { once } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import { startServer, waitForOutput } from '../helpers/server.ts';
import { call, connect as grpcConnect } from '../grpc/client.ts';

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
  // The latency histogram is cumulative and ends in +Inf, with _count equal to the requests.
  assert.match(metrics, /svcd_request_seconds_bucket\{le="\+Inf",verb="GetBucket"\} 1\n/);
  assert.match(metrics, /svcd_request_seconds_count\{verb="GetBucket"\} 1\n/);
  const buckets = [...metrics.matchAll(/svcd_request_seconds_bucket\{le="[^"]+",verb="GetBucket"\} (\d+)/g)].map((x) => Number(x[1]));
  assert.ok(buckets.length > 2 && buckets.every((n, i) => i === 0 || n >= buckets[i - 1]), `cumulative buckets: ${buckets.join(',')}`);
  // The heap trim's series are there from the start (a fresh star's small heap is never trimmed).
  assert.match(metrics, /^svcd_heap_trims 0$/m);
  assert.match(metrics, /^svcd_heap_trim_pause_seconds 0$/m);
  assert.equal((await fetch(`${ops}/healthz`)).status, 200);
  assert.equal((await fetch(`${ops}/readyz`)).status, 200);
  // The ops surface carries no data-plane routes.
  assert.equal((await fetch(`${ops}/v1/buckets`)).status, 404);
  // Its own routes only read: another method is 405 with Allow, as on the dashboard.
  for (const [method, path] of [['POST', '/metrics'], ['DELETE', '/healthz'], ['PUT', '/readyz'], ['POST', '/debug/pprof/heap']]) {
    const r = await fetch(`${ops}${path}`, { method, headers: { 'content-type': 'application/json' }, body: method === 'DELETE' ? undefined : '{}' });
    assert.equal(r.status, 405, `${method} ${path}`);
    assert.equal(r.headers.get('allow'), 'GET, HEAD');
    assert.match(((await r.json()) as { error: string }).error, /GET or HEAD/);
  }
  assert.equal((await fetch(`${ops}/healthz`, { method: 'HEAD' })).status, 200);
});

test('/metrics counts gRPC calls by method and status code, with their latency', async (t) => {
  const srv = await startServer({ args: ['--metrics-listen', '127.0.0.1:0', '--grpc-listen', '127.0.0.1:0'] });
  t.after(() => srv.stop());
  const m = await waitForOutput(srv, /svcd ops on http:\/\/127\.0\.0\.1:(\d+)/);
  const g = await waitForOutput(srv, /svcd grpc listening on 127\.0\.0\.1:(\d+)/);
  const { data, close } = grpcConnect(Number(g[1]));
  t.after(close);
  await assert.rejects(call(data.GetBucket.bind(data), { bucket: 'nope' }), (e: grpc.ServiceError) => e.code === grpc.status.NOT_FOUND);
  await call(data.CreateBucket.bind(data), { bucket: 'here' });
  await call(data.GetBucket.bind(data), { bucket: 'here' });
  const metrics = await (await fetch(`http://127.0.0.1:${m[1]}/metrics`)).text();
  assert.match(metrics, /svcd_grpc_requests_total\{method="GetBucket",code="NOT_FOUND"\} 1\n/);
  assert.match(metrics, /svcd_grpc_requests_total\{method="GetBucket",code="OK"\} 1\n/);
  assert.match(metrics, /svcd_grpc_requests_total\{method="CreateBucket",code="OK"\} 1\n/);
  assert.match(metrics, /svcd_grpc_request_seconds_count\{method="GetBucket"\} 2\n/);
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


for (const engine of ['uws', 'node'] as const) {
  test(`request latency counts from the request's head, upload time included (${engine})`, async (t) => {
    const srv = await startServer({ engine, args: ['--metrics-listen', '127.0.0.1:0'] });
    t.after(() => srv.stop());
    const m = await waitForOutput(srv, /svcd ops on http:\/\/127\.0\.0\.1:(\d+)/);
    assert.equal((await fetch(`${srv.baseUrl}/v1/buckets/lat`, { method: 'POST', body: '{}' })).status, 201);
    assert.equal((await fetch(`${srv.baseUrl}/v1/streams/lat/s`, { method: 'POST', body: '{}' })).status, 201);
    // The head and half the body, then the rest after a pause the server cannot know about.
    const body = '{"records":[{"body":"slow upload"}]}';
    const sock = connect(srv.port, '127.0.0.1');
    await once(sock, 'connect');
    const PAUSE_MS = 300;
    sock.write(`POST /v1/streams/lat/s/records HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`);
    await new Promise((r) => setTimeout(r, PAUSE_MS));
    sock.write(body.slice(10));
    const [answer] = await once(sock, 'data') as [Buffer];
    sock.destroy();
    assert.match(answer.toString(), /^HTTP\/1\.1 200/);
    const text = await (await fetch(`http://127.0.0.1:${m[1]}/metrics`)).text();
    const sum = Number(/svcd_request_seconds_sum\{verb="Append"\} ([0-9.e-]+)/.exec(text)?.[1]);
    // Half the pause: the client's timer starts before its first write reaches the server, so the
    // server can see a little less than the whole pause; leaving the upload out would show ~1 ms.
    assert.ok(sum >= PAUSE_MS / 2 / 1000, `Append latency sum ${sum} s leaves out the ${PAUSE_MS} ms upload`);
  });
}

test('an idle stream goes dormant in a real star and wakes on a read, as the svcd_streams gauges show', async (t) => {
  const srv = await startServer({ args: ['--metrics-listen', '127.0.0.1:0', '--lease-idle-ms', '300', '--wal-settle-after-ms', '100'] });
  t.after(() => srv.stop());
  const m = await waitForOutput(srv, /svcd ops on http:\/\/127\.0\.0\.1:(\d+)/);
  const series = async (): Promise<string> => (await fetch(`http://127.0.0.1:${m[1]}/metrics`)).text();
  const value = (text: string, re: RegExp): number => Number(re.exec(text)?.[1] ?? NaN);
  const post = (path: string, body: unknown): Promise<Response> => fetch(srv.baseUrl + path, { method: 'POST', body: JSON.stringify(body) });
  assert.equal((await post('/v1/buckets/d', {})).status, 201);
  assert.equal((await post('/v1/streams/d/s', {})).status, 201);
  assert.equal((await post('/v1/streams/d/s/records', { records: [{ body: 'kept' }] })).status, 200);
  // Bounded by rounds, not asserted on time: settling and the idle timeout take a few sweeps.
  let text = '';
  for (let i = 0; i < 200 && value(text, /^svcd_streams\{state="dormant"\} (\d+)/m) !== 1; i++) {
    await new Promise((r) => setTimeout(r, 50));
    text = await series();
  }
  assert.equal(value(text, /^svcd_streams\{state="dormant"\} (\d+)/m), 1, 'the idle stream went dormant');
  assert.equal(value(text, /^svcd_streams\{state="live"\} (\d+)/m), 0);
  const page = await (await fetch(`${srv.baseUrl}/v1/streams/d/s/records?seq_num=0`)).json() as { records: { body: string }[] };
  assert.deepEqual(page.records.map((r) => r.body), ['kept'], 'the read wakes it with its record');
  // (It may go dormant again a sweep later: the counter, not the live gauge, is what must have moved.)
  assert.ok(value(await series(), /^svcd_streams_dormancy\{event="woken"\} (\d+)/m) >= 1, 'the read woke it');
});
