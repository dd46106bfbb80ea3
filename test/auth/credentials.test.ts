// The api-key registry and the root seed's convergence.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '../../src/core/errors.ts';
import { CredentialRegistry, MemoryCredentialStore, hashSecret } from '../../src/auth/credentials.ts';
import { httpStatusOf } from '../../src/api/http-status.ts';

const code = (c: string) => (err: unknown): boolean => err instanceof ServiceError && err.code === c;

test('create: ck_ + 16 hex, secret shown once, only its SHA-256 stored', async () => {
  const store = new MemoryCredentialStore();
  const reg = new CredentialRegistry(store, { now: () => 42 });
  const c = await reg.create('svc:read:b:*');
  assert.match(c.key_id, /^ck_[0-9a-f]{16}$/);
  assert.ok(c.secret.length >= 40);
  assert.equal(c.state, 'active');
  assert.equal(c.created_at_unix_ms, 42);
  const row = await store.get(c.key_id);
  assert.equal(row?.secret_hash, hashSecret(c.secret));
  assert.ok(!JSON.stringify(row).includes(c.secret));
});

test('create: a malformed svc: token is skipped and logged, never fatal (rule 5); past 64 svc: tokens the credential is refused', async () => {
  const logged: string[] = [];
  const reg = new CredentialRegistry(new MemoryCredentialStore(), { log: (m) => logged.push(m) });
  const c = await reg.create('svc:read:b:* svc:bogus:b:* svc:read:ta:s1\u2003svc:admin', 'typo');
  assert.equal(c.scope, 'svc:read:b:* svc:bogus:b:* svc:read:ta:s1\u2003svc:admin', 'stored as asked');
  assert.equal(logged.length, 2, logged.join('\n'));
  assert.match(logged[0], /credential typo: scope token 'svc:bogus:b:\*' grants nothing/);
  const { scope } = await reg.verifySecret('typo', c.secret);
  assert.deepEqual(scope.grants.map((g) => `${g.action}:${g.bucket.value}`), ['read:b'], 'only the well-formed grant');
  assert.equal(scope.admin, false, 'a marker glued on with U+2003 is part of a malformed token: never admin');
  const big = Array.from({ length: 65 }, (_, i) => `svc:read:b${i}:*`).join(' ');
  await assert.rejects(reg.create(big), code('invalid_argument'));
});

test('key id collisions are retried', async () => {
  const seq = [new Uint8Array(8), new Uint8Array(8), Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8])];
  let i = 0;
  const reg = new CredentialRegistry(new MemoryCredentialStore(), {
    randomBytes: (n) => (n === 8 ? seq[Math.min(i++, 2)] : new Uint8Array(n).fill(7)),
  });
  assert.equal((await reg.create('svc:admin')).key_id, 'ck_0000000000000000');
  assert.equal((await reg.create('svc:admin')).key_id, 'ck_0102030405060708');
});

test('create with a given key id: registered as given, validated, duplicates AlreadyExists', async () => {
  const store = new MemoryCredentialStore();
  const reg = new CredentialRegistry(store);
  for (const id of ['ops-ci', 'ck_0123456789abcdef', 'A.b_c-9', 'x', 'k'.repeat(128)]) {
    const c = await reg.create('svc:read:b:*', id);
    assert.equal(c.key_id, id);
    assert.equal((await reg.verifySecret(id, c.secret)).row.key_id, id);
  }
  for (const bad of ['k'.repeat(129), 'has space', 'a:b', 'a/b', 'é', 'tab\t', 'new\nline', '*']) {
    await assert.rejects(reg.create('svc:admin', bad), code('invalid_argument'), JSON.stringify(bad));
    assert.equal(await store.get(bad), undefined);
  }
  const before = await store.get('ops-ci');
  const dup = await reg.create('svc:admin', 'ops-ci').catch((e: unknown) => e);
  assert.ok(dup instanceof ServiceError && dup.code === 'already_exists' && httpStatusOf(dup.code) === 409);
  assert.deepEqual(await store.get('ops-ci'), before, 'the existing row is untouched');
  // A revoked row still holds its id: re-creating it would silently un-revoke.
  await reg.revoke('x');
  await assert.rejects(reg.create('svc:admin', 'x'), code('already_exists'));
  // Concurrent creates of one id: exactly one wins.
  const race = await Promise.allSettled(Array.from({ length: 4 }, () => reg.create('svc:admin', 'raced')));
  assert.equal(race.filter((r) => r.status === 'fulfilled').length, 1);
  for (const r of race) if (r.status === 'rejected') assert.ok(code('already_exists')(r.reason));
  // A bad key id is refused, and '' still generates.
  await assert.rejects(reg.create('svc:admin', 'not valid'), code('invalid_argument'));
  assert.match((await reg.create('svc:admin', '')).key_id, /^ck_[0-9a-f]{16}$/);
});

test('list: no secrets or hashes, paged in key id order', async () => {
  const reg = new CredentialRegistry(new MemoryCredentialStore());
  const made = await Promise.all(Array.from({ length: 5 }, () => reg.create('svc:admin')));
  const ids = made.map((c) => c.key_id).sort();
  const p1 = await reg.list('', 2);
  assert.deepEqual(p1.items.map((i) => i.key_id), ids.slice(0, 2));
  assert.equal(p1.next, ids[1]);
  const p3 = await reg.list(ids[3], 2);
  assert.deepEqual(p3.items.map((i) => i.key_id), ids.slice(4));
  assert.equal(p3.next, '');
  for (const item of p1.items) {
    assert.ok(!('secret_hash' in item));
    assert.ok(!('secret' in item));
  }
});

