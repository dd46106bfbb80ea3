// /ds reads at the edges of a position: an offset whose <sub> is not 0 names no position svcd hands
// out, so it is 400 (it was read as <sub> 0); and an SSE read from below the trim watermark is 410
// before the stream begins, as a long-poll's is (it was a 200 that ended at once with an error
// event). Both from the SSE/DS black-box audit of stop 37.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES, removeDir, startServer } from '../helpers/server.ts';

/** A liveness bound on each read, never a measure of speed. */
const READ_WAIT_MS_MAX = 10_000;

for (const engine of ENGINES) {
  test(`/ds: an offset with a non-zero <sub> is 400; SSE from below the trim watermark is 410, as a long-poll is (${engine})`, async () => {
    const star = await startServer({ engine });
    const url = `${star.baseUrl}/ds/v1/stream/edges`;
    try {
      const made = await fetch(url, { method: 'PUT', headers: { 'Content-Type': 'text/plain' } });
      await made.arrayBuffer();
      assert.equal(made.status, 201);
      for (const body of ['m1', 'm2', 'm3']) {
        const r = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body });
        await r.arrayBuffer();
        assert.ok(r.status >= 200 && r.status < 300, `append: ${r.status}`);
      }

      const zero = await fetch(`${url}?offset=0000000000000001_0000000000000000`);
      assert.equal(await zero.text(), 'm1m2m3');
      for (const sub of ['0000000000000005', '9999999999999999']) {
        const r = await fetch(`${url}?offset=0000000000000001_${sub}`);
        await r.arrayBuffer();
        assert.equal(r.status, 400, `<sub> ${sub}`);
      }

      // Records 0 (the stream's meta record) to 2 trimmed, through the data plane.
      const trim = await fetch(`${star.baseUrl}/v1/streams/ds/edges/trim`, { method: 'POST', body: '{"seq_num":3}' });
      await trim.arrayBuffer();
      assert.ok(trim.status >= 200 && trim.status < 300, `trim: ${trim.status}`);
      for (const live of ['long-poll', 'sse']) {
        const r = await fetch(`${url}?offset=0000000000000001_0000000000000000&live=${live}`, { signal: AbortSignal.timeout(READ_WAIT_MS_MAX) });
        await r.body?.cancel();
        assert.equal(r.status, 410, live);
      }
    } finally {
      await star.stop();
      removeDir(star.dataDir);
    }
  });
}
