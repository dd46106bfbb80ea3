// The admin bridge on the ops listener (spec: Ops listener and admin bridge): POST /admin/api/{Method}
// for exactly the eleven read verbs, JSON shaped as their proto messages and equal to what the gRPC
// admin plane answers; every other method 404, other HTTP methods 405, bad bodies 400; the reader's
// caps (500 records or 1 MiB); pagination; leadership (leased while a producer session is open);
// credentials without secrets or hashes; --admin-ui-reader=false and --admin-ui=false.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { ADMIN_READER_BYTES_MAX, ADMIN_READER_RECORDS_MAX } from '../../src/config/limits.ts';
import { findDashboardDir } from '../../src/ops/dashboard.ts';
import type { AppendSessionResponse__Output } from '../../src/gen/svc/v1/AppendSessionResponse.ts';
import { REPO_ROOT } from '../helpers/server.ts';
import { bytes, call, callMd, connect, type Clients } from '../grpc/client.ts';
import { bridge, data, ok, startOpsStar, type OpsStar } from './kit.ts';

const READ_VERBS = [
  'Health', 'ListStars', 'GetClusterOverview', 'ListStreamSummaries', 'ListBucketSummaries', 'GetStreamDetail',
  'GetStreamLiveStats', 'ListAuditQueues', 'PeekAuditQueue', 'ReadStreamRecords', 'ListCredentials',
];
const KiB = 1024;

/** A gRPC answer without the loader's virtual oneof fields (`_field` names the set member of a
 *  proto3 `optional`), which are no part of the message. */
function withoutVirtual(v: unknown): any {
  if (Array.isArray(v)) return v.map(withoutVirtual);
  if (v === null || typeof v !== 'object' || Buffer.isBuffer(v)) return v;
  return Object.fromEntries(Object.entries(v).filter(([k]) => !k.startsWith('_')).map(([k, x]) => [k, withoutVirtual(x)]));
}

