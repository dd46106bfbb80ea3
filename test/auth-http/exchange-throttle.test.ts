// The api-key exchange under a guessing attack, over HTTP on both engines against a real star
// (issue 18: one connection tried 123,835 wrong secrets in 10 s): after a burst of failures the key
// id is answered 429 with Retry-After and the spec's error envelope, the right secret included (a
// guess can no longer be confirmed), while other key ids keep exchanging; the allowance refills.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openCredentialRegistry } from '../../src/cli/credentials.ts';
import { EXCHANGE_FAILURES_PER_KEY_ID_BURST, EXCHANGE_FAILURES_PER_KEY_ID_PER_S } from '../../src/config/limits.ts';
import { ENGINES, assertStatus, removeDir, request, startStar, tempDir, type Res, type Star } from './kit.ts';

const SECRET = 'exchange-throttle-secret-0123456789abcdef';
const ROOT = { key_id: 'root', secret: 'root-secret-for-the-throttle-suite-0123' };
const EXCHANGE = '/v1/token/exchange';

for (const engine of ENGINES) {
  describe(`exchange throttle over HTTP (${engine})`, () => {
    let star: Star;
    let dataDir: string;
    let other: { key_id: string; secret: string } = { key_id: '', secret: '' };
    const exchange = (body: unknown): Promise<Res> => request(star.baseUrl, 'POST', EXCHANGE, { body });

    before(async () => {
      dataDir = tempDir('svcd-exchange-throttle-');
      const reg = await openCredentialRegistry(dataDir);
      const created = await reg.registry.create('svc:read:logs:*');
      other = { key_id: created.key_id, secret: created.secret };
      await reg.close();
      star = await startStar({
        engine, dataDir, args: ['--auth', 'jwt', '--insecure-auth', '--root-key-id', ROOT.key_id],
        env: { SVCD_JWT_HMAC_SECRET: SECRET, SVCD_ROOT_SECRET: ROOT.secret },
      });
    });
    after(async () => {
      await star?.stop();
      removeDir(dataDir);
    });

    test('wrong secrets against the root key id: 401s, then 429 + Retry-After for every ask, then through again', async () => {
      // The allowance refills from the first guess on, through the burst too.
      const startedMs = Date.now();
      for (let i = 0; i < EXCHANGE_FAILURES_PER_KEY_ID_BURST; i++) {
        assertStatus(await exchange({ key_id: ROOT.key_id, secret: `guess-${i}`, scope: 'svc:admin' }), 401, `guess ${i}`);
      }
      // Many more guesses: refused without being checked, but for the one the allowance regains each
      // second (a loaded machine may take more than a second over them).
      let checked = 0;
      for (let i = 0; i < 50; i++) {
        const r = await exchange({ key_id: ROOT.key_id, secret: `more-${i}`, scope: 'svc:admin' });
        if (r.status === 401) { checked += 1; continue; }
        assertStatus(r, 429, `guess past the burst ${i}`);
        assert.equal(r.headers['retry-after'], '1');
      }
      const regained = Math.ceil(((Date.now() - startedMs) / 1000) * EXCHANGE_FAILURES_PER_KEY_ID_PER_S);
      assert.ok(checked <= regained, `${checked} guesses past the burst were checked; the allowance regained ${regained}`);
      // Spend whatever was regained since, then the right secret: refused while throttled.
      for (let i = 0; i < 5 && (await exchange({ key_id: ROOT.key_id, secret: `spend-${i}`, scope: 'svc:admin' })).status !== 429; i++);
      const right = await exchange({ ...ROOT, scope: 'svc:admin' });
      assertStatus(right, 429, 'the right secret while throttled');
      assert.match(right.body.error, /too many failed token exchanges from this key id; retry in 1 s/);
      assertStatus(await exchange({ ...other, bucket: 'logs' }), 200, 'another key id is not throttled');
      // Retry-After says one second; the allowance refills at EXCHANGE_FAILURES_PER_KEY_ID_PER_S.
      await new Promise((r) => setTimeout(r, Math.ceil(1000 / EXCHANGE_FAILURES_PER_KEY_ID_PER_S) + 100));
      assertStatus(await exchange({ ...ROOT, scope: 'svc:admin' }), 200, 'the holder of the secret, once Retry-After passed');
    });
  });
}
