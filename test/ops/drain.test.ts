// A star stopped with SIGTERM, on each HTTP engine, with work on its way: an append waiting on its
// stream's throughput limit is answered (200) and its record is there after a restart; an open event
// stream ends cleanly (the chunked body is terminated, spec: Events rule 5 "the stream simply ends");
// a Durable Streams long-poll waiting at the tail is answered 204 as at its timeout; the process
// exits 0. The node engine used to cut every connection at once, so an append it then committed
// was answered with a hang-up (the client sees a failure for a durable record, and a retry
// duplicates it).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT, removeDir, startServer, tempDir, waitForOutput, type Engine } from '../helpers/server.ts';

/** Throughput limit of the slow stream: an append of SLOW_APPEND_BYTES waits about 4 s for its turn,
 *  so SIGTERM has a wide window to land in while it waits, and the drain (at most
 *  SHUTDOWN_REQUESTS_WAIT_MS_MAX, 5 s) still outlasts the wait. */
const SLOW_BYTES_PER_S = 1000;
const SLOW_APPEND_BYTES = 4000;

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
        let slowAnswered = false;
        const slow = fetch(`${url}/v1/streams/d/slow/records`, { method: 'POST', body: JSON.stringify({ records: [{ body: 'b'.repeat(SLOW_APPEND_BYTES) }] }) })
          .then(async (r) => `${r.status} connection=${r.headers.get('connection') ?? ''} ${await r.text()}`, (err: unknown) => `no answer: ${String(err)}`)
          .finally(() => { slowAnswered = true; });
        // Everything is under way: the frame has arrived and the slow append is waiting for its turn
        // (300 ms for its request to reach the star; it then waits about 4 s).
        while (!streamed.includes('"one"')) await new Promise((r) => setTimeout(r, 20));
        await new Promise((r) => setTimeout(r, 300));
        assert.equal(slowAnswered, false, `the slow append was answered before the drain began: ${await (slowAnswered ? slow : '')}`);

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

/** Lines piped through `svc append` while its star is stopped and started again under it. */
const PRODUCER_LINES = 100_000;
/** The star's port is picked from here: below Linux's ephemeral range (32768 and up). */
const LOW_PORT_MIN = 20_000;
const LOW_PORT_SPAN = 10_000;
/** A run of the CLI that takes longer than this is stuck (a bound, not an expectation). */
const PRODUCER_RUN_MS_MAX = 120_000;

for (const engine of ['uws', 'node'] as Engine[]) {
  test(`a producer rides out a graceful restart of its star (${engine}): every line appended once, exit 0`, { timeout: 180_000 }, async () => {
    // A port below the ephemeral range: the producer's reconnects to a port of that range with
    // nothing listening can be given that very port as their own (a TCP self-connect), and the
    // restarted star then finds it in use.
    const dataDir = tempDir('svcd-drain-');
    const port = LOW_PORT_MIN + Math.floor(Math.random() * LOW_PORT_SPAN);
    let star = await startServer({ engine, dataDir, args: ['--listen', `127.0.0.1:${port}`] });
    try {
      assert.equal((await fetch(`${star.baseUrl}/v1/buckets/p`, { method: 'POST', body: '{"create_stream_on_append":true}' })).status, 201);
      const cli = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'svc.mjs'), 'append', 'svc://p/s', '--batch-records-max', '50'], {
        cwd: REPO_ROOT, env: { ...process.env, SVC_URL: star.baseUrl }, stdio: ['pipe', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      cli.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
      cli.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
      const timer = setTimeout(() => cli.kill('SIGKILL'), PRODUCER_RUN_MS_MAX);
      const exited = new Promise<number>((resolve) => cli.on('close', (code) => resolve(code ?? -1)));
      cli.stdin!.on('error', () => {});
      cli.stdin!.end(`${Array.from({ length: PRODUCER_LINES }, (_, i) => `line ${i}`).join('\n')}\n`);
      // Stopped while the producer is in full flow (a fifth of the lines in), started again on the same port.
      for (;;) {
        const tail = await fetch(`${star.baseUrl}/v1/streams/p/s/records/tail`).then((r) => (r.ok ? r.json() as Promise<{ seq_num: number }> : { seq_num: 0 }));
        if (tail.seq_num >= PRODUCER_LINES / 5) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      await star.stop();
      star = await startServer({ engine, dataDir, args: ['--listen', `127.0.0.1:${port}`] });
      const code = await exited;
      clearTimeout(timer);
      assert.equal(code, 0, `svc append: exit ${code}\n${err}`);
      assert.match(out, new RegExp(`appended ${PRODUCER_LINES} records at 0\\.\\.${PRODUCER_LINES - 1}`));
      const tail = await (await fetch(`${star.baseUrl}/v1/streams/p/s/records/tail`)).json() as { seq_num: number };
      assert.equal(tail.seq_num, PRODUCER_LINES, 'every line once: none lost, none twice');
    } finally {
      await star.stop();
      removeDir(dataDir);
    }
  });
}
