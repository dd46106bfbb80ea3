// Virtual hosts as a table: which host and path go where, and what is 404.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hostName, routeHost } from '../../src/gateway/hosts.ts';

test('host names lose their port, case and trailing dot; IPv6 literals keep their brackets', () => {
  assert.equal(hostName('Orders.Svc.Test:8080'), 'orders.svc.test');
  assert.equal(hostName('orders.svc.test.'), 'orders.svc.test');
  assert.equal(hostName('[::1]:8080'), '[::1]');
  assert.equal(hostName(undefined), '');
});

test('{bucket}.{zone} puts the bucket in the path (dots and all); api, the apex and other hosts are path-style; a label that is no bucket name, and the rest, is 404', () => {
  const rows: [string, string, string | null][] = [
    ['orders.svc.test', '/v1/streams/eu%2F1/records', '/v1/streams/orders/eu%2F1/records'],
    ['orders.svc.test:443', '/v1/streams/k', '/v1/streams/orders/k'],
    ['orders.svc.test', '/v1/streams/k/records/subscribe', '/v1/streams/orders/k/records/subscribe'],
    ['orders.svc.test', '/v1/buckets', null],
    ['orders.svc.test', '/v1/buckets/orders', null],
    ['orders.svc.test', '/v1/streams/', null],
    ['orders.svc.test', '/v1/token/exchange', null],
    ['a.b.svc.test', '/v1/streams/k', '/v1/streams/a.b/k'],
    ['x.api.svc.test', '/v1/streams/k', '/v1/streams/x.api/k'],
    ['a b.svc.test', '/v1/streams/k', null],
    ['b?.svc.test', '/v1/streams/x', null],
    ['b/k/records.svc.test', '/v1/streams/tail', null],
    ['b%2fk.svc.test', '/v1/streams/tail', null],
    ['-b.svc.test', '/v1/streams/k', null],
    [`${'b'.repeat(129)}.svc.test`, '/v1/streams/k', null],
    ['.svc.test', '/v1/streams/k', null],
    ['api.svc.test', '/v1/buckets/orders', '/v1/buckets/orders'],
    ['api.svc.test', '/v1/streams/orders/k', '/v1/streams/orders/k'],
    ['svc.test', '/v1/streams/orders/k', '/v1/streams/orders/k'],
    ['localhost:8080', '/v1/streams/orders/k', '/v1/streams/orders/k'],
    ['evilsvc.test', '/v1/streams/k', '/v1/streams/k'],
    ['', '/v1/buckets', '/v1/buckets'],
  ];
  for (const [host, path, want] of rows) {
    const got = routeHost('svc.test', host, path);
    if (want === null) assert.equal(got.kind, 'not-found', `${host} ${path}`);
    else assert.deepEqual(got, { kind: 'path', path: want }, `${host} ${path}`);
  }
});

test('without a zone every host is path-style', () => {
  assert.deepEqual(routeHost('', 'orders.svc.test', '/v1/buckets'), { kind: 'path', path: '/v1/buckets' });
});