describe('admin bridge (auth off, gRPC on)', () => {
  let s: OpsStar;
  let g: Clients;
  before(async () => {
    s = await startOpsStar({ grpc: true });
    g = connect(s.grpcPort!);
    await data(s.srv, 'POST', '/v1/buckets/b1', { create_stream_on_read: true });
    await data(s.srv, 'POST', '/v1/buckets/b2', {});
    for (const k of ['a', 'b', 'c']) await data(s.srv, 'POST', `/v1/streams/b1/${k}`, {});
    await data(s.srv, 'POST', '/v1/streams/b2/big', {});
    await data(s.srv, 'POST', '/v1/streams/b1/a/records', { records: Array.from({ length: 600 }, (_, i) => ({ body: `r${i}` })) });
    await data(s.srv, 'POST', '/v1/streams/b1/b/records', {
      records: [
        { body: 'plain text' },
        { body_b64: Buffer.from([0xff, 0xfe, 0x00]).toString('base64'), headers: [{ name: 'h', value_b64: Buffer.from([0x80]).toString('base64') }] },
      ],
    });
    // 400 KiB each: a page holds two (800 KiB), a third would pass 1 MiB.
    await data(s.srv, 'POST', '/v1/streams/b2/big/records', { records: Array.from({ length: 4 }, () => ({ body: 'x'.repeat(400 * KiB) })) });
  });
  after(async () => {
    g?.close();
    await s?.stop();
  });

  it('answers Health, ListStars and GetClusterOverview for the one star, named by the id its data dir keeps', async () => {
    const starId = readFileSync(join(s.srv.dataDir, 'star-id'), 'utf8').trim();
    assert.match(starId, /^star-[0-9a-f]{12}$/);
    const health = await ok(s.ops, 'Health');
    assert.equal(health.serving, true);
    assert.equal(health.star_id, starId);
    assert.equal((await call(g.data.SettleStar.bind(g.data), { star_id: starId })).star_id, starId, 'gRPC knows the star by the same id');
    assert.equal(typeof health.uptime_ms, 'number');
    const stars = await ok(s.ops, 'ListStars');
    assert.equal(stars.stars.length, 1);
    assert.deepEqual({ ...stars.stars[0], started_at_unix_ms: 0 }, {
      star_id: starId, address: `127.0.0.1:${s.grpcPort}`, state: 'STAR_STATE_ACTIVE', started_at_unix_ms: 0,
    });
    assert.deepEqual(await ok(s.ops, 'GetClusterOverview'), {
      star_count: 1, bucket_count: 2, bucket_count_capped: false, stream_count: 4, stream_count_capped: false,
    });
  });

  it('pages ListStreamSummaries and ListBucketSummaries by their cursors', async () => {
    const first = await ok(s.ops, 'ListStreamSummaries', { bucket: 'b1', limit: 2 });
    assert.deepEqual(first.streams.map((x: any) => x.key), ['a', 'b']);
    assert.notEqual(first.next, '');
    const a = first.streams[0];
    assert.deepEqual(Object.keys(a).sort(), ['bucket', 'created_at_unix_ms', 'key', 'leader_star_id', 'storage_class', 'stream_id', 'tail']);
    assert.equal(a.tail.seq_num, 600);
    assert.equal(a.storage_class, 'STORAGE_CLASS_STANDARD');
    assert.equal(a.leader_star_id, '', 'no producer is live: idle');
    const rest = await ok(s.ops, 'ListStreamSummaries', { bucket: 'b1', start_after: first.next, limit: 2 });
    assert.deepEqual(rest.streams.map((x: any) => x.key), ['c']);
    assert.equal(rest.next, '');

    const names: string[] = [];
    let cursor = '';
    let pages = 0;
    do {
      const page = await ok(s.ops, 'ListBucketSummaries', { start_after: cursor, limit: 1 });
      assert.ok(page.buckets.length <= 1);
      for (const b of page.buckets) names.push(`${b.info.name}:${b.stream_count}:${b.stream_count_capped}`);
      cursor = page.next;
      pages++;
    } while (cursor !== '' && pages < 10);
    assert.deepEqual(names, ['b1:3:false', 'b2:1:false']);
    assert.ok(pages >= 2);
  });

  it('answers GetStreamDetail and GetStreamLiveStats as the gRPC admin plane does', async () => {
    const detail = await ok(s.ops, 'GetStreamDetail', { bucket: 'b1', key: 'a' });
    const viaGrpc = await call(g.admin.GetStreamDetail.bind(g.admin), { bucket: 'b1', key: bytes('a') });
    assert.deepEqual(detail, withoutVirtual({ ...viaGrpc, info: { ...viaGrpc.info, key: 'a' } }));
    assert.equal(detail.tail.seq_num, 600);
    assert.equal(detail.fencing_token, '');
    // A key may also be sent as base64 in key_b64.
    assert.deepEqual(await ok(s.ops, 'GetStreamDetail', { bucket: 'b1', key_b64: Buffer.from('a').toString('base64') }), detail);
    const live = await ok(s.ops, 'GetStreamLiveStats', { bucket: 'b1', key: 'a' });
    assert.equal(live.tail.seq_num, 600);
    assert.equal(live.leader_star_id, '');
    assert.equal(typeof live.sampled_at_unix_ms, 'number');
    const missing = await bridge(s.ops, 'GetStreamDetail', { bucket: 'b1', key: 'nope' });
    assert.equal(missing.status, 404);
    assert.equal(typeof missing.json.error, 'string');
    assert.equal((await bridge(s.ops, 'GetStreamDetail', { bucket: 'b1' })).status, 400, 'a key is required');
  });

  it('answers the audit verbs: the auditor\'s three queues, and no other queue to peek', async () => {
    const listed = await ok(s.ops, 'ListAuditQueues') as { queues: { name: string }[] };
    assert.deepEqual(listed.queues.map((q) => q.name), ['deletions', 'verifications', 'findings']);
    const peek = await bridge(s.ops, 'PeekAuditQueue', { name: 'settle', limit: 10 });
    assert.equal(peek.status, 404);
    assert.match(peek.json.error, /no audit queue named "settle"/);
  });

  it('reads record pages of at most 500 records, clamped to the retained range', async () => {
    for (const limit of [undefined, 0, 10_000]) {
      const page = await ok(s.ops, 'ReadStreamRecords', { bucket: 'b1', key: 'a', ...(limit !== undefined ? { limit } : {}) });
      assert.equal(page.records.length, ADMIN_READER_RECORDS_MAX, `limit ${limit}`);
      assert.equal(page.records[0].seq_num, 0);
      assert.equal(page.records[499].body, 'r499');
      assert.equal(page.tail.seq_num, 600);
    }
    const seven = await ok(s.ops, 'ReadStreamRecords', { bucket: 'b1', key: 'a', seq_num: 590, limit: 7 });
    assert.deepEqual(seven.records.map((r: any) => r.seq_num), [590, 591, 592, 593, 594, 595, 596]);
    const last = await ok(s.ops, 'ReadStreamRecords', { bucket: 'b1', key: 'a', seq_num: '599' });
    assert.deepEqual(last.records.map((r: any) => r.body), ['r599']);
    const past = await ok(s.ops, 'ReadStreamRecords', { bucket: 'b1', key: 'a', seq_num: 10_000 });
    assert.deepEqual(past, { records: [], tail: past.tail });
    assert.equal(past.tail.seq_num, 600);
  });

  it('stops a record page at 1 MiB', async () => {
    const page = await ok(s.ops, 'ReadStreamRecords', { bucket: 'b2', key: 'big' });
    assert.equal(page.records.length, 2);
    const bytesRead = page.records.reduce((n: number, r: any) => n + Buffer.byteLength(r.body), 0);
    assert.ok(bytesRead <= ADMIN_READER_BYTES_MAX, `${bytesRead}`);
    const next = await ok(s.ops, 'ReadStreamRecords', { bucket: 'b2', key: 'big', seq_num: 2 });
    assert.deepEqual(next.records.map((r: any) => r.seq_num), [2, 3]);
  });

  it('encodes record bytes by the read encoding: plain when UTF-8, else _b64', async () => {
    const page = await ok(s.ops, 'ReadStreamRecords', { bucket: 'b1', key: 'b' });
    assert.deepEqual(page.records.map((r: any) => ({ ...r, timestamp_ms: 0 })), [
      { seq_num: 0, timestamp_ms: 0, headers: [], body: 'plain text' },
      { seq_num: 1, timestamp_ms: 0, headers: [{ name: 'h', value_b64: 'gA==' }], body_b64: '//4A' },
    ]);
  });

  it('never creates a stream, even in a create_stream_on_read bucket', async () => {
    for (const verb of ['ReadStreamRecords', 'GetStreamDetail', 'GetStreamLiveStats']) {
      assert.equal((await bridge(s.ops, verb, { bucket: 'b1', key: 'ghost' })).status, 404, verb);
    }
    assert.equal((await fetch(`${s.srv.baseUrl}/v1/streams/b1/ghost`)).status, 404);
    assert.equal((await ok(s.ops, 'ListStreamSummaries', { bucket: 'b1' })).streams.length, 3);
  });

  it('answers ListCredentials 501 while no credential registry runs (auth off), as gRPC does', async () => {
    const a = await bridge(s.ops, 'ListCredentials');
    assert.equal(a.status, 501);
    assert.match(a.json.error, /credential registry is not configured/);
  });

  it('shows a stream leased while a producer session is open on it, idle once it closes', async () => {
    const starId = readFileSync(join(s.srv.dataDir, 'star-id'), 'utf8').trim();
    const session = g.data.AppendSession();
    const closed = new Promise<void>((resolve) => {
      session.on('status', () => resolve());
      session.on('error', () => resolve());
    });
    const acked = new Promise<AppendSessionResponse__Output>((resolve) => session.once('data', resolve));
    session.on('data', () => {});
    session.write({ open: { bucket: 'b1', key: bytes('c') } });
    session.write({ batch: { records: [{ body: bytes('live') }] } });
    await acked; // the session is open and watching its stream
    try {
      const rows = (await ok(s.ops, 'ListStreamSummaries', { bucket: 'b1' })).streams;
      assert.deepEqual(rows.map((r: any) => [r.key, r.leader_star_id]), [['a', ''], ['b', ''], ['c', starId]]);
      assert.equal((await ok(s.ops, 'GetStreamDetail', { bucket: 'b1', key: 'c' })).leader_star_id, starId);
      assert.equal((await ok(s.ops, 'GetStreamLiveStats', { bucket: 'b1', key: 'c' })).leader_star_id, starId);
      const viaGrpc = await call(g.admin.ListStreamSummaries.bind(g.admin), { bucket: 'b1' });
      assert.deepEqual(viaGrpc.streams.map((r) => r.leader_star_id), ['', '', starId]);
    } finally {
      session.end();
      await closed;
    }
    assert.equal((await ok(s.ops, 'GetStreamDetail', { bucket: 'b1', key: 'c' })).leader_star_id, '');
    assert.deepEqual((await ok(s.ops, 'ListStreamSummaries', { bucket: 'b1' })).streams.map((r: any) => r.leader_star_id), ['', '', '']);
  });

  it('404s every other method, mutating admin verbs and data verbs included', async () => {
    const others = [
      'Drain', 'Decommission', 'CreateCredential', 'RevokeCredential', 'Append', 'CreateBucket', 'DeleteStream',
      'Trim', 'Fence', 'ExchangeToken', 'SettleStar', 'health', 'constructor', '__proto__', 'Health/x', '',
    ];
    for (const m of others) {
      const a = await bridge(s.ops, m, {});
      assert.equal(a.status, 404, m);
      assert.equal(typeof a.json?.error, 'string', m);
    }
    assert.equal((await ok(s.ops, 'GetClusterOverview')).bucket_count, 2, 'nothing changed');
  });

  it('answers 405 with Allow: POST to any other HTTP method', async () => {
    for (const verb of READ_VERBS) {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const res = await fetch(`${s.ops}/admin/api/${verb}`, { method });
        assert.equal(res.status, 405, `${method} ${verb}`);
        assert.equal(res.headers.get('allow'), 'POST');
        assert.equal(typeof ((await res.json()) as any).error, 'string');
      }
    }
  });

  it('answers 400 {error} to a malformed or mistyped body', async () => {
    const bad: [string, string][] = [
      ['Health', '{not json'],
      ['Health', '[]'],
      ['Health', '"x"'],
      ['Health', 'null'],
      ['Health', '{"star_id":"x"}'],
      ['ListStreamSummaries', '{"bucket":7}'],
      ['ListStreamSummaries', '{"bucket":"b1","limit":-1}'],
      ['ListStreamSummaries', '{"bucket":"b1","limit":1.5}'],
      ['ListStreamSummaries', '{"bucket":"b1","start_after":"!!not-a-cursor"}'],
      ['ReadStreamRecords', '{"bucket":"b1","key":"a","seq_num":"ten"}'],
      ['ReadStreamRecords', '{"bucket":"b1","key":"a","key_b64":"YQ=="}'],
      ['GetStreamDetail', '{"bucket":"b1","key_b64":"not base64!"}'],
      ['GetStreamDetail', '{"bucket":"bad name","key":"a"}'],
    ];
    for (const [verb, body] of bad) {
      const a = await bridge(s.ops, verb, body);
      assert.equal(a.status, 400, `${verb} ${body}: ${a.text}`);
      assert.equal(typeof a.json?.error, 'string', `${verb} ${body}`);
    }
    assert.equal((await bridge(s.ops, 'Health', '')).status, 200, 'an empty body is the empty message');
    const huge = await bridge(s.ops, 'Health', JSON.stringify({ pad: 'x'.repeat(100 * KiB) }));
    assert.equal(huge.status, 400);
  });
});

