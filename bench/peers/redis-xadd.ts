// The Redis peer's load generator (a child process, so it shares no event loop with the
// orchestrator): N connections, each in closed loop sending `XADD <key> * d <value>` and waiting for
// the entry id before sending the next, the shape of svcd's single-record append cells. The window
// is timed as in loadgen/closed-loop.ts: a warm-up whose answers are discarded, then a measured
// window; latency runs from the write to the whole reply, in µs in an hdr histogram, and only
// replies that complete inside the window count.
import { serveRuns, toParent } from '../lib/child.ts';
import { runClosedLoop } from '../lib/closed-loop-window.ts';
import { encodeCommand, RespConn, RespError } from '../lib/resp.ts';
import type { LoadResult } from '../loadgen/spec.ts';
import type { RedisDriverMsg, RedisXaddSpec } from './redis-spec.ts';

/** The entry's one field name (the value carries the record's bytes). */
const FIELD = 'd';

async function run(spec: RedisXaddSpec): Promise<LoadResult> {
  const conns = await Promise.all(Array.from({ length: spec.conns }, () => RespConn.open(spec.host, spec.port)));
  // Every command is the same bytes: `*` lets Redis pick the id, so nothing differs per entry.
  const cmd = encodeCommand(['XADD', spec.key, '*', FIELD, 'x'.repeat(spec.valueBytes)]);
  try {
    return await runClosedLoop({
      conns: spec.conns, warmupMs: spec.warmupMs, measureMs: spec.measureMs,
      marks: (type) => toParent({ type }),
      send: (c, answered) => conns[c].send(cmd, (err, a) => {
        if (err || !a) { answered(err ?? new Error('connection closed without a reply')); return; }
        const { reply, wireBytes } = a;
        // XADD answers the new entry's id as a bulk string; anything else is a failed append.
        if (reply instanceof RespError || typeof reply !== 'string') {
          answered({ ok: false, status: 'error_reply', error: reply instanceof RespError ? reply.message : `unexpected XADD reply ${JSON.stringify(reply)}` });
          return;
        }
        answered({ ok: true, status: 'ok', records: 1, wireBytes });
      }),
    });
  } finally {
    for (const c of conns) c.close();
  }
}

serveRuns<RedisDriverMsg>(run);
