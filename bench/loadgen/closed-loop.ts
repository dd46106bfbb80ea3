// Closed-loop load generator (a child process): N keep-alive HTTP/1.1 connections over raw sockets,
// each sending its next request as soon as the previous answer is whole. Latency is measured from
// the write to the last byte of the answer and recorded in an hdr histogram (µs). Only answers that
// complete inside the measurement window count; the warm-up before it is discarded.
import { serveRuns, toParent } from '../lib/child.ts';
import { runClosedLoop } from '../lib/closed-loop-window.ts';
import { buildRequest, Http1Conn, type Http1Response } from '../lib/http1.ts';
import type { AppendWork, LoadResult, LoadSpec, ParentMsg, ReadWork } from './spec.ts';

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
  try {
    return await runClosedLoop({
      conns: spec.conns, warmupMs: spec.warmupMs, measureMs: spec.measureMs,
      ...(spec.stopAfterRecords !== undefined ? { stopAfterRecords: spec.stopAfterRecords } : {}),
      marks: (type) => toParent({ type }),
      send: (c, answered) => conns[c].send(src.next(c), (err, res) => {
        if (err || !res) { answered(err ?? new Error('connection closed without an answer')); return; }
        const status = String(res.status);
        if (res.status < 200 || res.status >= 300) { answered({ ok: false, status, error: `HTTP ${res.status}: ${res.body.toString().slice(0, 200)}` }); return; }
        // done() moves a read's cursor on every answer, warm-up included.
        answered({ ok: true, status, records: src.done(c, res), wireBytes: res.wireBytes, ...(src.check ? { check: () => src.check!(res) } : {}) });
      }),
    });
  } finally {
    for (const c of conns) c.close();
  }
}

serveRuns<ParentMsg>(run);
