// grpc-js's own log lines go into the star's log bounded by kind (src/api/grpc/log.ts): grpc-js
// writes `Failed to add metadata entry …` on every call whose header value it cannot take, so a
// client could fill the star's log one call at a time.
//   - RepeatLimitedLog: one line per kind per GRPC_LOG_REPEAT_MS, then the count held back; kinds
//     are bounded (the oldest forgotten);
//   - a real star: a call with a UTF-8 header value is logged through it ("grpc-js E …", stamped),
//     and twenty such calls write the line once.
import { strict as assert } from 'node:assert';
import * as http2 from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { GRPC_LOG_KINDS_MAX, GRPC_LOG_REPEAT_MS } from '../../src/config/limits.ts';
import { RepeatLimitedLog } from '../../src/api/grpc/log.ts';
import { waitForOutput } from '../helpers/server.ts';
import { startGrpcChild, type GrpcChild } from './child.ts';
import { rawCheckTail } from './raw-h2.ts';

/** A call's answer may take this long before the test gives up on it (a bound, not a speed). */
const CALL_WAIT_MS_MAX = 15_000;
const BAD_CALLS = 20;
const METADATA_LINE = /grpc-js E Failed to add metadata entry/g;

function logAt(start: number): { log: RepeatLimitedLog; lines: string[]; advance(ms: number): void } {
  let now = start;
  const lines: string[] = [];
  return { log: new RepeatLimitedLog((l) => lines.push(l), () => now), lines, advance: (ms) => { now += ms; } };
}

describe('grpc-js log lines, bounded by kind', () => {
  it('a kind is written once per GRPC_LOG_REPEAT_MS; the next one says how many were held back', () => {
    const { log, lines, advance } = logAt(1_000);
    for (let i = 0; i < 5; i++) log.line(`grpc-js E Failed to add metadata entry x-${i}: é`);
    log.line('grpc-js E Server could not bind to a port: something else');
    assert.deepEqual(lines, ['grpc-js E Failed to add metadata entry x-0: é', 'grpc-js E Server could not bind to a port: something else']);
    advance(GRPC_LOG_REPEAT_MS - 1);
    log.line('grpc-js E Failed to add metadata entry x-5: é');
    assert.equal(lines.length, 2, 'still inside the window');
    advance(1);
    log.line('grpc-js E Failed to add metadata entry x-6: é');
    assert.equal(lines.length, 3);
    assert.match(lines[2], /^grpc-js E Failed to add metadata entry x-6: é \(5 more like it held back since the last one written\)$/);
    // A new window: counted afresh.
    log.line('grpc-js E Failed to add metadata entry x-7: é');
    assert.equal(lines.length, 3);
  });

  it(`at most GRPC_LOG_KINDS_MAX (${GRPC_LOG_KINDS_MAX}) kinds are kept: past it the oldest is forgotten and its next line written`, () => {
    const { log, lines } = logAt(0);
    const kind = (i: number): string => `kind ${String(i).padStart(6, '0')} of line, long enough to fill the key`;
    for (let i = 0; i <= GRPC_LOG_KINDS_MAX; i++) log.line(kind(i));
    assert.equal(lines.length, GRPC_LOG_KINDS_MAX + 1);
    log.line(kind(GRPC_LOG_KINDS_MAX)); // still tracked: held back
    assert.equal(lines.length, GRPC_LOG_KINDS_MAX + 1);
    log.line(kind(0)); // forgotten when the last kind came in: written again
    assert.equal(lines.length, GRPC_LOG_KINDS_MAX + 2);
  });

  describe('on a real star', () => {
    let star: GrpcChild;
    let session: http2.ClientHttp2Session;
    before(async () => {
      star = await startGrpcChild();
      session = http2.connect(`http://127.0.0.1:${star.grpcPort}`);
      session.on('error', () => undefined);
    });
    after(async () => {
      session?.close();
      await star?.stop();
    });

    it(`a header value grpc-js drops is logged through the star's log, once for ${BAD_CALLS} calls`, async () => {
      for (let i = 0; i < BAD_CALLS; i++) {
        // UTF-8 in a non-binary header: grpc-js drops the entry (and logs it) and serves the call.
        const answer = await rawCheckTail(session, { 'x-note': Buffer.from(`café ${i}`, 'utf8').toString('latin1') }, CALL_WAIT_MS_MAX);
        assert.notEqual(answer.status, undefined, `call ${i} was answered with a status: ${answer.error}`);
      }
      await waitForOutput(star.server, METADATA_LINE);
      const logged = star.server.output().match(METADATA_LINE) ?? [];
      assert.equal(logged.length, 1, star.server.output());
      // Through the star's own stamped log, not grpc-js's default ('E …' with no time).
      assert.match(star.server.output(), /^\d{4}-\d\d-\d\dT[\d:.]+Z grpc-js E Failed to add metadata entry x-note/m);
    });
  });
});
