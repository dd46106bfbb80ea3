// The SSE fan-out floor (a child process): a bare native uWebSockets.js server that keeps every
// GET open as an event stream and, when told, broadcasts svcd-shaped frames (the same JSON record
// shape and size as svcd's subscribe stream) at a steady pace, each frame written to every socket
// in one synchronous loop (res.cork + res.write per socket). No sequencing, no disk, no backpressure
// handling: what is left is what one thread pays on this machine to write each socket, and the
// delays the same swarm measures against it are the floor for svcd's SSE cells. With `streams` > 1
// (the spread floor) a subscriber's group is the number ending its path (`/events/3`), and batch i
// goes to group i mod streams, as the spread cell appends batch i to stream i mod S.
import { loadNativeUws } from '../../src/api/uws.ts';
import { toParent } from '../lib/child.ts';
import { dueStampNs } from '../lib/pace.ts';

export interface SseFloorGo {
  type: 'go';
  batches: number;
  batchesPerS: number;
  recordsPerBatch: number;
  recordBytes: number;
  /** process.hrtime.bigint() of the run's base, as a decimal string. */
  baseNs: string;
  mark: string;
  /** Groups the subscribers are spread over (1: everyone gets every batch). */
  streams: number;
}

const loaded = loadNativeUws();
if (!('uws' in loaded)) {
  toParent({ type: 'error', message: loaded.error });
  process.exit(2);
}
const uws = loaded.uws;
type Res = Parameters<Parameters<ReturnType<typeof uws.App>['get']>[1]>[0];

/** Groups a subscriber may name in its path; past it the path is refused. */
const GROUPS_MAX = 4096;

/** Open streams per group; a closed one is swapped out (order does not matter to a broadcast). */
const groups: Res[][] = [];
const slot = new Map<Res, { group: Res[]; at: number }>();

/** The group a path names (`/events/3` → 3; no number → 0), or undefined past GROUPS_MAX. */
function groupOf(url: string): Res[] | undefined {
  const m = /\/(\d+)$/.exec(url);
  const g = m ? Number(m[1]) : 0;
  if (g >= GROUPS_MAX) return undefined;
  while (groups.length <= g) groups.push([]);
  return groups[g];
}

function frame(i: number, sentRelNs: number, m: SseFloorGo): Buffer {
  const seq0 = i * m.recordsPerBatch;
  const recs: string[] = [];
  for (let k = 0; k < m.recordsPerBatch; k++) {
    const body = k === 0 ? `${m.mark}${i}:${sentRelNs}:`.padEnd(m.recordBytes, 'x') : 'x'.repeat(m.recordBytes);
    recs.push(JSON.stringify({ seq_num: seq0 + k, timestamp_ms: Date.now(), body }));
  }
  const tail = seq0 + m.recordsPerBatch;
  return Buffer.from(`id: ${tail}\ndata: {"records":[${recs.join(',')}],"tail":{"seq_num":${tail},"timestamp_ms":${Date.now()}}}\n\n`);
}

function broadcast(m: SseFloorGo): void {
  const base = BigInt(m.baseNs);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const intervalMs = 1000 / m.batchesPerS;
  const startRelNs = Number(process.hrtime.bigint() - base);
  let lagMsMax = 0;
  let i = 0;
  const tick = (): void => {
    // Stamped with the time it was due (dueStampNs), as the svcd cells' producer stamps its batches.
    const nowRelNs = Number(process.hrtime.bigint() - base);
    const stampNs = dueStampNs(nowRelNs, startRelNs, i, intervalMs);
    lagMsMax = Math.max(lagMsMax, (nowRelNs - stampNs) / 1e6);
    const buf = frame(i, stampNs, m);
    for (const res of groups[i % m.streams] ?? []) res.cork(() => { res.write(buf); });
    i++;
    if (i < m.batches) { setTimeout(tick, Math.max(0, t0 + i * intervalMs - performance.now())); return; }
    const c = process.cpuUsage(cpu0);
    toParent({ type: 'done', cpuMs: (c.user + c.system) / 1000, elapsedMs: performance.now() - t0, lagMsMax });
  };
  tick();
}

uws.App()
  .get('/*', (res, req) => {
    const group = groupOf(req.getUrl());
    if (!group) { res.writeStatus('404 Not Found').end(); return; }
    res.onAborted(() => {
      const s = slot.get(res);
      if (s === undefined) return;
      const last = s.group.pop()!;
      if (last !== res) { s.group[s.at] = last; slot.set(last, s); }
      slot.delete(res);
    });
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('Content-Type', 'text/event-stream').writeHeader('Cache-Control', 'no-cache');
      res.write(': open\n\n');
    });
    slot.set(res, { group, at: group.length });
    group.push(res);
  })
  .listen('127.0.0.1', 0, (token) => {
    if (!token) { toParent({ type: 'error', message: 'uWS SSE floor: listen failed' }); process.exit(1); }
    toParent({ type: 'listening', port: uws.us_socket_local_port(token as unknown as Parameters<typeof uws.us_socket_local_port>[0]) });
  });

process.on('message', (raw) => {
  const m = raw as SseFloorGo;
  if (m.type === 'go') broadcast(m);
});
process.on('SIGTERM', () => process.exit(0));
process.on('disconnect', () => process.exit(0));
