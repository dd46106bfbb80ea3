// Whose address a request is charged to at the Gateway: the TCP peer, or, behind a trusted proxy,
// the last X-Forwarded-For entry (the one that proxy wrote; the rest came from the caller).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clientAddress, normalizeAddress } from '../../src/gateway/server.ts';

test('the peer unless it is a trusted proxy; then the last X-Forwarded-For entry', () => {
  const trusted = new Set(['10.0.0.1']);
  assert.equal(clientAddress('203.0.113.9', '1.2.3.4', trusted), '203.0.113.9', 'an untrusted peer cannot name another address');
  assert.equal(clientAddress('10.0.0.1', '1.2.3.4, 203.0.113.9', trusted), '203.0.113.9', 'the entry the proxy appended');
  assert.equal(clientAddress('10.0.0.1', ['1.2.3.4', '198.51.100.2'], trusted), '198.51.100.2', 'repeated headers read as one list');
  assert.equal(clientAddress('10.0.0.1', undefined, trusted), '10.0.0.1');
  assert.equal(clientAddress('10.0.0.1', ' , ', trusted), '10.0.0.1');
  assert.equal(clientAddress('::ffff:10.0.0.1', '203.0.113.9', trusted), '203.0.113.9', 'IPv4-mapped peers match their IPv4 form');
  assert.equal(clientAddress(undefined, '203.0.113.9', trusted), 'unknown');
  assert.equal(normalizeAddress('::FFFF:127.0.0.1'), '127.0.0.1');
  assert.equal(normalizeAddress('2001:DB8::1'), '2001:db8::1');
});
