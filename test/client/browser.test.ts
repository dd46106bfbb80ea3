// The HTTP client runs in browsers: it bundles for the browser platform (esbuild refuses `node:`
// modules there), type-checks against the DOM library with no Node types, and the bundle works against
// a real star inside a context holding only web globals (no Buffer, process or require): buckets,
// streams, byte bodies through the btoa/atob path, a read and an SSE subscription.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import vm from 'node:vm';
import { build } from 'esbuild';
import { REPO_ROOT } from '../helpers/server.ts';
import { Star, uniq } from './kit.ts';

let star: Star;
before(async () => { star = await Star.start(); });
after(async () => { await star.stop(); });

async function bundle(format: 'esm' | 'iife'): Promise<string> {
  const out = await build({
    entryPoints: [join(REPO_ROOT, 'src', 'client', 'index.ts')],
    bundle: true, platform: 'browser', format, write: false, logLevel: 'silent',
    ...(format === 'iife' ? { globalName: 'svc' } : {}),
  });
  return out.outputFiles[0].text;
}

test('bundles for the browser platform with no node: import', async () => {
  const code = await bundle('esm');
  assert.doesNotMatch(code, /from ["']node:|require\(["']node:/);
});

test('type-checks against lib dom without Node types (src/client/tsconfig.browser.json)', () => {
  const r = spawnSync(process.execPath, [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '-p', join(REPO_ROOT, 'src', 'client', 'tsconfig.browser.json')], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test('the bundle works against a real star with web globals only', async () => {
  const web = {
    fetch, Headers, Request, Response, AbortController, AbortSignal, ReadableStream, TextEncoder, TextDecoder, URL,
    setTimeout, clearTimeout, btoa, atob, crypto: globalThis.crypto, console, DOMException, Promise, Error, TypeError,
  };
  const ctx = vm.createContext({ ...web });
  vm.runInContext(await bundle('iife'), ctx);
  assert.equal(vm.runInContext('typeof Buffer + typeof process + typeof require', ctx), 'undefinedundefinedundefined');
  const lib = ctx.svc as typeof import('../../src/client/index.ts');
  const c = new lib.SvcClient({ url: star.url });
  const bucket = uniq('web');
  await c.createBucket({ bucket });
  const a = { bucket, key: 'orders/eu' };
  await c.createStream(a);
  const sub = c.subscribe(a, { start: { seqNum: 0 } });
  await c.append(a, [{ body: 'text' }, { body: new Uint8Array([0, 0xff, 0x10]) }]);
  const records = [];
  for await (const r of c.read(a, { start: { seqNum: 0 } })) records.push(r);
  assert.equal(new TextDecoder().decode(records[0].body), 'text');
  assert.deepEqual([...records[1].body], [0, 0xff, 0x10]);
  assert.equal(lib.base64Encode(new Uint8Array([0xfb, 0xff])), '+/8=');
  for await (const batch of sub) {
    assert.deepEqual([...batch.records].map((r) => r.seq_num), [0, 1]); // arrays of the other realm, copied
    break;
  }
  sub.close();
});
