// CorsPolicy on its own: which origins are admitted, and what headers plain answers carry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CorsPolicy } from '../../src/api/cors.ts';
import { ServiceError } from '../../src/core/errors.ts';
import { httpStatusOf } from '../../src/api/http-status.ts';

test('with no origins configured nothing is added and every preflight is refused', () => {
  const p = new CorsPolicy([]);
  assert.equal(p.enabled, false);
  assert.equal(p.responseHeaders('https://a.example'), undefined);
  assert.throws(() => p.preflight('https://a.example', 'GET', ['GET']), (e: unknown) => e instanceof ServiceError && httpStatusOf(e.code) === 403);
});

test('listed origins match without case or a trailing slash; * admits any real origin but not null', () => {
  const listed = new CorsPolicy(['https://App.example/']);
  assert.equal(listed.allows('https://app.example'), true);
  assert.equal(listed.allows('https://other.example'), false);
  const any = new CorsPolicy(['*']);
  assert.equal(any.allows('https://whatever.example'), true);
  assert.equal(any.allows('null'), false, 'sandboxed frames and file: pages must be listed by name');
  assert.equal(new CorsPolicy(['*', 'null']).allows('null'), true);
});

test('plain answers vary by Origin whenever origins are configured; only an allowed one is echoed', () => {
  const p = new CorsPolicy(['https://app.example']);
  assert.deepEqual(p.responseHeaders(undefined), [['Vary', 'Origin']]);
  assert.deepEqual(p.responseHeaders('https://evil.example'), [['Vary', 'Origin']]);
  const ok = new Map(p.responseHeaders('https://app.example'));
  assert.equal(ok.get('Access-Control-Allow-Origin'), 'https://app.example');
  assert.equal(ok.get('Vary'), 'Origin');
});
