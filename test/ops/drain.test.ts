// A star stopped with SIGTERM, on each HTTP engine, with work on its way: an append waiting on its
// stream's throughput limit is answered (200) and its record is there after a restart; an open event
// stream ends cleanly (the chunked body is terminated, spec: Events rule 5 "the stream simply ends");
// a Durable Streams long-poll waiting at the tail is answered 204 as at its timeout; the process
// exits 0. The node engine used to cut every connection at once, so an append it then committed
// was answered with a hang-up (the client sees a failure for a durable record, and a retry
// duplicates it).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, startServer, waitForOutput, type Engine } from '../helpers/server.ts';

/** Throughput limit of the slow stream: an append of SLOW_APPEND_BYTES waits about 2 s for its turn. */
const SLOW_BYTES_PER_S = 1000;
const SLOW_APPEND_BYTES = 2000;

for (const engine of ['uws', 'node'] as Engine[]) {
  describe(`SIGTERM drains (${engine})`, () => {
    test('an append on its way is answered and kept; an event stream ends cleanly; a DS long-poll is answered; exit 0', { timeout: 60_000 }, async () => {
      const star = await startServer({ engine, args: ['--metrics-listen', '127.0.0.1:0'] });
      const url = star.baseUrl;
      const ops = `http://127.0.0.1:${(await waitForOutput(star, /svcd ops on http:\/\/127\.0\.0\.1:(\d+)/))[1]}`;
      assert.equal((await fetch(`${ops}/readyz`)).status, 200);
      try {
        assert.equal((await fetch(`${url}/v1/buckets/d`, { method: 'POST', body: '{"create_stream_on_append":true}' })).status, 201);
        assert.equal((await fetch(`${url}/v1/streams/d/slow`, { method: 'POST', body: JSON.stringify({ throughput_max_bytes_per_second: SLOW_BYTES_PER_S }) })).status, 201);
        // Spends the stream's budget, so the next append waits for its turn.
        const first = await fetch(`${url}/v1/streams/d/slow/records`, { method: 'POST', body: JSON.stringify({ records: [{ body: 'a'.repeat(SLOW_BYTES_PER_S) }] }) });
        assert.equal(first.status, 200, await first.text());
        assert.equal((await fetch(`${url}/v1/streams/d/live/records`, { method: 'POST', body: '{"records":[{"body":"one"}]}' })).status, 200);

        const sub = await fetch(`${url}/v1/streams/d/live/records/subscribe?seq_num=0`);
        assert.equal(sub.status, 200);
        const reader = sub.body!.getReader();
        let streamed = '';
        const streamEnd = (async (): Promise<string> => {
          for (;;) {
            const { value, done } = await reader.read(); // a cut stream throws here instead
            if (done) return 'ended';
            streamed += Buffer.from(value).toString();
          }
        })().catch((err: unknown) => `cut: ${String(err)}`);
        const dsPut = await fetch(`${url}/ds/v1/stream/lp`, { method: 'PUT', headers: { 'content-type': 'text/plain' } });
        assert.equal(dsPut.status, 201);
        const longPoll = fetch(`${url}/ds/v1/stream/lp?offset=now&live=long-poll`).then((r) => r.status, (err: unknown) => `no answer: ${String(err)}`);
        const slow = fetch(`${url}/v1/streams/d/slow/records`, { method: 'POST', body: JSON.stringify({ records: [{ body: 'b'.repeat(SLOW_APPEND_BYTES) }] }) })
          .then(async (r) => `${r.status} connection=${r.headers.get('connection') ?? ''} ${await r.text()}`, (err: unknown) => `no answer: ${String(err)}`);
        // Everything is under way: the frame has arrived and the slow append is waiting for its turn.
        while (!streamed.includes('"one"')) await new Promise((r) => setTimeout(r, 20));
        await new Promise((r) => setTimeout(r, 300));

        // While it drains (the slow append is still waiting), the ops listener says it is not ready.
        const stopped = star.stop();
        const readiness: (number | string)[] = [];
        for (;;) {
          const r = await fetch(`${ops}/readyz`).then((x) => x.status, () => 'refused');
          if (readiness.at(-1) !== r) readiness.push(r);
          if (r === 'refused' || readiness.length > 3) break;
          await new Promise((res) => setTimeout(res, 20));
        }
        await stopped;
        assert.ok(readiness.includes(503), `/readyz during the drain: ${readiness.join(' → ')}`);
        assert.equal(star.proc.exitCode, 0, star.output());
        // Answered during the drain with Connection: close, so the client sends its next request on a
        // new connection (refused: nothing sent) rather than into a star about to hang up.
        assert.match(await slow, /^200 connection=close /, 'the append on its way was answered, closing its connection');
        assert.equal(await streamEnd, 'ended', 'the event stream ended cleanly');
        assert.equal(await longPoll, 204, 'the long-poll was answered');

        const again = await startServer({ engine, dataDir: star.dataDir });
        try {
          const read = await fetch(`${again.baseUrl}/v1/streams/d/slow/records?seq_num=1`);
          assert.equal(read.status, 200);
          const bodies = ((await read.json()) as { records: { body: string }[] }).records.map((r) => r.body.length);
          assert.deepEqual(bodies, [SLOW_APPEND_BYTES], 'the acknowledged append is there after the restart');
        } finally {
          await again.stop();
        }
      } finally {
        await star.stop();
        removeDir(star.dataDir);
      }
    });
  });
}
