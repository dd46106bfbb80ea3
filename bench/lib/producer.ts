// A paced producer: appends batch i at t0 + i/rate on keep-alive raw connections, noting when each
// ack arrives (process.hrtime ns after a shared base, the clock the SSE swarm also reads). A batch
// whose predecessors are all unacked goes out on a new connection rather than waiting, so a slow
// ack never shifts the pace.
import { newHistogram, recordNs, type Histogram } from './hist.ts';
import { buildRequest, Http1Conn } from './http1.ts';
import { dueStampNs } from './pace.ts';

/** Connections opened up front. */
const CONNS_INITIAL = 4;
/** Past this many unacked batches a tick is skipped (counted as a failed append). */
const CONNS_MAX = 64;

export interface ProducerSpec {
  host: string;
  port: number;
  /** /v1/streams/{b}/{k}/records, or a DS stream (whose append answers 204) */
  path: string;
  /** Batch i's path when batches go to several streams (default: `path` for all). */
  pathOf?: (i: number) => string;
  batches: number;
  batchesPerS: number;
  /** hrtime of the run's base. */
  base: bigint;
  /** The JSON body of batch i, sent sentRelNs after base. */
  body(i: number, sentRelNs: number): string;
  /** After the last batch is sent, wait at most this long for the outstanding acks; each one still
   *  missing then counts as a failed append (default: wait for all). */
  drainMs?: number;
}

export interface ProducerResult {
  /** ackNs[i]: ns after base when batch i's ack arrived; -1 if it failed. */
  ackNs: number[];
  /** Append round trips (µs). */
  ackHist: Histogram;
  errors: number;
  firstError?: string;
  connsUsed: number;
}

export async function runPacedProducer(spec: ProducerSpec): Promise<ProducerResult> {
  const conns: (Http1Conn | undefined)[] = await Promise.all(Array.from({ length: CONNS_INITIAL }, () => Http1Conn.open(spec.host, spec.port)));
  const busy = conns.map(() => false);
  const ackNs = new Array<number>(spec.batches).fill(-1);
  const ackHist = newHistogram();
  let errors = 0;
  let firstError: string | undefined;
  await new Promise<void>((resolve) => {
    if (spec.batches === 0) { resolve(); return; }
    const t0 = performance.now();
    const intervalMs = 1000 / spec.batchesPerS;
    // Batch i is stamped with the time it was due (dueStampNs), as the SSE floor stamps its batches.
    const startRelNs = Number(process.hrtime.bigint() - spec.base);
    let settled = 0;
    let idx = 0;
    const settle = (): void => { if (++settled === spec.batches) resolve(); };
    const fail = (msg: string): void => { errors++; firstError ??= msg; settle(); };
    const sendOn = (c: number, i: number): void => {
      busy[c] = true;
      const sent = process.hrtime.bigint();
      const stampNs = dueStampNs(Number(sent - spec.base), startRelNs, i, intervalMs);
      conns[c]!.send(buildRequest('POST', spec.pathOf ? spec.pathOf(i) : spec.path, spec.body(i, stampNs)), (err, res) => {
        const now = process.hrtime.bigint();
        busy[c] = false;
        if (err || !res || res.status < 200 || res.status > 299) { fail(err?.message ?? `HTTP ${res?.status} ${res?.body.toString().slice(0, 200)}`); return; }
        ackNs[i] = Number(now - spec.base);
        recordNs(ackHist, Number(now - sent));
        settle();
      });
    };
    const tick = (): void => {
      const i = idx;
      const c = busy.findIndex((b, k) => !b && !conns[k]?.closed);
      // An idle connection the server closed (uWS's 10 s idle timeout: fast acks leave the spares
      // unused) is reopened before it is used, rather than counted as a failed append.
      const dead = c >= 0 ? -1 : busy.findIndex((b, k) => !b && conns[k]?.closed);
      if (c >= 0) sendOn(c, i);
      else if (dead >= 0) {
        busy[dead] = true;
        Http1Conn.open(spec.host, spec.port).then((conn) => { conns[dead] = conn; sendOn(dead, i); }, (err: Error) => fail(err.message));
      } else if (conns.length < CONNS_MAX) {
        const n = conns.length;
        busy.push(true);
        conns.push(undefined);
        Http1Conn.open(spec.host, spec.port).then((conn) => { conns[n] = conn; sendOn(n, i); }, (err: Error) => fail(err.message));
      } else fail(`${CONNS_MAX} appends unacked`);
      idx++;
      if (idx < spec.batches) setTimeout(tick, Math.max(0, t0 + idx * intervalMs - performance.now()));
      else if (spec.drainMs !== undefined) {
        setTimeout(() => {
          const unacked = spec.batches - settled;
          if (unacked > 0) { errors += unacked; firstError ??= `${unacked} appends unacked ${spec.drainMs} ms after the last was sent`; }
          settled = spec.batches;
          resolve();
        }, spec.drainMs).unref();
      }
    };
    tick();
  });
  for (const c of conns) c?.close();
  return { ackNs, ackHist, errors, firstError, connsUsed: conns.length };
}
