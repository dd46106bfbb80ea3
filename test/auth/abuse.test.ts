// Auth limits that hold under abuse (issue 18): scope claims split on the ASCII space only, the
// exchange's failure throttles per key id and per client address, and the `connections` limit that
// exchanged tokens carry. Clocks are moved by the test; nothing waits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { ServiceError } from '../../src/core/errors.ts';
import { isAuthorized } from '../../src/auth/authorize.ts';
import { CredentialRegistry, MemoryCredentialStore } from '../../src/auth/credentials.ts';
import { createExchanger } from '../../src/auth/exchange.ts';
import { createJwtVerifier } from '../../src/auth/jwt.ts';
import { parseScope, parseStoredScope, scopeEntries } from '../../src/auth/scope.ts';
import { FailureThrottle } from '../../src/auth/throttle.ts';
import {
  EXCHANGE_FAILURES_PER_ADDRESS_BURST, EXCHANGE_FAILURES_PER_KEY_ID_BURST, EXCHANGE_TOKEN_CONNECTIONS_DEFAULT,
} from '../../src/config/limits.ts';
import { httpStatusOf } from '../../src/api/http-status.ts';

const code = (c: string) => (err: unknown): boolean => err instanceof ServiceError && err.code === c;
const SECRET = new TextEncoder().encode('k'.repeat(32));

test('scope: split on the ASCII space only; U+2003 between two tokens makes one malformed token, never admin', async () => {
  const skipped: string[] = [];
  const s = parseScope('svc:read:ta:s1\u2003svc:admin', (token) => skipped.push(token));
  assert.equal(s.admin, false, 'EM SPACE is no separator');
  assert.deepEqual(s.grants, [], 'and the read grant it is glued to is not granted either');
  assert.deepEqual(skipped, ['svc:read:ta:s1\u2003svc:admin'], 'one malformed token, skipped (rule 5)');
  for (const ws of ['\t', '\n', '\r', '\u00a0', '\u2028', '\u3000', '\v', '\f']) {
    const p = parseScope(`svc:read:b:k${ws}svc:admin`);
    assert.equal(p.admin, false, JSON.stringify(ws));
    assert.equal(p.grants.length, 0, JSON.stringify(ws));
  }
  assert.deepEqual(scopeEntries('  svc:read:b:k   svc:admin '), ['svc:read:b:k', 'svc:admin'], 'runs of spaces still separate');
  assert.equal(parseScope('svc:admin\tprofile').admin, false, 'a tab glues the marker to the next entry');
  assert.equal(parseScope('openid\u2003svc:admin').admin, false, 'a non-svc: entry glued to the marker is ignored whole');
  // Inside a token only visible ASCII but `"` and `\` (RFC 6749 §3.3 scope-token).
  for (const bad of ['svc:read:b\u00e9:*', 'svc:read:"b":*', 'svc:read:b\\:*']) {
    const reasons: string[] = [];
    assert.equal(parseScope(bad, (_t, why) => reasons.push(why)).grants.length, 0, bad);
    assert.match(reasons[0], /RFC 6749 scope-token/);
  }
  // A stored scope (credential create, root seed) with such a token keeps it, and it grants nothing.
  const stored = parseStoredScope('svc:read:ta:s1\u2003svc:admin');
  assert.deepEqual([stored.admin, stored.grants.length], [false, 0]);

  // End to end: a signed token whose scope glues the marker with U+2003 authorizes nothing.
  const verifier = await createJwtVerifier({ source: { kind: 'hmac-secret', key: { kid: '', secret: SECRET } } }, { log: () => {} });
  const token = await new SignJWT({ scope: 'svc:read:ta:s1\u2003svc:admin' })
    .setProtectedHeader({ alg: 'HS256' }).setExpirationTime('5m').sign(SECRET);
  const p = await verifier.verify(token);
  assert.equal(p.admin, false);
  assert.ok(!isAuthorized(p, 'Read', { bucket: 'ta', key: 's1' }));
  assert.ok(!isAuthorized(p, 'ListBuckets', {}));
  verifier.close();
});

test('FailureThrottle: a burst of failures, then refused until the rate refills one; keys apart; successes free', () => {
  let now = 1_000_000;
  const t = new FailureThrottle({ burst: 3, perS: 1, keysMax: 100, what: 'key id' }, () => now);
  for (let i = 0; i < 3; i++) { t.check('a'); t.failed('a'); }
  assert.throws(() => t.check('a'), (e: unknown) => code('resource_exhausted')(e) && /key id; retry in 1 s/.test((e as Error).message));
  assert.equal((() => { try { t.check('a'); } catch (e) { return httpStatusOf((e as ServiceError).code); } return 0; })(), 429);
  t.check('b'); // another key is untouched
  now += 999;
  assert.throws(() => t.check('a'));
  now += 1;
  t.check('a'); // one second refills one failure
  t.failed('a');
  assert.throws(() => t.check('a'));
  now += 60_000;
  for (let i = 0; i < 3; i++) { t.check('a'); t.failed('a'); }
  assert.throws(() => t.check('a'), 'refill stops at the burst');
});

