// The two modes without per-tenant identity, over loopback on both engines: `off` trusts everyone
// (credentials are ignored, the exchange is 501), `basic` admits the operator login and nothing else.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, assertStatus, request, startStar, streamPath, type Res, type Star } from './kit.ts';

const USER = 'operator';
const PASSWORD = 'pa:ss word-with-a-colon';
const basic = (user: string, pass: string): string => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

for (const engine of ENGINES) {
  describe(`auth off and basic over HTTP (${engine})`, () => {
    let off: Star;
    let bas: Star;
    before(async () => {
      [off, bas] = await Promise.all([
        startStar({ engine }),
        startStar({
          engine, args: ['--auth', 'basic', '--insecure-auth', '--admin-username', USER], env: { SVCD_ADMIN_PASSWORD: PASSWORD },
        }),
      ]);
    });
    after(async () => { await Promise.all([off?.stop(), bas?.stop()]); });

    const get = (star: Star, path: string, authorization?: string): Promise<Res> =>
      request(star.baseUrl, 'GET', path, { headers: authorization === undefined ? {} : { authorization } });

    test('off: every caller is trusted, whatever it sends', async () => {
      assertStatus(await get(off, '/v1/buckets'), 200, 'no header');
      for (const h of ['Bearer garbage', 'Basic !!!', 'nonsense', basic('x', 'y')]) assertStatus(await get(off, '/v1/buckets', h), 200, `header ${h}`);
      assertStatus(await request(off.baseUrl, 'POST', '/v1/buckets/b-off', { body: {} }), 201, 'create bucket');
      assertStatus(await request(off.baseUrl, 'POST', streamPath('b-off', 's'), { body: {} }), 201, 'create stream');
      assertStatus(await request(off.baseUrl, 'POST', `${streamPath('b-off', 's')}/records`, { body: { records: [{ body: 'x' }] } }), 200, 'append');
      assertStatus(await get(off, `${streamPath('b-off', 'missing')}/records?seq_num=0`), 404, 'a missing stream is plainly 404');
    });

    test('off: the exchange is 501', async () => {
      assertStatus(await request(off.baseUrl, 'POST', '/v1/token/exchange', { body: { key_id: 'a', secret: 'b', bucket: 'c' } }), 501, 'exchange');
    });

    test('basic: the operator login passes every check', async () => {
      const op = basic(USER, PASSWORD);
      assertStatus(await get(bas, '/v1/buckets', op), 200, 'ListBuckets');
      assertStatus(await get(bas, '/v1/buckets', op.replace('Basic', 'basic')), 200, 'scheme case-insensitive');
      assertStatus(await request(bas.baseUrl, 'POST', '/v1/buckets/b-basic', { body: {}, headers: { authorization: op } }), 201, 'create bucket');
      assertStatus(await request(bas.baseUrl, 'POST', streamPath('b-basic', 's'), { body: {}, headers: { authorization: op } }), 201, 'create stream');
      assertStatus(await request(bas.baseUrl, 'POST', `${streamPath('b-basic', 's')}/records`, { body: { records: [{ body: 'x' }] }, headers: { authorization: op } }), 200, 'append');
    });

    test('basic: anything but the exact login is 401', async () => {
      const cases: [string, string | undefined][] = [
        ['no header', undefined],
        ['wrong password', basic(USER, 'wrong')],
        ['password prefix', basic(USER, PASSWORD.slice(0, -1))],
        ['wrong user', basic('root', PASSWORD)],
        ['empty login', basic('', '')],
        ['no colon', `Basic ${Buffer.from(USER + PASSWORD).toString('base64')}`],
        ['not base64', 'Basic !!!not*base64'],
        ['scheme only', 'Basic'],
        ['Bearer scheme', 'Bearer abc.def.ghi'],
        ['raw user:pass', `Basic ${USER}:${PASSWORD}`],
        ['trailing junk', `${basic(USER, PASSWORD)} extra`],
        ['huge', `Basic ${'QUFB'.repeat(1000)}`],
      ];
      for (const [what, h] of cases) assertStatus(await get(bas, '/v1/buckets', h), 401, what);
      const q = `?username=${USER}&password=${encodeURIComponent(PASSWORD)}&authorization=${encodeURIComponent(basic(USER, PASSWORD))}`;
      assertStatus(await get(bas, `/v1/buckets${q}`), 401, 'credentials in the query');
      assertStatus(await get(bas, '/healthz'), 200, 'healthz stays open');
    });

    test('basic: the exchange is 501', async () => {
      const res = await request(bas.baseUrl, 'POST', '/v1/token/exchange', { body: { key_id: USER, secret: PASSWORD, bucket: 'c' } });
      assertStatus(res, 501, 'exchange');
      assert.ok(!res.text.includes(PASSWORD));
    });
  });
}
