// An event stream paced by its read budget (read_Bps) through the Gateway, under a star that cuts
// the paused relay (spec: Events, rule 3: the star cannot tell a budget's pause from a consumer that
// stopped reading) must still pause rather than drop (rule 8): the Gateway relays whole frames and
// subscribes again from the last one it sent. A real star (a short --sse-stall-ms, so its cut comes
// within the test) and a real Gateway child; the caller reads through fetch.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, startServer, waitForOutput, type RunningServer } from '../helpers/server.ts';
import { startGatewayChild, type Gateway } from './child.ts';
import { JWT_SECRET, mint } from '../grpc/child.ts';

/** The star cuts a consumer whose socket has not drained for this long (the spec's 60 s, shortened). */
const STAR_STALL_MS = 300;
/** Frames the stream holds before the caller subscribes: one record of RECORD_BYTES each, about
 *  20 MB in all, well past what the star's send buffer and the Gateway's receive buffer hold together
 *  (4 MiB and up to 6 MiB as loopback autotunes them), so the star's writes back up while the relay
 *  pauses. At 12 MB a loaded CI once read the whole stream without the star ever cutting it. */
const FRAMES = 20;
const RECORD_BYTES = 1_000_000;
/** About one frame a second: the relay pauses about a second after each, three times the star's
 *  stall bound, so the star cuts the stream under it again and again. */
const READ_BPS = 1_000_000;
/** A bound on the whole read (about FRAMES seconds at READ_BPS), so a hang fails the test. */
const READ_WAIT_MS = 90_000;

const bearer = (token: string, init: RequestInit = {}): RequestInit => ({ ...init, headers: { ...(init.headers as Record<string, string> ?? {}), authorization: `Bearer ${token}` } });

describe('gateway: a paced event stream outlives the star cutting it', () => {
  const env = { SVCD_JWT_HMAC_SECRET: JWT_SECRET };
  let star: RunningServer;
  let gw: Gateway;
  let ops: string;
  before(async () => {
    star = await startServer({ args: ['--auth', 'jwt', '--insecure-auth', '--sse-stall-ms', String(STAR_STALL_MS), '--metrics-listen', '127.0.0.1:0'], env });
    ops = `http://127.0.0.1:${(await waitForOutput(star, /svcd ops on http:\/\/127\.0\.0\.1:(\d+)/))[1]}`;
    gw = await startGatewayChild(['--upstream', star.baseUrl, '--auth', 'jwt', '--insecure-auth', '--gateway-limits'], env);
    const admin = await mint('svc:admin', 600);
    const r = await fetch(`${star.baseUrl}/v1/buckets/paced`, bearer(admin, { method: 'POST', body: '{"create_stream_on_append":true}' }));
    assert.equal(r.status, 201);
  });
  after(async () => {
    await gw?.stop();
    await star?.stop();
    if (star) removeDir(star.dataDir);
  });

  test('every frame arrives whole, once and in order, though the star cut the paused relay; the Gateway subscribed again', { timeout: READ_WAIT_MS + 30_000 }, async () => {
    const appender = await mint('svc:append:paced:*', 600);
    const bodies = Array.from({ length: FRAMES }, (_, i) => `${i}:`.padEnd(RECORD_BYTES, 'p'));
    for (const body of bodies) {
      const r = await fetch(`${star.baseUrl}/v1/streams/paced/s/records`, bearer(appender, { method: 'POST', body: JSON.stringify({ records: [{ body }] }) }));
      assert.equal(r.status, 200, await r.text());
    }
    const token = await mint('svc:read:paced:*', 600, { limits: { read_Bps: READ_BPS } });
    const ac = new AbortController();
    const giveUp = setTimeout(() => ac.abort(), READ_WAIT_MS);
    const res = await fetch(`${gw.url}/v1/streams/paced/s/records/subscribe?seq_num=0`, bearer(token, { signal: ac.signal }));
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    let text = '';
    let ended = false;
    // Whole batch frames read so far, counted as their blank lines arrive (`scanned`: the next frame's start).
    let whole = 0;
    let scanned = 0;
    try {
      while (whole < FRAMES) {
        // Dropped (the Gateway cut the caller) or ended: either way the stream did not pause.
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true as const }));
        if (done) { ended = true; break; }
        text += Buffer.from(value).toString();
        for (let end = text.indexOf('\n\n', scanned); end >= 0; end = text.indexOf('\n\n', scanned)) {
          if (text.startsWith('id: ', scanned)) whole += 1;
          scanned = end + 2;
        }
      }
    } finally {
      clearTimeout(giveUp);
      ac.abort();
    }
    assert.ok(!ended, `the caller's stream ended after ${whole} of ${FRAMES} frames`);
    // Every batch frame is whole (its data line parses), and the ids run 1..FRAMES: none lost, none twice.
    const frames = [...text.matchAll(/^id: (\d+)\ndata: (.*)\n\n/gm)];
    assert.deepEqual(frames.map((m) => Number(m[1])), bodies.map((_, i) => i + 1));
    for (const [i, m] of frames.entries()) {
      const batch = JSON.parse(m[2]) as { records: { seq_num: number; body: string }[] };
      assert.deepEqual(batch.records.map((r) => [r.seq_num, r.body]), [[i, bodies[i]]]);
    }
    // Nothing but whole frames and comments between them.
    assert.equal(text.replace(/^id: \d+\ndata: .*\n\n/gm, '').replace(/^:[^\n]*\n\n/gm, ''), '');
    // The star served the stream more than once: it did cut the relay, and the Gateway came back.
    const metrics = await (await fetch(`${ops}/metrics`)).text();
    const subscribes = Number(/svcd_requests_total\{verb="Subscribe",status="200"\} (\d+)/.exec(metrics)?.[1] ?? 0);
    assert.ok(subscribes > 1, `the star served ${subscribes} subscription(s): its stall bound never cut the relay, so this test proved nothing`);
  });
});
