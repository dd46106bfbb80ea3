// awaitDrain, the stalled-consumer cut every event stream shares (src/api/exchange.ts): it settles
// once. The engines call a sink's writable callback on more than a drain (uWS when a destroyed
// socket aborts, node:http on 'close'), so a drain that comes after the cut, or after the stream's
// own cancel, must run nothing: a caller that writes in onDrained would write to a dropped socket.
// The sink here records calls only; both engines' sinks are exercised by the SSE limits tests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { awaitDrain, type SseSink } from '../../src/api/exchange.ts';

/** Short, so the cut comes soon; nothing is asserted about when, only about what runs after it. */
const STALL_MS = 5;
/** How long a test waits for the cut before it gives up (a liveness bound). */
const CUT_WAIT_MS_MAX = 10_000;

function recordingSink(): { sink: SseSink; drain(): void; destroyed(): boolean } {
  let writable: (() => void) | undefined;
  let destroyed = false;
  const sink: SseSink = {
    write: () => false,
    cork: (fn) => fn(),
    onWritable: (cb) => { writable = cb; },
    onClose: () => {},
    end: () => {},
    destroy: () => { destroyed = true; },
    get closed() { return destroyed; },
  };
  return { sink, drain: () => writable?.(), destroyed: () => destroyed };
}

async function until(pred: () => boolean): Promise<void> {
  const deadline = Date.now() + CUT_WAIT_MS_MAX;
  while (!pred()) {
    assert.ok(Date.now() < deadline, 'the cut never came');
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('a drain before the stall bound runs onDrained once, and no cut follows', async () => {
  const s = recordingSink();
  const calls: string[] = [];
  awaitDrain(s.sink, STALL_MS, () => calls.push('drained'), () => calls.push('cut'));
  s.drain();
  s.drain();
  await new Promise((r) => setTimeout(r, STALL_MS * 4));
  assert.deepEqual(calls, ['drained']);
  assert.equal(s.destroyed(), false);
});

test('past the stall bound the sink is destroyed and onCut runs; a drain after it runs nothing', async () => {
  const s = recordingSink();
  const calls: string[] = [];
  awaitDrain(s.sink, STALL_MS, () => calls.push('drained'), () => calls.push('cut'));
  await until(() => calls.length > 0);
  assert.equal(s.destroyed(), true);
  s.drain(); // what uWS does when the destroyed socket aborts
  assert.deepEqual(calls, ['cut']);
});

test('after the cancel neither a drain nor the stall bound runs anything', async () => {
  const s = recordingSink();
  const calls: string[] = [];
  const cancel = awaitDrain(s.sink, STALL_MS, () => calls.push('drained'), () => calls.push('cut'));
  cancel();
  s.drain();
  await new Promise((r) => setTimeout(r, STALL_MS * 4));
  assert.deepEqual(calls, []);
  assert.equal(s.destroyed(), false);
});
