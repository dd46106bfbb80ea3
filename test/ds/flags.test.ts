// The DS surface's flags and auth: --ds-enabled false removes /ds; --ds-bucket picks the svcd bucket
// the streams live in (made at first use); with auth on, DS requests need the data plane's credentials.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, removeDir, startServer } from '../helpers/server.ts';

const PASSWORD = 'ds-flags-test-password';

for (const engine of ENGINES) {
  test(`--ds-enabled false removes /ds (${engine})`, async () => {
    const star = await startServer({ engine, args: ['--ds-enabled', 'false'] });
    try {
      const res = await fetch(`${star.baseUrl}/ds/v1/stream/x`, { method: 'PUT', headers: { 'Content-Type': 'text/plain' } });
      await res.arrayBuffer();
      assert.equal(res.status, 404);
    } finally {
      await star.stop();
      removeDir(star.dataDir);
    }
  });

  test(`--ds-bucket holds the streams, and DS needs credentials when auth is on (${engine})`, async () => {
    const star = await startServer({
      engine, args: ['--ds-bucket', 'dsb', '--auth', 'basic', '--insecure-auth', '--admin-username', 'op'], env: { SVCD_ADMIN_PASSWORD: PASSWORD },
    });
    const auth = { Authorization: `Basic ${Buffer.from(`op:${PASSWORD}`).toString('base64')}` };
    try {
      const anon = await fetch(`${star.baseUrl}/ds/v1/stream/s`, { method: 'PUT', headers: { 'Content-Type': 'text/plain' }, body: 'x' });
      await anon.arrayBuffer();
      assert.equal(anon.status, 401);
      const made = await fetch(`${star.baseUrl}/ds/v1/stream/s`, { method: 'PUT', headers: { 'Content-Type': 'text/plain', ...auth }, body: 'x' });
      await made.arrayBuffer();
      assert.equal(made.status, 201);
      const read = await fetch(`${star.baseUrl}/v1/streams/dsb/s/records?seq_num=0`, { headers: auth });
      const page = await read.json() as { records: { body?: string }[] };
      assert.equal(read.status, 200);
      assert.deepEqual(page.records.map((r) => r.body), ['', 'x'], 'the meta record, then the message');
    } finally {
      await star.stop();
      removeDir(star.dataDir);
    }
  });
}