describe('admin bridge: credentials (auth basic)', () => {
  const PASSWORD = 'operator-password';
  let s: OpsStar;
  let g: Clients;
  const created: { key_id: string; secret: string }[] = [];
  before(async () => {
    s = await startOpsStar({
      grpc: true, args: ['--auth', 'basic', '--insecure-auth', '--admin-username', 'op'], env: { SVCD_ADMIN_PASSWORD: PASSWORD },
    });
    g = connect(s.grpcPort!);
    const md = new grpc.Metadata();
    md.set('authorization', `Basic ${Buffer.from(`op:${PASSWORD}`).toString('base64')}`);
    for (const scope of ['svc:read:b1:*', 'svc:append:b1:*', 'svc:admin']) {
      const c = await callMd(g.admin.CreateCredential.bind(g.admin), { scope }, md);
      created.push({ key_id: c.credential!.key_id, secret: c.secret });
    }
  });
  after(async () => {
    g?.close();
    await s?.stop();
  });

  it('pages ListCredentials without secrets or hashes, and needs no credential itself', async () => {
    const seen: any[] = [];
    let cursor = '';
    let pages = 0;
    do {
      const a = await bridge(s.ops, 'ListCredentials', { start_after: cursor, limit: 2 });
      assert.equal(a.status, 200, a.text);
      for (const secretOrHash of created.flatMap((c) => [c.secret, createHash('sha256').update(c.secret).digest('hex')])) {
        assert.ok(!a.text.includes(secretOrHash), 'a secret or its hash is listed');
      }
      assert.doesNotMatch(a.text, /secret|hash/i);
      assert.ok(a.json.credentials.length <= 2);
      seen.push(...a.json.credentials);
      cursor = a.json.next;
      pages++;
    } while (cursor !== '' && pages < 10);
    assert.ok(pages >= 2, 'three credentials take two pages of two');
    const mine = seen.filter((c) => created.some((x) => x.key_id === c.key_id));
    assert.equal(mine.length, 3);
    for (const c of mine) {
      assert.deepEqual(Object.keys(c).sort(), ['created_at_unix_ms', 'key_id', 'scope', 'state']);
      assert.equal(c.state, 'CREDENTIAL_STATE_ACTIVE');
    }
    assert.deepEqual(mine.map((c) => c.scope).sort(), ['svc:admin', 'svc:append:b1:*', 'svc:read:b1:*']);
  });
});

