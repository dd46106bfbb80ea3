// @durable-streams/client as a real client of a real star: create, append (plain and through an
// IdempotentProducer), read back, and a live long-poll follower that keeps following across a star
// restart (same data dir, same port) and sees what was appended after it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DurableStream, IdempotentProducer } from '@durable-streams/client';
import { removeDir, startServer } from '../helpers/server.ts';
import { call } from '../grpc/client.ts';
import { startGrpcChild } from '../grpc/child.ts';
import { freeLowPort } from './ports.ts';

/** The follower's reconnects while the star is down: quick and without a retry cap (the test's own
 *  timeout is the bound). */
const BACKOFF = { initialDelay: 50, maxDelay: 500, multiplier: 2, maxRetries: Number.POSITIVE_INFINITY };
const TEST_TIMEOUT_MS = 120_000;

test('DS client: append, read, idempotent producer and live follow across a restart', { timeout: TEST_TIMEOUT_MS }, async () => {
  const port = await freeLowPort();
  let star = await startServer({ engine: 'uws', args: ['--listen', `127.0.0.1:${port}`] });
  const url = `${star.baseUrl}/ds/v1/stream/client-follow`;
  try {
    const handle = await DurableStream.create({ url, contentType: 'text/plain' });
    await handle.append('a');
    await handle.append('b');
    const producer = new IdempotentProducer(handle, 'client-test-producer', { epoch: 0 });
    producer.append('c');
    producer.append('d');
    await producer.flush();
    await producer.detach();
    const first = await handle.stream({ live: false });
    assert.equal(await first.text(), 'abcd');

    // The follower: long-poll from the current tail; it collects text until it has seen 'ef'.
    const seen: string[] = [];
    let resolveSeen: () => void = () => {};
    const gotAll = new Promise<void>((resolve) => { resolveSeen = resolve; });
    const follower = new DurableStream({ url, backoffOptions: BACKOFF });
    const live = await follower.stream({ live: 'long-poll', offset: first.offset, onError: () => ({}) });
    const unsubscribe = live.subscribeText((chunk) => {
      if (chunk.text.length > 0) seen.push(chunk.text);
      if (seen.join('') === 'ef') resolveSeen();
    });

    await handle.append('e');
    await star.stop();
    star = await startServer({ engine: 'uws', dataDir: star.dataDir, args: ['--listen', `127.0.0.1:${port}`] });
    // After the restart the stream is rebuilt from its records: the producer's state too, so a retry
    // of an acknowledged (epoch, seq) is a duplicate and appends nothing.
    const retry = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'text/plain', 'Producer-Id': 'client-test-producer', 'Producer-Epoch': '0', 'Producer-Seq': '0' }, body: 'c' });
    assert.equal(retry.status, 204);
    await new DurableStream({ url }).append('f');
    await gotAll;
    unsubscribe();
    live.cancel();
    assert.equal(seen.join(''), 'ef');
    const all = await new DurableStream({ url }).stream({ live: false });
    assert.equal(await all.text(), 'abcdef');
  } finally {
    await star.stop();
    removeDir(star.dataDir);
  }
});

test('DS client: one catch-up request (live: false) returns every committed message, across the settled frontier', { timeout: TEST_TIMEOUT_MS }, async () => {
  // Nothing settles unless SettleStar asks, so the frontier falls exactly between 'abc' and 'de'. A
  // svcd read stops there (a page never spans it); a DS page must not, or a client that asks once
  // (the reference client's live: false) misses 'de'. The restart test above read 'abcde' of 'abcdef'
  // that way about one run in four, whenever settling finished between its append and its read.
  const c = await startGrpcChild({ args: ['--wal-settle-after-ms', '3600000'] });
  try {
    const url = `${c.server.baseUrl}/ds/v1/stream/frontier`;
    const handle = await DurableStream.create({ url, contentType: 'text/plain' });
    for (const m of ['a', 'b', 'c']) await handle.append(m);
    await call(c.data.SettleStar.bind(c.data), {});
    for (const m of ['d', 'e']) await handle.append(m);
    const raw = await fetch(`${url}?offset=-1`);
    assert.equal(await raw.text(), 'abcde');
    assert.equal(raw.headers.get('stream-up-to-date'), 'true');
    const once = await new DurableStream({ url }).stream({ live: false });
    assert.equal(await once.text(), 'abcde');
  } finally {
    await c.stop();
  }
});