test('verifySecret: unknown and wrong are the same 401, revoked is 403 only with the right secret', async () => {
  const reg = new CredentialRegistry(new MemoryCredentialStore(), { now: () => 7 });
  const c = await reg.create('svc:read:b:* svc:admin');
  const ok = await reg.verifySecret(c.key_id, c.secret);
  assert.equal(ok.scope.admin, true);
  assert.equal(ok.scope.grants.length, 1);
  const wrong = await reg.verifySecret(c.key_id, 'nope').catch((e: unknown) => e);
  const unknown = await reg.verifySecret('ck_ffffffffffffffff', c.secret).catch((e: unknown) => e);
  assert.ok(wrong instanceof ServiceError && unknown instanceof ServiceError);
  assert.equal(wrong.code, 'unauthenticated');
  assert.equal(unknown.code, 'unauthenticated');
  assert.equal(wrong.message, unknown.message);
  const revoked = await reg.revoke(c.key_id);
  assert.equal(revoked.state, 'revoked');
  assert.equal(revoked.revoked_at_unix_ms, 7);
  assert.equal((await reg.revoke(c.key_id)).state, 'revoked'); // idempotent
  await assert.rejects(reg.verifySecret(c.key_id, c.secret), code('permission_denied'));
  await assert.rejects(reg.verifySecret(c.key_id, 'nope'), code('unauthenticated'));
  await assert.rejects(reg.revoke('ck_missing'), code('not_found'));
});

test('root seed converges: created when absent, hash and scope overwritten when drifted', async () => {
  const store = new MemoryCredentialStore();
  const logged: string[] = [];
  const reg = new CredentialRegistry(store, { now: () => 1, log: (m) => logged.push(m) });
  const seed = { key_id: 'root', secret_hash: hashSecret('s1'), scope: 'svc:admin' };
  assert.equal(await reg.convergeRootSeed(seed), 'created');
  assert.equal(await reg.convergeRootSeed(seed), 'unchanged');
  assert.equal((await reg.verifySecret('root', 's1')).scope.admin, true);
  assert.equal(await reg.convergeRootSeed({ ...seed, secret_hash: hashSecret('s2').toUpperCase() }), 'updated');
  await assert.rejects(reg.verifySecret('root', 's1'), code('unauthenticated'));
  assert.equal((await reg.verifySecret('root', 's2')).row.created_at_unix_ms, 1);
  assert.equal(await reg.convergeRootSeed({ ...seed, secret_hash: hashSecret('s2'), scope: 'svc:admin svc:node' }), 'updated');
  assert.equal((await reg.verifySecret('root', 's2')).scope.node, true);
  // A revoke survives restarts.
  await reg.revoke('root');
  assert.deepEqual(logged, []);
  await reg.convergeRootSeed({ ...seed, secret_hash: hashSecret('s2'), scope: 'svc:admin' });
  assert.equal((await store.get('root'))?.state, 'revoked');
  // … and each start says so.
  assert.equal(logged.length, 1);
  assert.match(logged[0], /root seed root names a revoked credential: it stays revoked/);
});

test('a root seed under a new key id rotates: the previous seed is revoked, not a credential made otherwise, and an older seed coming back revokes nothing', async () => {
  const store = new MemoryCredentialStore();
  let now = 1000;
  const logged: string[] = [];
  const reg = new CredentialRegistry(store, { now: () => now, log: (m) => logged.push(m) });
  const old = { key_id: 'root-a', secret_hash: hashSecret('old secret'), scope: 'svc:admin' };
  assert.equal(await reg.convergeRootSeed(old), 'created');
  const other = await reg.create('svc:read:b:*');
  now += 1;
  const rotated = { key_id: 'root-b', secret_hash: hashSecret('new secret'), scope: 'svc:admin' };
  assert.equal(await reg.convergeRootSeed(rotated), 'created');
  await assert.rejects(reg.verifySecret('root-a', 'old secret'), code('permission_denied'));
  assert.equal((await reg.verifySecret('root-b', 'new secret')).scope.admin, true);
  assert.equal((await store.get(other.key_id))?.state, 'active', 'a credential no seed made is kept');
  assert.match(logged.join('\n'), /root seed rotated to root-b; the previous seed root-a is revoked/);
  // A star restarted with the previous seed (a rolling change under way) leaves the new one alone.
  now += 1;
  await reg.convergeRootSeed(old);
  assert.equal((await store.get('root-b'))?.state, 'active');
  assert.equal((await store.get('root-a'))?.state, 'revoked');
  // Listings never show the seed marker.
  assert.ok((await reg.list()).items.every((r) => !('seeded_at_unix_ms' in r)));
});

test('a seed row from before the mark: a newer seed leaves it, and a star started with it never revokes the newer one', async () => {
  const store = new MemoryCredentialStore();
  let now = 5000;
  const reg = new CredentialRegistry(store, { now: () => now, log: () => {} });
  // The old seed's row, written by a build that did not mark seeds.
  await store.put({ key_id: 'root-old', secret_hash: hashSecret('old secret'), scope: 'svc:admin', state: 'active', created_at_unix_ms: 1000 });
  now += 1;
  await reg.convergeRootSeed({ key_id: 'root-new', secret_hash: hashSecret('new secret'), scope: 'svc:admin' });
  assert.equal((await store.get('root-old'))?.state, 'active', 'unmarked: left as it is');
  now += 1;
  await reg.convergeRootSeed({ key_id: 'root-old', secret_hash: hashSecret('old secret'), scope: 'svc:admin' });
  assert.equal((await store.get('root-new'))?.state, 'active', 'the old seed, dated by its creation, is older');
  now += 1;
  await reg.convergeRootSeed({ key_id: 'root-new', secret_hash: hashSecret('new secret'), scope: 'svc:admin' });
  assert.equal((await store.get('root-old'))?.state, 'revoked', 'now marked, the old seed goes at the new one\'s next start');
});
