// Idempotent DS producers under SIGKILL: several producers append JSON messages with Producer-Id,
// epoch 0 and consecutive Producer-Seq; a request that fails (the star was killed under it) is retried
// with the same tuple and body until it is answered. The star is killed several times mid-load and
// restarted on the same data dir and port. At the end every producer's messages must be in the stream
// exactly once each, in order: an acknowledged append is never lost, and a retried one that had
// committed before the kill is recognised as a duplicate (its dedup state was durable with its data).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, startServer, tempDir, type RunningServer } from '../helpers/server.ts';
import { Rng, runSeed } from '../crash/crash-kit.ts';
import { freeLowPort } from './ports.ts';

const PRODUCERS = 4;
const CYCLES = 3;
/** Acks to wait for in each cycle before the kill (then a seeded pause of a few ms more). */
const ACKS_PER_CYCLE = 40;
/** Pause between retries of a failed request (the star is restarting). */
const RETRY_PAUSE_MS = 20;
/** Retries of one request before the producer gives up and the test fails (bounds a dead star). */
const RETRIES_MAX = 2000;
/** One request's own bound. */
const REQUEST_TIMEOUT_MS = 10_000;
const TEST_TIMEOUT_MS = 240_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Producer { id: string; acked: number; duplicates: number; error?: string }

async function runProducer(url: string, p: Producer, stop: () => boolean, onAck: () => void): Promise<void> {
  while (!stop()) {
    const seq = p.acked;
    const body = JSON.stringify({ p: p.id, s: seq });
    for (let attempt = 0; ; attempt++) {
      if (attempt >= RETRIES_MAX) { p.error = `seq ${seq}: no answer after ${RETRIES_MAX} tries`; return; }
      let status: number;
      try {
        const res = await fetch(url, {
          method: 'POST', body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          headers: { 'Content-Type': 'application/json', 'Producer-Id': p.id, 'Producer-Epoch': '0', 'Producer-Seq': String(seq) },
        });
        await res.arrayBuffer();
        status = res.status;
      } catch {
        await sleep(RETRY_PAUSE_MS);
        continue;
      }
      if (status === 200 || status === 204) {
        if (status === 204) p.duplicates++;
        p.acked++;
        onAck();
        break;
      }
      if (status === 503 || status === 429) { await sleep(RETRY_PAUSE_MS); continue; }
      p.error = `seq ${seq}: answered ${status}`;
      return;
    }
  }
}

async function readAllJson(url: string): Promise<{ p: string; s: number }[]> {
  const out: { p: string; s: number }[] = [];
  let offset = '-1';
  for (;;) {
    const res = await fetch(`${url}?offset=${offset}`);
    assert.equal(res.status, 200);
    out.push(...(await res.json() as { p: string; s: number }[]));
    offset = res.headers.get('stream-next-offset')!;
    if (res.headers.get('stream-up-to-date') === 'true') return out;
  }
}

test('DS idempotent producers under SIGKILL: nothing lost, nothing duplicated', { timeout: TEST_TIMEOUT_MS }, async (t) => {
  const seed = runSeed();
  t.diagnostic(`seed ${seed} (SVCD_CRASH_SEED=${seed} replays the kill pauses)`);
  const rng = new Rng(seed);
  const port = await freeLowPort();
  const dataDir = tempDir('svcd-ds-crash-');
  const args = ['--listen', `127.0.0.1:${port}`];
  let star: RunningServer = await startServer({ engine: 'uws', dataDir, args });
  const url = `${star.baseUrl}/ds/v1/stream/crash`;
  try {
    const created = await fetch(url, { method: 'PUT', headers: { 'Content-Type': 'application/json' } });
    assert.equal(created.status, 201);
    const producers: Producer[] = Array.from({ length: PRODUCERS }, (_, i) => ({ id: `p${i}`, acked: 0, duplicates: 0 }));
    let stopping = false;
    let acks = 0;
    let ackWaiter: { target: number; resolve: () => void } | undefined;
    const onAck = (): void => {
      acks++;
      if (ackWaiter && acks >= ackWaiter.target) { ackWaiter.resolve(); ackWaiter = undefined; }
    };
    const acksReach = (target: number): Promise<void> => (acks >= target ? Promise.resolve() : new Promise((resolve) => { ackWaiter = { target, resolve }; }));
    const running = producers.map((p) => runProducer(url, p, () => stopping, onAck));
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      await acksReach(acks + ACKS_PER_CYCLE);
      await sleep(rng.int(0, 50));
      await star.kill();
      star = await startServer({ engine: 'uws', dataDir, args });
    }
    await acksReach(acks + ACKS_PER_CYCLE);
    stopping = true;
    await Promise.all(running);
    for (const p of producers) assert.equal(p.error, undefined, `${p.id}: ${p.error}`);
    const messages = await readAllJson(url);
    for (const p of producers) {
      const mine = messages.filter((m) => m.p === p.id).map((m) => m.s);
      assert.deepEqual(mine, Array.from({ length: p.acked }, (_, i) => i), `${p.id}: every acked seq exactly once, in order`);
    }
    assert.equal(messages.length, producers.reduce((n, p) => n + p.acked, 0));
    t.diagnostic(`${messages.length} messages, ${producers.reduce((n, p) => n + p.duplicates, 0)} retries recognised as duplicates`);
  } finally {
    await star.stop();
    removeDir(dataDir);
  }
});
