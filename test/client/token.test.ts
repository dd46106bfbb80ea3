// Tokens against a real star under jwt auth: the api-key exchange, the token source refreshing before
// exp (a test clock decides "now"; the star decides validity), the 401-then-refresh retry, a
// subscription that outlives its token (auth-expired, refreshed, resumed with no gap), and the
// credential verbs of the admin plane over gRPC.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ExchangeTokenSource, SvcClient, SvcError, type SubscriptionEvent } from '../../src/client/index.ts';
import { GrpcClient } from '../../src/client/grpc/index.ts';
import { Star, text, uniq, waitFor } from './kit.ts';

const ROOT = { keyId: 'ck_root', secret: 'root-secret-for-the-client-tests-0123456789' };
let star: Star;
let anon: SvcClient;
let admin: SvcClient;
let adminToken: string;

before(async () => {
  star = await Star.start({
    grpc: true,
    args: ['--auth', 'jwt', '--insecure-auth', '--root-key-id', ROOT.keyId],
    env: { SVCD_JWT_HMAC_SECRET: 'a-test-secret-of-at-least-32-bytes!!', SVCD_ROOT_SECRET: ROOT.secret },
  });
  anon = new SvcClient({ url: star.url });
  adminToken = (await anon.exchangeToken({ ...ROOT, scope: 'svc:admin' })).token;
  admin = new SvcClient({ url: star.url, token: adminToken });
});
after(async () => { await star.stop(); });

async function refused(p: Promise<unknown>, kind: string, status: number): Promise<void> {
  await assert.rejects(p, (err: unknown) => err instanceof SvcError && err.kind === kind && err.status === status);
}

test('exchange: a token opens the data plane; no token is 401, a wrong secret is 401', async () => {
  const bucket = uniq('b');
  await refused(anon.createBucket({ bucket }), 'unauthenticated', 401);
  await admin.createBucket({ bucket });
  await refused(anon.exchangeToken({ keyId: ROOT.keyId, secret: 'wrong', scope: 'svc:admin' }), 'unauthenticated', 401);
  const t = await anon.exchangeToken({ ...ROOT, bucket, ttlSeconds: 60 });
  assert.ok(t.expires_at_unix_ms > Date.now());
  const narrowed = new SvcClient({ url: star.url, token: t.token });
  await narrowed.createStream({ bucket, key: 'k' });
  await refused(narrowed.listBuckets(), 'permission_denied', 403);
});

test('the token source hands out its token until refreshBeforeExpMs before exp, then exchanges again (one exchange for concurrent callers)', async () => {
  let now = Date.now();
  const src = new ExchangeTokenSource(anon, { ...ROOT, scope: 'svc:admin', ttlSeconds: 600, refreshBeforeExpMs: 60_000, now: () => now });
  const first = await src.token();
  assert.equal(src.exchanges, 1);
  const exp = src.expiresAtMs!;
  now = exp - 60_000 - 1;
  assert.equal(await src.token(), first, 'still cached just before the refresh point');
  assert.equal(src.exchanges, 1);
  now = exp - 60_000 + 1;
  const tokens = await Promise.all([src.token(), src.token(), src.token()]);
  assert.equal(src.exchanges, 2, 'refreshed once, before exp, for three concurrent callers');
  assert.ok(tokens.every((x) => x === tokens[0]));
  const c = new SvcClient({ url: star.url, token: src.provider });
  await c.listBuckets();
});

test('a 401 makes the client ask its provider for a fresh token and retry once', async () => {
  const asked: boolean[] = [];
  const c = new SvcClient({ url: star.url, token: ({ refresh }) => { asked.push(refresh); return refresh ? adminToken : 'not-a-jwt'; } });
  await c.listBuckets();
  assert.deepEqual(asked, [false, true]);
});

test('a subscription outliving its token: auth-expired, a refreshed token, resumed with no gap or repeat', async () => {
  const bucket = uniq('b');
  const a = { bucket, key: 'k' };
  await admin.createBucket({ bucket });
  await admin.createStream(a);
  const src = new ExchangeTokenSource(anon, { ...ROOT, scope: 'svc:admin', ttlSeconds: 2 });
  const c = new SvcClient({ url: star.url, token: src.provider });
  const events: SubscriptionEvent[] = [];
  const seen: string[] = [];
  const sub = c.subscribe(a, { start: { seqNum: 0 }, onEvent: (e) => events.push(e) });
  const done = (async () => { for await (const b of sub) for (const r of b.records) seen.push(text(r.body)); })();
  done.catch(() => {});
  await admin.append(a, [{ body: 'r0' }, { body: 'r1' }]);
  await waitFor('the token expires under the subscription', () => events.some((e) => e.type === 'reconnecting' && e.reason === 'auth-expired'));
  await admin.append(a, [{ body: 'r2' }, { body: 'r3' }]);
  await waitFor('delivered after the refresh', () => seen.length >= 4);
  sub.close();
  await done;
  assert.deepEqual(seen, ['r0', 'r1', 'r2', 'r3']);
  assert.ok(src.exchanges >= 2, `a fresh token was exchanged (${src.exchanges} exchanges)`);
});

test('credentials over gRPC: create (secret once), list, exchange with it, revoke (then the exchange is 403)', async () => {
  const g = new GrpcClient({ address: star.grpcAddress!, token: adminToken });
  try {
    const keyId = uniq('ck');
    const made = await g.createCredential({ keyId, scope: 'svc:read:*:*' });
    assert.equal(made.credential.key_id, keyId);
    assert.equal(made.credential.state, 'active');
    assert.ok(made.secret.length > 0);
    const listed = [];
    for await (const cr of g.credentials()) listed.push(cr);
    assert.ok(listed.some((cr) => cr.key_id === keyId && cr.scope === 'svc:read:*:*'));
    await anon.exchangeToken({ keyId, secret: made.secret, scope: 'svc:read:*:*' });
    await g.revokeCredential(keyId);
    await refused(anon.exchangeToken({ keyId, secret: made.secret, scope: 'svc:read:*:*' }), 'permission_denied', 403);
    const noAdmin = new GrpcClient({ address: star.grpcAddress! });
    await assert.rejects(noAdmin.createCredential({ scope: 'svc:admin' }), (err: unknown) => err instanceof SvcError && err.kind === 'unauthenticated' && err.grpcStatus === 16);
    noAdmin.close();
  } finally {
    g.close();
  }
});
