// The ops listener against DNS rebinding and cross-site posts (issue 18): a Host that is not an IP
// address, localhost, the listen host or one of --ops-allowed-hosts is 403 on every path; a POST
// whose Origin is not the listener's own is 403; a POST with a content type a browser may send
// cross-site without a preflight is 415. The dashboard's own same-origin calls still work.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startOpsStar, type OpsStar } from './kit.ts';
import { hostAllowed, opsRefusal } from '../../src/ops/ops-server.ts';

interface Answer { status: number; body: any }

/** A request with a Host header of our choosing (fetch does not let one set Host). */
function call(ops: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const u = new URL(ops);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: Number(u.port), method, path, headers, timeout: 10_000 }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => { text += c.toString(); });
      res.on('end', () => {
        let parsed: any;
        try { parsed = JSON.parse(text); } catch { parsed = text; }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

test('which Host headers the ops listener answers', () => {
  const allowed = new Set(['ops.internal']);
  for (const h of ['127.0.0.1:9464', '[::1]:9464', '10.1.2.3', 'localhost:9464', 'LOCALHOST', 'a.localhost', 'ops.internal:9464', 'ops.internal.']) {
    assert.equal(hostAllowed(h, allowed), true, h);
  }
  for (const h of [undefined, '', 'attacker.example', 'attacker.example:9464', 'ops.internal.attacker.example', 'localhost.attacker.example', '127.0.0.1.nip.io']) {
    assert.equal(hostAllowed(h, allowed), false, String(h));
  }
  const same = { host: '127.0.0.1:9464' };
  assert.equal(opsRefusal('POST', { ...same, origin: 'http://127.0.0.1:9464', 'content-type': 'application/json' }, allowed), undefined);
  assert.equal(opsRefusal('POST', { ...same, origin: 'http://127.0.0.1:3000' }, allowed)?.status, 403);
  assert.equal(opsRefusal('POST', { ...same, origin: 'null' }, allowed)?.status, 403);
  assert.equal(opsRefusal('POST', { ...same, 'content-type': 'text/plain;charset=UTF-8' }, allowed)?.status, 415);
  assert.equal(opsRefusal('POST', same, allowed), undefined, 'no content type: an empty message');
  assert.equal(opsRefusal('GET', { ...same, origin: 'http://elsewhere.example' }, allowed), undefined, 'reads answer any origin (CORS keeps their answers from other origins)');
});

describe('the ops listener checks Host, Origin and content type', () => {
  let star: OpsStar;
  before(async () => { star = await startOpsStar({ args: ['--ops-allowed-hosts', 'ops.internal, metrics.example'] }); });
  after(() => star.stop());

  test('a rebound name is 403 on every path; addresses, localhost and allowed names are served', async () => {
    for (const path of ['/metrics', '/healthz', '/admin/', '/admin/api/Health']) {
      const method = path.startsWith('/admin/api/') ? 'POST' : 'GET';
      const denied = method === 'POST'
        ? await call(star.ops, method, path, { host: 'attacker.example:9464', 'content-type': 'application/json' }, '{}')
        : await call(star.ops, method, path, { host: 'attacker.example:9464' });
      assert.equal(denied.status, 403, `${path}: ${JSON.stringify(denied.body)}`);
      assert.equal(typeof denied.body.error, 'string');
    }
    for (const host of ['localhost', 'ops.internal:1', 'metrics.example', '127.0.0.1']) {
      assert.equal((await call(star.ops, 'GET', '/healthz', { host })).status, 200, host);
    }
  });

  test('a cross-origin POST is 403 and a text/plain one 415; the same-origin JSON call is served', async () => {
    const host = new URL(star.ops).host;
    const cross = await call(star.ops, 'POST', '/admin/api/Health', { host, origin: 'http://localhost:8080', 'content-type': 'application/json' }, '{}');
    assert.equal(cross.status, 403, JSON.stringify(cross.body));
    const plain = await call(star.ops, 'POST', '/admin/api/ListCredentials', { host, 'content-type': 'text/plain' }, '{}');
    assert.equal(plain.status, 415, JSON.stringify(plain.body));
    const form = await call(star.ops, 'POST', '/admin/api/Health', { host, 'content-type': 'application/x-www-form-urlencoded' }, '{}');
    assert.equal(form.status, 415);
    const same = await call(star.ops, 'POST', '/admin/api/Health', { host, origin: `http://${host}`, 'content-type': 'application/json' }, '{}');
    assert.equal(same.status, 200, JSON.stringify(same.body));
  });
});
