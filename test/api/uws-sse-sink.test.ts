// UwsSseSink (src/api/uws.ts) over a real uWS socket: a frame that found the socket full reaches the
// consumer as soon as its socket drains, with nothing written after it. With an onWritable handler
// registered, uWS leaves draining its own buffer to the handler's next write, so the rest of that
// frame waited for the next heartbeat (15 s), or on a quiet /ds stream for the stream's end (the
// SSE/DS audit of stop 37). Skipped, with the reason, where the native uWS binary does not load.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { UwsSseSink, loadNativeUws } from '../../src/api/uws.ts';

const loaded = loadNativeUws();
/** Frames written until one finds the socket full: far more than loopback's buffers hold. */
const FRAMES_MAX = 20_000;
const FRAME_BODY_BYTES = 8000;
/** A liveness bound on each real wait, never a measure of speed. */
const EVENT_WAIT_MS_MAX = 10_000;

async function until(what: string, cond: () => boolean): Promise<void> {
  for (const end = Date.now() + EVENT_WAIT_MS_MAX; !cond();) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('the frame that found the socket full arrives once the consumer reads, with no write after it', { skip: 'error' in loaded ? loaded.error : false }, async () => {
  const { uws } = loaded as Exclude<typeof loaded, { error: string }>;
  const app = uws.App();
  const state = { frames: 0, full: false, drained: false };
  app.get('/*', (res) => {
    const sink = new UwsSseSink(res);
    res.onAborted(() => sink.aborted());
    sink.open([['content-type', 'text/event-stream']]);
    for (let n = 0; n < FRAMES_MAX; n++) {
      state.frames = n + 1;
      if (!sink.write(`data: ${n}:${'x'.repeat(FRAME_BODY_BYTES)}\n\n`)) {
        // As the SSE pump does: wait for the drain, and (the stream quiet) write nothing then.
        state.full = true;
        sink.onWritable(() => { state.drained = true; });
        return;
      }
    }
  });
  let listen: unknown;
  const port = await new Promise<number>((resolve, reject) => app.listen('127.0.0.1', 0, (ls) => {
    if (!ls) { reject(new Error('uWS did not listen')); return; }
    listen = ls;
    resolve(uws.us_socket_local_port(ls));
  }));
  const client = connect(port, '127.0.0.1');
  let text = '';
  client.on('data', (d: Buffer) => { text += d.toString('latin1'); });
  client.on('error', () => undefined);
  try {
    client.pause(); // the consumer does not read until every frame is written
    client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await until('a write that finds the socket full', () => state.full);
    client.resume();
    const last = `data: ${state.frames - 1}:${'x'.repeat(FRAME_BODY_BYTES)}\n\n`;
    await until(`the last frame of ${state.frames}`, () => text.includes(last));
    assert.equal(state.drained, true, 'the sink saw its socket drain');
  } finally {
    client.destroy();
    uws.us_listen_socket_close(listen as never);
  }
});
