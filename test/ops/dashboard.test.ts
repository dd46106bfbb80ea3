// The dashboard in a real browser (playwright-core driving Debian's chromium): every page renders from
// the admin bridge, lists page by cursor, a capped count shows as `cap+`, a stream with an open
// producer session shows leased and the others idle, the record reader pages through records, data is
// rendered as text (markup in a record stays text), credentials show without secrets, and the page
// raises no script error or CSP violation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { Page } from 'playwright-core';
import { LIST_PAGE_MAX } from '../../src/config/limits.ts';
import { bytes, callMd, connect } from '../grpc/client.ts';
import { noBrowser, openBrowser } from '../helpers/browser.ts';
import { data, inParallel, startOpsStar } from './kit.ts';


const USER = 'op';
const PASSWORD = 'dashboard-test-password';
const AUTH = { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` };
const XSS = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>';

// Page-side functions reach the page's globals through `globalThis`: this file is type-checked
// without the DOM's types. (They must be functions: the page's CSP refuses evaluating strings.)
/** Waits until the page has rendered the current location.hash. */
async function rendered(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const w = globalThis as any;
    return w.location.hash !== '' && w.document.getElementById('main')?.dataset.rendered === w.location.hash;
  });
}

async function go(page: Page, hash: string): Promise<void> {
  await page.evaluate((h) => { (globalThis as any).location.hash = h; }, hash);
  await rendered(page);
}

const cellTexts = (page: Page, column: number): Promise<string[]> =>
  page.locator(`main tbody tr td:nth-child(${column})`).allInnerTexts();

test('the dashboard renders every page from the bridge and reads records', { skip: noBrowser }, async (t) => {
  const s = await startOpsStar({ grpc: true, args: ['--auth', 'basic', '--insecure-auth', '--admin-username', USER], env: { SVCD_ADMIN_PASSWORD: PASSWORD } });
  t.after(() => s.stop());
  const g = connect(s.grpcPort!);
  t.after(() => g.close());
  const md = new grpc.Metadata();
  md.set('authorization', AUTH.authorization);

  // Data: one bucket of three streams, one bucket whose stream count stops at its cap.
  await data(s.srv, 'POST', '/v1/buckets/shop', {}, AUTH);
  for (const k of ['k2', 'k3', 'orders']) await data(s.srv, 'POST', `/v1/streams/shop/${k}`, {}, AUTH);
  await data(s.srv, 'POST', '/v1/streams/shop/orders/records', {
    records: [
      { body: XSS, headers: [{ name: 'content-type', value: 'text/html' }] },
      { body_b64: Buffer.from([0xff, 0xfe, 0x00]).toString('base64') },
      { body: '{"order":3}' },
    ],
  }, AUTH);
  await data(s.srv, 'POST', '/v1/buckets/wide', {}, AUTH);
  const wideKeys = Array.from({ length: LIST_PAGE_MAX + 1 }, (_, i) => `s${String(i).padStart(4, '0')}`);
  await inParallel(wideKeys, 32, (k) => data(s.srv, 'POST', `/v1/streams/wide/${k}`, {}, AUTH));
  const secrets: string[] = [];
  const keyIds: string[] = [];
  for (const scope of ['svc:read:shop:*', 'svc:admin']) {
    const c = await callMd(g.admin.CreateCredential.bind(g.admin), { scope }, md);
    secrets.push(c.secret);
    keyIds.push(c.credential!.key_id);
  }

  // A producer session open on shop/k2: its stream is leased while it lasts.
  const session = g.data.AppendSession(md);
  const sessionClosed = new Promise<void>((resolve) => { session.on('status', () => resolve()); session.on('error', () => resolve()); });
  const acked = new Promise<void>((resolve) => session.once('data', () => resolve()));
  session.on('data', () => {});
  session.write({ open: { bucket: 'shop', key: bytes('k2') } });
  session.write({ batch: { records: [{ body: bytes('first') }] } });
  await acked;
  t.after(async () => { session.end(); await sessionClosed; });

  const browser = await openBrowser();
  t.after(() => browser.close());
  const page = browser.page;
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => { if (msg.type() === 'error') problems.push(`console: ${msg.text()} (${msg.location().url})`); });
  page.on('dialog', (d) => { problems.push(`dialog: ${d.message()}`); void d.dismiss(); });

  // Overview.
  await page.goto(`${s.ops}/admin/`);
  await page.waitForSelector('main[data-page="overview"]');
  assert.equal(await page.locator('dd[data-field="star"]').innerText(), readFileSync(join(s.srv.dataDir, 'star-id'), 'utf8').trim());
  assert.equal(await page.locator('dd[data-field="buckets"]').innerText(), '2');
  assert.equal(await page.locator('dd[data-field="streams"]').innerText(), String(3 + wideKeys.length));
  assert.deepEqual(await cellTexts(page, 2), [`127.0.0.1:${s.grpcPort}`]);

  // Streams: pick a bucket, see leadership, page by cursor.
  await page.click('#nav a[data-page="streams"]');
  await rendered(page);
  await page.click('main a:text-is("shop")');
  await rendered(page);
  assert.deepEqual(await cellTexts(page, 1), ['k2', 'k3', 'orders']);
  assert.deepEqual(await cellTexts(page, 6), ['leased', 'idle', 'idle']);
  await go(page, '#/streams?bucket=shop&limit=2');
  assert.deepEqual(await cellTexts(page, 1), ['k2', 'k3']);
  await page.click('a[data-pager="next"]');
  await rendered(page);
  assert.deepEqual(await cellTexts(page, 1), ['orders']);
  assert.equal(await page.locator('a[data-pager="next"]').count(), 0);
  await page.click('a[data-pager="first"]');
  await rendered(page);
  assert.deepEqual(await cellTexts(page, 1), ['k2', 'k3']);

  // Stream detail, and the record reader.
  await go(page, '#/streams?bucket=shop');
  await page.click('a[data-stream-key="orders"]');
  await rendered(page);
  assert.equal(await page.getAttribute('main', 'data-page'), 'stream');
  assert.equal(await page.locator('dd[data-field="tail"]').innerText(), '3');
  assert.equal(await page.locator('dd[data-field="leadership"]').innerText(), 'idle');
  assert.equal(await page.locator('dd[data-field="fencing_token"]').innerText(), 'none');
  await page.click('main form button:text-is("Read")');
  await page.waitForSelector('[data-field="reader-summary"]');
  assert.match(await page.locator('[data-field="reader-summary"]').innerText(), /^3 records, seq_num 0 to 2; tail 3$/);
  assert.deepEqual(await cellTexts(page, 1), ['0', '1', '2']);
  const bodies = await cellTexts(page, 4);
  assert.equal(bodies[0], XSS, 'markup in a record is shown as text');
  assert.match(bodies[1], /base64\s*\/\/4A/);
  assert.equal(bodies[2], '{"order":3}');
  assert.deepEqual(await cellTexts(page, 3), ['content-type: text/html', '', '']);
  assert.equal(await page.locator('main img, main script').count(), 0);
  assert.equal(await page.evaluate(() => (globalThis as any).__xss), undefined, 'markup in a record ran');
  // One record per page: the reader pages on from the last seq_num.
  await page.fill('input[name="limit"]', '1');
  await page.click('main form button:text-is("Read")');
  await page.waitForSelector('[data-field="reader-summary"]:text-is("1 records, seq_num 0 to 0; tail 3")');
  await page.click('button[data-reader="next"]');
  await page.waitForSelector('[data-field="reader-summary"]:text-is("1 records, seq_num 1 to 1; tail 3")');
  assert.equal(await page.inputValue('input[name="seq_num"]'), '1');

  // The leased stream's detail.
  await go(page, '#/stream?bucket=shop&key=k2');
  assert.equal(await page.locator('dd[data-field="leadership"]').innerText(), 'leased');

  // Buckets: the wide bucket's count stops at its cap.
  await page.click('#nav a[data-page="buckets"]');
  await rendered(page);
  assert.deepEqual(await cellTexts(page, 1), ['shop', 'wide']);
  assert.deepEqual(await cellTexts(page, 2), ['3', `${LIST_PAGE_MAX}+`]);
  await go(page, '#/buckets?limit=1');
  assert.deepEqual(await cellTexts(page, 1), ['shop']);
  await page.click('a[data-pager="next"]');
  await rendered(page);
  assert.deepEqual(await cellTexts(page, 1), ['wide']);

  // Audits: the auditor's three queues, with their depths.
  await page.click('#nav a[data-page="audits"]');
  await rendered(page);
  assert.deepEqual(await cellTexts(page, 1), ['deletions', 'verifications', 'findings']);

  // Credentials, without secrets.
  await page.click('#nav a[data-page="credentials"]');
  await rendered(page);
  const listed = await cellTexts(page, 1);
  for (const id of keyIds) assert.ok(listed.includes(id), `${id} listed`);
  const text = await page.locator('main').innerText();
  for (const secret of secrets) assert.ok(!text.includes(secret), 'a secret is shown');

  assert.deepEqual(problems, []);
});