describe('admin bridge and dashboard flags', () => {
  it('--admin-ui-reader=false removes ReadStreamRecords and nothing else', async (t) => {
    const s = await startOpsStar({ args: ['--admin-ui-reader=false'] });
    t.after(() => s.stop());
    await data(s.srv, 'POST', '/v1/buckets/b', {});
    await data(s.srv, 'POST', '/v1/streams/b/k', {});
    await data(s.srv, 'POST', '/v1/streams/b/k/records', { records: [{ body: 'secret-ish' }] });
    const read = await bridge(s.ops, 'ReadStreamRecords', { bucket: 'b', key: 'k' });
    assert.equal(read.status, 404);
    assert.match(read.json.error, /admin-ui-reader/);
    assert.ok(!read.text.includes('secret-ish'));
    assert.equal((await ok(s.ops, 'GetStreamDetail', { bucket: 'b', key: 'k' })).tail.seq_num, 1);
    assert.equal((await fetch(`${s.ops}/admin/`)).status, 200);
  });

  it('--admin-ui=false removes /admin/, bridge included; the rest of the ops listener stays', async (t) => {
    const s = await startOpsStar({ args: ['--admin-ui=false'] });
    t.after(() => s.stop());
    for (const path of ['/admin/', '/admin', '/admin/app.js', '/admin/style.css']) assert.equal((await fetch(s.ops + path)).status, 404, path);
    assert.equal((await bridge(s.ops, 'Health')).status, 404);
    assert.equal((await fetch(`${s.ops}/metrics`)).status, 200);
    assert.equal((await fetch(`${s.ops}/healthz`)).status, 200);
  });

  it('serves the dashboard files with a strict content security policy', async (t) => {
    const s = await startOpsStar();
    t.after(() => s.stop());
    const page = await fetch(`${s.ops}/admin/`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self'/);
    assert.match(await page.text(), /<script src="app\.js"/);
    const js = await fetch(`${s.ops}/admin/app.js`);
    assert.match(js.headers.get('content-type') ?? '', /javascript/);
    assert.doesNotMatch(await js.text(), /innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
    assert.match((await fetch(`${s.ops}/admin/style.css`)).headers.get('content-type') ?? '', /text\/css/);
    const redirect = await fetch(`${s.ops}/admin`, { redirect: 'manual' });
    assert.equal(redirect.status, 308);
    assert.equal(redirect.headers.get('location'), '/admin/');
    assert.equal((await fetch(`${s.ops}/admin/../package.json`)).status, 404);
    assert.equal((await fetch(`${s.ops}/admin/index.html.bak`)).status, 404);
    const post = await fetch(`${s.ops}/admin/`, { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
  });

  it('finds the dashboard files from the sources and from the bundle beside src/main.ts', () => {
    const dir = join(REPO_ROOT, 'src', 'ops', 'dashboard');
    assert.equal(findDashboardDir(join(REPO_ROOT, 'src', 'ops')), dir);
    assert.equal(findDashboardDir(join(REPO_ROOT, 'src')), dir); // src/main.bundle.mjs
    for (const f of ['index.html', 'app.js', 'style.css', 'favicon.svg']) assert.ok(existsSync(join(dir, f)), f);
    assert.throws(() => findDashboardDir('/'), /not found/);
  });
});

describe('admin bridge: the lease idle timeout', () => {
  let s: OpsStar;
  before(async () => {
    s = await startOpsStar({ args: ['--lease-idle-ms', '600000'] });
    await data(s.srv, 'POST', '/v1/buckets/lt', {});
    for (const k of ['written', 'quiet']) await data(s.srv, 'POST', `/v1/streams/lt/${k}`, {});
    await data(s.srv, 'POST', '/v1/streams/lt/written/records', { records: [{ body: 'one-shot' }] });
  });
  after(async () => { await s?.stop(); });

  it('keeps a stream leased after a one-shot HTTP append until the idle timeout runs; an unwritten one is idle', async () => {
    const rows = (await ok(s.ops, 'ListStreamSummaries', { bucket: 'lt' })).streams;
    assert.deepEqual(rows.map((r: any) => [r.key, r.leader_star_id !== '']), [['quiet', false], ['written', true]]);
  });
});

describe('star identity', () => {
  it('a restarted star keeps its id; --star-id and --advertise-address name it instead', async () => {
    const first = await startOpsStar({ grpc: true });
    const dataDir = first.srv.dataDir;
    const id = (await ok(first.ops, 'Health')).star_id as string;
    await first.stop();
    const again = await startOpsStar({ grpc: true, dataDir });
    try {
      assert.equal((await ok(again.ops, 'Health')).star_id, id, 'the same member after a restart');
    } finally {
      await again.stop();
    }
    const named = await startOpsStar({ grpc: true, dataDir, args: ['--star-id', 'east-1', '--advertise-address', 'star-east.internal:7071'] });
    try {
      assert.equal((await ok(named.ops, 'Health')).star_id, 'east-1');
      const stars = await ok(named.ops, 'ListStars');
      assert.deepEqual(stars.stars.map((x: any) => [x.star_id, x.address]), [['east-1', 'star-east.internal:7071']]);
    } finally {
      await named.stop();
    }
  });
});
