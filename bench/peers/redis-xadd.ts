// The Redis peer's load generator (a child process, so it shares no event loop with the
// orchestrator): N connections, each in closed loop sending `XADD <key> * d <value>` and waiting for
// the entry id before sending the next, the shape of svcd's single-record append cells. The window
// is timed as in loadgen/closed-loop.ts: a warm-up whose answers are discarded, then a measured
// window; latency runs from the write to the whole reply, in µs in an hdr histogram, and only
// replies that complete inside the window count.
import { toParent } from '../lib/child.ts';
import { encodeHistogram, newHistogram, recordNs } from '../lib/hist.ts';
import { encodeCommand, RespConn, RespError } from '../lib/resp.ts';
import type { LoadResult } from '../loadgen/spec.ts';
import type { RedisDriverMsg, RedisXaddSpec } from './redis-spec.ts';

/** How long in-flight commands may take to finish after the window closes. */
const DRAIN_MS_MAX = 5000;
/** The entry's one field name (the value carries the record's bytes). */
const FIELD = 'd';

async function run(spec: RedisXaddSpec): Promise<LoadResult> {
  const conns = await Promise.all(Array.from({ length: spec.conns }, () => RespConn.open(spec.host, spec.port)));
  // Every command is the same bytes: `*` lets Redis pick the id, so nothing differs per entry.
  const cmd = encodeCommand(['XADD', spec.key, '*', FIELD, 'x'.repeat(spec.valueBytes)]);
  const hist = newHistogram();
  const statuses: Record<string, number> = {};
  let firstError: string | undefined;
  let requests = 0;
  let errors = 0;
  let wireBytesIn = 0;
  let measuring = false;
  let stopping = false;
  let inFlight = 0;
  let tStart = 0;
  let tEnd = 0;
  let cpu0 = process.cpuUsage();
  let drained: () => void = () => {};

  const startWindow = (): void => {
    measuring = true;
    tStart = performance.now();
    cpu0 = process.cpuUsage();
    toParent({ type: 'measure-start' });
  };
  const endWindow = (): void => {
    if (stopping) return;
    measuring = false;
    stopping = true;
    tEnd = performance.now();
    toParent({ type: 'measure-end' });
    if (inFlight === 0) drained();
    else setTimeout(() => drained(), DRAIN_MS_MAX).unref();
  };

  const fire = (c: number): void => {
    if (stopping) return;
    const t0 = process.hrtime.bigint();
    inFlight++;
    conns[c].send(cmd, (err, reply, wireBytes) => {
      inFlight--;
      const dt = Number(process.hrtime.bigint() - t0);
      if (measuring) {
        if (err) {
          errors++;
          statuses.conn_error = (statuses.conn_error ?? 0) + 1;
          firstError ??= err.message;
        } else if (reply instanceof RespError || typeof reply !== 'string') {
          // XADD answers the new entry's id as a bulk string; anything else is a failed append.
          errors++;
          statuses.error_reply = (statuses.error_reply ?? 0) + 1;
          firstError ??= reply instanceof RespError ? reply.message : `unexpected XADD reply ${JSON.stringify(reply)}`;
        } else {
          statuses.ok = (statuses.ok ?? 0) + 1;
          requests++;
          wireBytesIn += wireBytes;
          recordNs(hist, dt);
        }
      }
      if (err) { if (inFlight === 0 && stopping) drained(); return; } // a dead connection stays dead
      if (stopping) { if (inFlight === 0) drained(); return; }
      fire(c);
    });
  };

  const done = new Promise<void>((resolve) => { drained = resolve; });
  for (let c = 0; c < conns.length; c++) fire(c);
  const warm = setTimeout(startWindow, spec.warmupMs);
  const stopAt = setTimeout(endWindow, spec.warmupMs + spec.measureMs);
  await done;
  clearTimeout(warm);
  clearTimeout(stopAt);
  const cpu = process.cpuUsage(cpu0);
  const elapsedMs = tEnd - tStart;
  for (const c of conns) c.close();
  return {
    requests, records: requests, errors, statuses, firstError, unanswered: inFlight,
    hist: encodeHistogram(hist),
    elapsedMs,
    wireBytesIn,
    cpuPct: ((cpu.user + cpu.system) / 1000 / elapsedMs) * 100,
  };
}

process.on('message', (raw) => {
  const msg = raw as RedisDriverMsg;
  if (msg.type === 'exit') process.exit(0);
  if (msg.type === 'run') {
    run(msg.spec).then(
      (result) => toParent({ type: 'result', result }),
      (err: Error) => toParent({ type: 'error', message: err.stack ?? err.message }),
    );
  }
});
process.on('SIGTERM', () => process.exit(0));
toParent({ type: 'ready' });
