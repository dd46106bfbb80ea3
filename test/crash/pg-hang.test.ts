// A PostgreSQL connection that stops answering without closing (a peer gone without FIN or RST, a
// black-holed route, a proxy that wedged) must not wedge a star. Its statements would wait forever:
// PostgreSQL's statement_timeout cannot fire for a statement the server never received, and the
// star runs its metadata statements one after another. A TCP proxy in this process stands between
// a real star (PostgreSQL metadata: a cluster of one) and the real PostgreSQL, and at one moment
// stops passing bytes on every connection it holds, keeping them open; new connections pass. The
// star must stop being ready while an answer is overdue, answer the append caught in it (503, never
// 500 or silence), give the dead connections up by itself and acknowledge again, losing nothing.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { POSTGRES_ANSWER_MS_MAX, POSTGRES_ANSWER_SLOW_MS } from '../../src/config/limits.ts';
import { dropSchema, freshSchema, postgresSkipReason, TEST_POSTGRES_URL } from '../helpers/postgres.ts';
import { Acks, ok, opsUrl, readyz, sleep, starBehindPostgresProxy, until, verifyAcks } from './fault-kit.ts';
import { TcpRelay } from '../helpers/tcp-relay.ts';
import { PostgresMetadataStore } from '../../src/storage/metadata/postgres-store.ts';
import { MetadataUnavailableError } from '../../src/storage/metadata/metadata-store.ts';

const pgSkip = await postgresSkipReason();

/** An append caught in the dead connection is answered within the driver's bound plus room for a
 *  loaded machine; past it the test fails instead of waiting (a bound on a hang, not a speed). */
const STUCK_ANSWER_MS_MAX = POSTGRES_ANSWER_MS_MAX + 30_000;
/** Readiness must drop once an answer is overdue (POSTGRES_ANSWER_SLOW_MS), well before the driver
 *  gives the statement up. */
const NOT_READY_WAIT_MS_MAX = POSTGRES_ANSWER_SLOW_MS + 15_000;
/** Wedges laid before an append must be caught: the star's pools hold a few connections each. */
const WEDGE_ROUNDS_MAX = 8;

/** An append with its own bound, answered whatever its status. */
async function append(baseUrl: string, body: string, boundMs: number): Promise<{ status: number; json: { start?: { seq_num: number }; error?: string } }> {
  const res = await fetch(`${baseUrl}/v1/streams/b/s/records`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ records: [{ body }] }), signal: AbortSignal.timeout(boundMs),
  });
  return { status: res.status, json: await res.json() as { start?: { seq_num: number }; error?: string } };
}