test('FailureThrottle: bounded; refilled keys are forgotten first, then the least recently failed', () => {
  let now = 0;
  const t = new FailureThrottle({ burst: 2, perS: 1, keysMax: 10, what: 'client address' }, () => now);
  t.failed('hot'); t.failed('hot');
  for (let i = 0; i < 9; i++) t.failed(`cold${i}`);
  assert.ok(t.trackedKeys <= 10);
  assert.throws(() => t.check('hot'), 'still remembered: it failed most recently among the spent');
  now += 10_000; // everything refilled
  for (let i = 0; i < 100; i++) t.failed(`spray${i}`);
  assert.ok(t.trackedKeys <= 10, `${t.trackedKeys} keys`);
});

async function exchangeSetup() {
  let now = 1_700_000_000_000;
  const verifier = await createJwtVerifier({ source: { kind: 'hmac-secret', key: { kid: '', secret: SECRET } } }, { now: () => now });
  const registry = new CredentialRegistry(new MemoryCredentialStore(), { now: () => now });
  const root = await registry.create('svc:admin', 'root');
  const other = await registry.create('svc:read:b:*');
  const ex = createExchanger(registry, verifier.signer, { log: () => {}, nowMs: () => now });
  return { verifier, root, other, ex, advance: (ms: number) => { now += ms; } };
}

test('exchange: failed guesses per key id are throttled (429) before the secret is looked at, even the right one', async () => {
  const { root, other, ex, advance } = await exchangeSetup();
  for (let i = 0; i < EXCHANGE_FAILURES_PER_KEY_ID_BURST; i++) {
    await assert.rejects(ex.exchange({ key_id: 'root', secret: `guess-${i}`, scope: 'svc:admin' }), code('unauthenticated'));
  }
  await assert.rejects(ex.exchange({ key_id: 'root', secret: 'guess-x', scope: 'svc:admin' }), code('resource_exhausted'));
  await assert.rejects(ex.exchange({ key_id: 'root', secret: root.secret, scope: 'svc:admin' }), (e: unknown) =>
    code('resource_exhausted')(e) && /too many failed token exchanges from this key id; retry in 1 s/.test((e as Error).message),
  'the right secret is not even checked while the key id is throttled: a guess cannot be confirmed');
  // Another key id is untouched, and an unknown key id is throttled exactly like a known one.
  await ex.exchange({ key_id: other.key_id, secret: other.secret, bucket: 'b' });
  for (let i = 0; i < EXCHANGE_FAILURES_PER_KEY_ID_BURST; i++) {
    await assert.rejects(ex.exchange({ key_id: 'ck_nosuchkey', secret: 'x', bucket: 'b' }), code('unauthenticated'));
  }
  await assert.rejects(ex.exchange({ key_id: 'ck_nosuchkey', secret: 'x', bucket: 'b' }), code('resource_exhausted'), 'no existence oracle');
  advance(1000);
  const minted = await ex.exchange({ key_id: 'root', secret: root.secret, scope: 'svc:admin' });
  assert.equal(typeof minted.token, 'string', 'one second later (Retry-After: 1) the holder gets through');
  // Malformed asks are 400 and test no secret: they are not counted.
  for (let i = 0; i < 3 * EXCHANGE_FAILURES_PER_KEY_ID_BURST; i++) {
    await assert.rejects(ex.exchange({ key_id: other.key_id, secret: 'x', scope: 'openid' }), code('invalid_argument'));
  }
  await ex.exchange({ key_id: other.key_id, secret: other.secret, bucket: 'b' });
});

test('exchange: failed guesses per client address are throttled across key ids', async () => {
  const { other, ex } = await exchangeSetup();
  const from = { address: '203.0.113.9' };
  for (let i = 0; i < EXCHANGE_FAILURES_PER_ADDRESS_BURST; i++) {
    await assert.rejects(ex.exchange({ key_id: `ck_spray${i}`, secret: 'x', bucket: 'b' }, from), code('unauthenticated'));
  }
  await assert.rejects(ex.exchange({ key_id: other.key_id, secret: other.secret, bucket: 'b' }, from), (e: unknown) =>
    code('resource_exhausted')(e) && /client address/.test((e as Error).message));
  await ex.exchange({ key_id: other.key_id, secret: other.secret, bucket: 'b' }, { address: '198.51.100.1' });
});

test('exchange: minted tokens carry svc_aux.limits.connections (default, configured, or none with 0)', async () => {
  const { verifier, root, ex } = await exchangeSetup();
  let p = await verifier.verify((await ex.exchange({ key_id: 'root', secret: root.secret, bucket: 'b' })).token);
  assert.deepEqual(p.aux.limits, { connections: EXCHANGE_TOKEN_CONNECTIONS_DEFAULT });
  const registry = new CredentialRegistry(new MemoryCredentialStore());
  const c = await registry.create('svc:admin');
  p = await verifier.verify((await createExchanger(registry, verifier.signer, { tokenConnections: 7 }).exchange({ key_id: c.key_id, secret: c.secret, scope: 'svc:admin' })).token);
  assert.deepEqual(p.aux.limits, { connections: 7 });
  p = await verifier.verify((await createExchanger(registry, verifier.signer, { tokenConnections: 0 }).exchange({ key_id: c.key_id, secret: c.secret, scope: 'svc:admin' })).token);
  assert.equal(p.aux.limits, undefined);
});

test('exchange: a bucket narrowing with white space or non-ASCII is 400, never a glued scope', async () => {
  const { root, ex } = await exchangeSetup();
  for (const bucket of ['b\u2003svc:admin', 'b c', 'b\tc', 'caf\u00e9', '']) {
    await assert.rejects(ex.exchange({ key_id: 'root', secret: root.secret, bucket }), code('invalid_argument'), JSON.stringify(bucket));
  }
});
