// Closed-loop load generator (a child process): N keep-alive HTTP/1.1 connections over raw sockets,
// each sending its next request as soon as the previous answer is whole. Latency is measured from
// the write to the last byte of the answer and recorded in an hdr histogram (µs). Only answers that
// complete inside the measurement window count; the warm-up before it is discarded.
import { toParent } from '../lib/child.ts';
import { encodeHistogram, newHistogram, recordNs } from '../lib/hist.ts';
import { buildRequest, Http1Conn, type Http1Response } from '../lib/http1.ts';
import type { AppendWork, LoadResult, LoadSpec, ParentMsg, ReadWork } from './spec.ts';

/** How long in-flight requests may take to finish after the window closes. */
const DRAIN_MS_MAX = 5000;

const SEQ_NUM_KEY = Buffer.from('"seq_num":');

/** Records in a read page: every record has a seq_num, and so does the tail. */
function countRecords(body: Buffer): number {
  let n = 0;
  for (let i = body.indexOf(SEQ_NUM_KEY); i >= 0; i = body.indexOf(SEQ_NUM_KEY, i + SEQ_NUM_KEY.length)) n++;
  return Math.max(0, n - 1);
}

interface Source {
  /** The next request for connection c. */
  next(c: number): Buffer;
  /** Records an OK answer carried, and the connection's follow-up bookkeeping. */
  done(c: number, res: Http1Response): number;
  check?(res: Http1Response): string | undefined;
}

function appendSource(w: AppendWork): Source {
  const reqs = w.paths.map((p) => buildRequest('POST', p, w.body));
  let checked = !w.checkSpan;
  return {
    next: (c) => reqs[c % reqs.length],
    done: () => w.recordsPerRequest,
    check(res) {
      if (checked) return undefined;
      checked = true;
      const j = JSON.parse(res.body.toString()) as { start?: { seq_num: number }; end?: { seq_num: number } };
      const span = (j.end?.seq_num ?? NaN) - (j.start?.seq_num ?? NaN);
      return span === w.recordsPerRequest ? undefined : `append ack spans ${span} records, expected ${w.recordsPerRequest}: ${res.body.toString().slice(0, 200)}`;
    },
  };
}

function readSource(w: ReadWork, conns: number): Source {
  const span = w.toSeq - w.fromSeq;
  const cursors = Array.from({ length: conns }, (_, c) => w.fromSeq + Math.floor((span * c) / conns / w.pageRecords) * w.pageRecords);
  return {
    next: (c) => buildRequest('GET', `${w.path}?seq_num=${cursors[c]}&limit=${w.pageRecords}`),
    done(c, res) {
      const n = countRecords(res.body);
      cursors[c] += n > 0 ? n : w.pageRecords;
      if (cursors[c] >= w.toSeq) cursors[c] = w.fromSeq;
      return n;
    },
  };
}

async function run(spec: LoadSpec): Promise<LoadResult> {
  const conns = await Promise.all(Array.from({ length: spec.conns }, (_, c) => Http1Conn.open(spec.host, spec.connPorts?.[c] ?? spec.port)));
  const src = spec.work.kind === 'append' ? appendSource(spec.work) : readSource(spec.work, spec.conns);
  const hist = newHistogram();
  const statuses: Record<string, number> = {};
  const fill = spec.stopAfterRecords !== undefined;
  let firstError: string | undefined;
  let requests = 0;
  let records = 0;
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
    conns[c].send(src.next(c), (err, res) => {
      inFlight--;
      const dt = Number(process.hrtime.bigint() - t0);
      if (measuring) {
        if (err || !res) {
          errors++;
          statuses.conn_error = (statuses.conn_error ?? 0) + 1;
          firstError ??= err?.message;
        } else {
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          if (res.status >= 200 && res.status < 300) {
            const bad = src.check?.(res);
            if (bad) { errors++; firstError ??= bad; }
            records += src.done(c, res);
            requests++;
            wireBytesIn += res.wireBytes;
            recordNs(hist, dt);
            if (fill && records >= spec.stopAfterRecords!) endWindow();
          } else {
            errors++;
            firstError ??= `HTTP ${res.status}: ${res.body.toString().slice(0, 200)}`;
          }
        }
      } else if (res && res.status >= 200 && res.status < 300) {
        src.done(c, res);
      }
      if (err) { if (inFlight === 0 && stopping) drained(); return; } // a dead connection stays dead
      if (stopping) { if (inFlight === 0) drained(); return; }
      fire(c);
    });
  };

  const done = new Promise<void>((resolve) => { drained = resolve; });
  if (fill) startWindow();
  for (let c = 0; c < conns.length; c++) fire(c);
  const warm = fill ? undefined : setTimeout(startWindow, spec.warmupMs);
  const stopAt = setTimeout(endWindow, (fill ? 0 : spec.warmupMs) + spec.measureMs);
  await done;
  clearTimeout(warm);
  clearTimeout(stopAt);
  const cpu = process.cpuUsage(cpu0);
  const elapsedMs = tEnd - tStart;
  for (const c of conns) c.close();
  return {
    requests, records, errors, statuses, firstError, unanswered: inFlight,
    hist: encodeHistogram(hist),
    elapsedMs,
    wireBytesIn,
    cpuPct: ((cpu.user + cpu.system) / 1000 / elapsedMs) * 100,
  };
}

process.on('message', (raw) => {
  const msg = raw as ParentMsg;
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