describe('a PostgreSQL connection that hangs', { timeout: 300_000 }, () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  after(async () => { for (const c of cleanups.reverse()) await c(); });

  test('the star is not ready while an answer is overdue, answers the caught append, drops the dead connections and acknowledges again', { skip: pgSkip }, async () => {
    const { proxy, star } = await starBehindPostgresProxy(cleanups, ['--metrics-listen', '127.0.0.1:0']);
    const ops = await opsUrl(star);
    await ok(star.baseUrl, 'POST', '/v1/buckets/b', {});
    await ok(star.baseUrl, 'POST', '/v1/streams/b/s', {});
    const acks = new Acks();
    for (let i = 0; i < 5; i++) {
      const a = await append(star.baseUrl, `before-${i}`, 10_000);
      assert.equal(a.status, 200, JSON.stringify(a.json));
      acks.bySeq.set(a.json.start!.seq_num, `before-${i}`);
    }
    assert.equal(await readyz(ops), 200);

    // Its group commit goes to a silenced connection and gets no answer. The star's pool opens a
    // connection when all it holds are busy, and such a one, opened after the wedge, passes: an
    // append whose commit took it is acknowledged (and kept as an ack), and the wedge is laid again
    // over the connections now held, until one is caught (the pool holds at most a handful).
    let c: Awaited<ReturnType<typeof append>> | undefined;
    for (let round = 0; c === undefined; round++) {
      assert.ok(round < WEDGE_ROUNDS_MAX, `an append caught in a silenced connection within ${WEDGE_ROUNDS_MAX} wedges`);
      // Ready before each wedge, so a drop in readiness is this round's (statements an earlier round
      // left on silenced connections are given up first).
      if (round > 0) await until('/readyz to say 200 before the next wedge', async () => await readyz(ops) === 200, STUCK_ANSWER_MS_MAX);
      assert.ok(proxy.wedge() > 0, 'the star had connections to silence');
      let answered = false;
      const caught = append(star.baseUrl, `caught-${round}`, STUCK_ANSWER_MS_MAX).finally(() => { answered = true; });
      caught.catch(() => undefined); // awaited below; a failed wait must not leave it unhandled
      let notReady = false;
      await until('/readyz to say 503 while the answer is overdue, or the append to be answered', async () => {
        notReady = await readyz(ops) === 503;
        return notReady || answered;
      }, NOT_READY_WAIT_MS_MAX);
      // The bridge's /healthz, which a Gateway probes, says so too: new requests go to other stars first.
      const healthz = notReady && !answered ? (await fetch(`${star.baseUrl}/healthz`)).status : undefined;
      const a = await caught;
      if (a.status === 200) { acks.bySeq.set(a.json.start!.seq_num, `caught-${round}`); continue; }
      assert.ok(notReady, 'the star stopped being ready while the caught append waited');
      if (healthz !== undefined) assert.equal(healthz, 503);
      c = a;
    }
    assert.equal(c.status, 503, `the caught append is refused as retryable, not ${c.status}: ${JSON.stringify(c.json)}`);
    // Given up once PostgreSQL, asked over a new connection, said the statement's session was idle
    // (it never got the statement), not only when the driver's answer bound ran out.
    assert.match(c.json.error ?? '', /its server session \d+ is idle/, JSON.stringify(c.json));

    // The star gives the dead connections up itself (the proxy never closes them) and acknowledges again.
    let after = 0;
    await until('an append to be acknowledged again', async () => {
      const a = await append(star.baseUrl, `after-${after}`, STUCK_ANSWER_MS_MAX).catch(() => undefined);
      if (a?.status === 200) { acks.bySeq.set(a.json.start!.seq_num, `after-${after}`); after += 1; return true; }
      assert.ok(a === undefined || a.status === 503, `refused as retryable meanwhile, not ${a?.status}: ${JSON.stringify(a?.json)}`);
      await sleep(200);
      return false;
    }, STUCK_ANSWER_MS_MAX);
    await until('/readyz to say 200 again', async () => await readyz(ops) === 200, NOT_READY_WAIT_MS_MAX);
    assert.equal((await fetch(`${star.baseUrl}/healthz`)).status, 200);
    assert.doesNotMatch(star.output(), /bug: unmapped error/);
    // Every acknowledged record is where its ack said; the caught one was not acknowledged (its
    // statement never passed the silenced connection: PostgreSQL, asked once it answered again, held
    // none of it; test/crash/commit-outcome.test.ts has the statement that did pass).
    assert.ok(await verifyAcks(star.baseUrl, 'b', 's', acks) >= acks.count);
  });

  test('a read whose connection is reset under it is MetadataUnavailableError (503), not the socket\'s error (500)', { skip: pgSkip }, async () => {
    const proxy = TcpRelay.toUrl(new URL(TEST_POSTGRES_URL));
    await proxy.start();
    cleanups.push(() => proxy.close());
    const schema = freshSchema();
    cleanups.push(() => dropSchema(schema));
    const store = new PostgresMetadataStore({ url: proxy.urlFor(new URL(TEST_POSTGRES_URL)), schema });
    cleanups.push(() => store.close());
    await store.load();
    // Reset while the read waits for its answer (the proxy holds its bytes back until then).
    proxy.wedge();
    const read = store.readBucket('b');
    await sleep(100);
    proxy.reset();
    await assert.rejects(read, (err: unknown) => err instanceof MetadataUnavailableError, 'a lost connection on a read is the store being unavailable');
  });
});
