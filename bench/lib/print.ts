// The report as markdown tables.
import { BASELINE_FDATASYNC_4K, BASELINE_SSE_UWS_1000, PEER_ROWS, PEERS_SOURCE } from '../cases/peers.ts';
import { appendCells } from '../cases/cells.ts';
import { bytesLabel, fix, int, ms, table } from './format.ts';
import { maxMs, pctMs, type Histogram } from './hist.ts';
import type { Measured } from './loadgen.ts';
import { cellKey, type Report, type SseOutcome } from './report.ts';
import { evaluateTargets, issue13Comparisons } from './targets.ts';

const perS = (n: number, m: Measured): number => (n / m.elapsedMs) * 1000;
const MB = 1e6;

export function floorsTable(r: Report): string {
  const rows: (string | number)[][] = [];
  if (r.fsync) {
    const h = r.fsync.hist;
    rows.push(['4 KiB append + fdatasync (this run, OS temp dir fs)', int(r.fsync.opsPerS), ms(pctMs(h, 50)), ms(pctMs(h, 90)), ms(pctMs(h, 99)), ms(pctMs(h, 99.9)), ms(maxMs(h)), int(r.fsync.ops)]);
  }
  rows.push([`4 KiB append + fdatasync (from ${PEERS_SOURCE})`, int(BASELINE_FDATASYNC_4K.opsPerS), ms(BASELINE_FDATASYNC_4K.p50Ms), '–', ms(BASELINE_FDATASYNC_4K.p99Ms), '–', '–', '5 runs']);
  return table(['disk floor', 'ops/s', 'p50 ms', 'p90 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'ops'], rows);
}

export function appendTable(r: Report): string {
  const rows: (string | number)[][] = [];
  for (const cell of appendCells()) {
    const k = cellKey(cell);
    const m = r.append.get(k);
    const e = r.echo.get(k);
    if (!m && !e) continue;
    const rec = m ? perS(m.records, m) : NaN;
    rows.push([
      bytesLabel(cell.recordBytes), cell.batch, cell.producers,
      m ? int(rec) : '–', m ? fix((rec * cell.recordBytes) / MB, 1) : '–', m ? int(perS(m.requests, m)) : '–',
      m ? ms(pctMs(m.hist, 50)) : '–', m ? ms(pctMs(m.hist, 99)) : '–', m ? ms(pctMs(m.hist, 99.9)) : '–', m ? ms(maxMs(m.hist)) : '–',
      m ? int(m.serverCpuPct) : '–', m ? int(m.cpuPct) : '–', m ? int(m.errors) : '–',
      e ? int(perS(e.requests, e)) : '–', e ? ms(pctMs(e.hist, 50)) : '–', e ? ms(pctMs(e.hist, 99)) : '–',
      m && e ? `${fix(perS(m.requests, m) / perS(e.requests, e) * 100, 0)} %` : '–',
    ]);
  }
  return table([
    'record', 'records/req', 'producers', 'records/s', 'MB/s', 'req/s', 'ack p50 ms', 'ack p99 ms', 'ack p99.9 ms', 'ack max ms',
    'svcd CPU %', 'loadgen CPU %', 'errors', 'uWS echo req/s', 'echo p50 ms', 'echo p99 ms', 'svcd req/s ÷ echo',
  ], rows);
}

export function readTable(r: Report): string {
  return table(
    ['data', 'record', 'range', 'readers', 'records/s', 'payload MB/s', 'wire MB/s', 'page p50 ms', 'page p99 ms', 'svcd CPU %', 'loadgen CPU %', 'errors'],
    r.read.map((x) => [
      x.label, bytesLabel(x.recordBytes), `${int(x.range[0])}–${int(x.range[1])}`, x.readers,
      int(perS(x.m.records, x.m)), fix((perS(x.m.records, x.m) * x.recordBytes) / MB, 1), fix(perS(x.m.wireBytesIn, x.m) / MB, 1),
      ms(pctMs(x.m.hist, 50)), ms(pctMs(x.m.hist, 99)), int(x.m.serverCpuPct), int(x.m.cpuPct), int(x.m.errors),
    ]),
  );
}

const SSE_CELL_LABEL: Record<SseOutcome['cell'], string> = {
  floor: 'floor: bare uWS broadcast',
  one: 'svcd, one stream',
  'spread-floor': 'floor: bare uWS broadcast, across groups',
  spread: 'svcd, across streams',
};

export function sseTable(r: Report): string {
  if (!r.sse.length) return '';
  const opt = (h: Histogram | undefined, f: (h: Histogram) => string): string => (h ? f(h) : '–');
  const rows = r.sse.map((s) => {
    const a = s.fromAck;
    return [
      SSE_CELL_LABEL[s.cell], `${int(s.connected)}/${int(s.subscribers)}`, s.streams,
      `${s.batches} × ${s.recordsPerBatch} × ${s.recordBytes} B at ${s.batchesPerS}/s`,
      `${int(s.delivered)}/${int(s.expected)}`, int(s.expected - s.delivered), int(s.appendErrors), int(s.complete), int(s.duplicates),
      int(s.misrouted), int(s.outOfOrder), int(s.disconnects),
      opt(a, (h) => ms(pctMs(h, 50))), opt(a, (h) => ms(pctMs(h, 90))), opt(a, (h) => ms(pctMs(h, 99))), opt(a, (h) => ms(pctMs(h, 99.9))), opt(a, (h) => ms(maxMs(h))),
      ms(pctMs(s.fromSend, 50)), ms(pctMs(s.fromSend, 99)), ms(maxMs(s.fromSend)),
      opt(s.ackHist, (h) => `${ms(pctMs(h, 50))} / ${ms(pctMs(h, 99))}`),
      s.fromAck === undefined ? '–' : int(s.beforeAck), int(s.serverCpuPct), fix((s.serverCpuMs * 1000) / Math.max(1, s.delivered), 2),
      int(s.clientCpuPct), fix(s.loadAvg1, 1),
    ];
  });
  return table([
    'cell', 'subscribed', 'streams', 'batches', 'delivered', 'missing', 'appends failed', 'complete subs', 'duplicates', 'misrouted', 'reordered', 'disconnects',
    'from ack p50 ms', 'p90 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'from send p50 ms', 'from send p99 ms', 'from send max ms', 'producer ack p50/p99 ms',
    'arrived before ack', 'server CPU %', 'server CPU µs/delivery', 'swarm CPU %', 'load avg 1 min',
  ], rows) + '\n\nDelay from ack = receipt − the moment the producer read the append\'s answer, 0 when the frame arrived first '
    + '("arrived before ack"). Delay from send = receipt − the send time carried in the batch (the floor and the svcd cells\' producer both stamp each batch with the time it was due, '
    + 'so a sender that falls behind its pace shows the backlog). "reordered": batches sequenced in another order than sent, because slow acks left several appends in '
    + 'flight. "producer ack" is the append round trip while the fan-out runs. Server CPU per delivery (svcd: all threads, from the '
    + 'first append until the last delivery) is the figure to compare between runs on this shared 2-core machine: the delays move '
    + 'with the load average. The floor row is a bare uWS server writing the same frame to every socket in one loop, to the same '
    + 'swarm: its delays are what this machine leaves for any server.'
    + `\n\nReference (${PEERS_SOURCE}): bare uWS broadcast to 1000 clients, delay p50 ${ms(BASELINE_SSE_UWS_1000.p50Ms)} ms, p99 ${ms(BASELINE_SSE_UWS_1000.p99Ms)} ms (${BASELINE_SSE_UWS_1000.note}).`;
}

/** The live Redis peer beside svcd's cell, the issue-13 comparisons, then the quoted peers. */
export function peersTable(r: Report): string {
  const parts: string[] = [];
  const x = r.redis;
  if (x) {
    const row = (who: string, config: string, m: Measured): (string | number)[] => [
      who, config, int(perS(m.records, m)), ms(pctMs(m.hist, 50)), ms(pctMs(m.hist, 90)), ms(pctMs(m.hist, 99)), ms(pctMs(m.hist, 99.9)), ms(maxMs(m.hist)),
      int(m.serverCpuPct), int(m.cpuPct), int(m.errors), fix(m.loadAvg1, 2),
    ];
    parts.push(
      `Live, this run: 100 B, one record per request, 64 connections in closed loop (one in flight each) on one stream, `
      + `${fix(x.svcd.elapsedMs / 1000, 1)} s and ${fix(x.redis.elapsedMs / 1000, 1)} s measured after the same warm-up; every process unpinned.`,
      '',
      table(
        ['server', 'durability', 'appends/s', 'ack p50 ms', 'p90 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'server CPU %', 'client CPU %', 'errors', 'load avg 1 min'],
        [
          row(`svcd (${x.svcdFrom})`, 'group commit, fdatasync before the ack', x.svcd),
          row(`Redis ${x.redisVersion} XADD`, x.redisConfig, x.redis),
          ['svcd ÷ Redis', '', `${fix(perS(x.svcd.records, x.svcd) / perS(x.redis.records, x.redis), 2)}×`,
            `${fix(pctMs(x.svcd.hist, 50) / pctMs(x.redis.hist, 50), 2)}×`, `${fix(pctMs(x.svcd.hist, 90) / pctMs(x.redis.hist, 90), 2)}×`,
            `${fix(pctMs(x.svcd.hist, 99) / pctMs(x.redis.hist, 99), 2)}×`, '', '', '', '', '', ''],
        ],
      ),
      '',
    );
  }
  parts.push(
    'Issue 13, each target beside its floor or peer from this run (reported, never asserted):',
    '',
    table(['target', 'svcd', 'floor / peer', 'svcd vs it', 'result'], issue13Comparisons(r).map((c) => [
      c.target, c.svcd, c.reference, c.gap, c.met === undefined ? 'not measured' : c.met ? 'met' : '**missed**',
    ])),
    '',
    `Quoted from ${PEERS_SOURCE} (same machine, earlier, medians; Redis there ran pinned to one core with redis-benchmark on the other):`,
    '',
    table(
      ['system', 'config', 'clients', 'ops/s', 'p50 ms', 'p99 ms', 'durable ack'],
      PEER_ROWS.map((p) => [p.system, p.config, p.clients, int(p.opsPerS), ms(p.p50Ms), ms(p.p99Ms), p.durable]),
    ),
  );
  return parts.join('\n');
}

export function targetsTable(r: Report): string {
  return table(['target', 'measured', 'result'], evaluateTargets(r).map((t) => [
    t.target, t.measured, t.met === undefined ? 'not measured' : t.met ? 'met' : '**missed**',
  ]));
}
