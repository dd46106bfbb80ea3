// Request bodies share one star-wide byte budget (BODY_BYTES_IN_FLIGHT_MAX), on both engines: uploads
// whose bodies are still arriving hold their declared size; past the budget an upload is refused with
// 429 and the error envelope before its body is read, smaller requests still fit, and the budget
// comes back when the slow uploads go away. A body that stops arriving is cut after
// REQUEST_BODY_IDLE_MS_MAX, so stalled uploads cannot hold the budget forever.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rawConn, type RawConn } from '../helpers/raw-conn.ts';
import { APPEND_BODY_BYTES_MAX, BODY_BYTES_IN_FLIGHT_MAX, REQUEST_BODY_IDLE_MS_MAX } from '../../src/config/limits.ts';
import { ENGINES } from '../helpers/server.ts';
import { startOpsStar, type OpsStar } from '../ops/kit.ts';

/** How long a step may wait for the star to reach the state it expects. */
const STATE_WAIT_MS = 10_000;
/** uWS checks its idle timeout every few seconds, so a cut comes up to that much after the limit. */
const IDLE_CUT_SLACK_MS = 10_000;

/** Uploads of the largest declared size that fit in the budget together. */
const FITTING_UPLOADS = Math.floor(BODY_BYTES_IN_FLIGHT_MAX / APPEND_BODY_BYTES_MAX);

type Upload = RawConn;

/** Starts an append declaring the largest body a route accepts and sends only its first byte. */
async function stalledUpload(port: number, path: string): Promise<Upload> {
  const c = await rawConn(port);
  c.sock.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${APPEND_BODY_BYTES_MAX}\r\n\r\n{`);
  return c;
}

async function bodyBytesInFlight(ops: string): Promise<number> {
  const text = await (await fetch(`${ops}/metrics`)).text();
  const m = /^svcd_request_body_bytes_in_flight (\d+)$/m.exec(text);
  assert.ok(m, 'the metric is exposed');
  return Number(m[1]);
}

async function until<T>(what: string, probe: () => Promise<T> | T, ok: (v: T) => boolean, waitMs = STATE_WAIT_MS): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${String(v)})`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const engine of ENGINES) {
  describe(`request body budget (${engine})`, () => {
    let star: OpsStar;
    const path = '/v1/streams/bp/k/records';
    before(async () => {
      star = await startOpsStar({ engine });
      const base = star.srv.baseUrl;
      assert.equal((await fetch(`${base}/v1/buckets/bp`, { method: 'POST', body: '{}' })).status, 201);
      assert.equal((await fetch(`${base}/v1/streams/bp/k`, { method: 'POST', body: '{}' })).status, 201);
    });
    after(() => star.stop());

    test('past the budget an upload is 429 before its body is read; small requests fit; the budget comes back', async () => {
      assert.ok(FITTING_UPLOADS >= 1 && FITTING_UPLOADS <= 16, `a handful of uploads fill the budget (${FITTING_UPLOADS})`);
      const slow: Upload[] = [];
      try {
        for (let i = 0; i < FITTING_UPLOADS; i++) {
          slow.push(await stalledUpload(star.srv.port, path));
          await until('the upload to hold its share', () => bodyBytesInFlight(star.ops), (n) => n === (i + 1) * APPEND_BODY_BYTES_MAX);
        }
        const refused = await stalledUpload(star.srv.port, path);
        try {
          // Refused before its body was read, the upload is answered and the connection closed.
          await until('the refusal', () => refused.closed(), (c) => c);
          const [head, body] = refused.text().split('\r\n\r\n');
          assert.match(head, /^HTTP\/1\.1 429 /);
          assert.match(head, /^content-type: application\/json$/im);
          assert.match(head, /^content-length: \d+$/im);
          assert.equal(typeof (JSON.parse(body) as { error: unknown }).error, 'string');
        } finally {
          refused.sock.destroy();
        }
        assert.equal(await bodyBytesInFlight(star.ops), FITTING_UPLOADS * APPEND_BODY_BYTES_MAX, 'a refused upload holds nothing');

        const small = await fetch(`${star.srv.baseUrl}${path}`, { method: 'POST', body: JSON.stringify({ records: [{ body: 'fits' }] }) });
        assert.equal(small.status, 200, 'a small append still fits in what is left');
        for (const s of slow) assert.equal(s.text(), '', 'the slow uploads are still being read');
      } finally {
        for (const s of slow) s.sock.destroy();
      }
      await until('the budget to come back', () => bodyBytesInFlight(star.ops), (n) => n === 0);
      const again = await stalledUpload(star.srv.port, path);
      try {
        await until('the upload to be admitted', () => bodyBytesInFlight(star.ops), (n) => n === APPEND_BODY_BYTES_MAX);
      } finally {
        again.sock.destroy();
      }
    });

    test('an upload whose body stops arriving is cut without an answer, and its share comes back', async () => {
      const stalled = await stalledUpload(star.srv.port, path);
      try {
        await until('the upload to be admitted', () => bodyBytesInFlight(star.ops), (n) => n === APPEND_BODY_BYTES_MAX);
        await until('the cut', () => stalled.closed(), (c) => c, REQUEST_BODY_IDLE_MS_MAX + IDLE_CUT_SLACK_MS);
        assert.equal(stalled.text(), '', 'a cut upload is not answered');
        await until('its share to come back', () => bodyBytesInFlight(star.ops), (n) => n === 0);
      } finally {
        stalled.sock.destroy();
      }
    });
  });
}
