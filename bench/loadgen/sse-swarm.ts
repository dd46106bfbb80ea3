// The SSE swarm (a child process): N subscribers on raw TCP sockets, each scanning its byte stream
// for the producer's batch marker and noting when each batch arrived. Delays are computed at the
// end, against the send time carried in the record and the ack time the parent reports. With
// several streams (`paths`), subscriber i follows stream i mod S and batch b goes to stream b mod S.
import { connect, type Socket } from 'node:net';
import { toParent } from '../lib/child.ts';
import { encodeHistogram, newHistogram, recordNs } from '../lib/hist.ts';
import { SSE_MARK, type SwarmFinish, type SwarmResult, type SwarmStart } from './sse-spec.ts';

/** Sockets opened at once while connecting the swarm (the listen backlog is finite). */
const CONNECT_WAVE = 100;
const CONNECT_TIMEOUT_MS = 15_000;
let MARK = Buffer.from(SSE_MARK);
const CRLFCRLF = Buffer.from('\r\n\r\n');

interface Sub {
  sock: Socket;
  headersDone: boolean;
  status: number;
  carry: Buffer | undefined;
  last: number;
  count: number;
  closed: boolean;
}

let cfg: SwarmStart;
let base = 0n;
let recvNs: Float64Array; // [sub * perStream + the batch's ordinal on its stream]
let streams = 1;
/** Batches per stream, rounded up: the slots each subscriber has in recvNs. */
let perStream = 0;
/** Batches that reached a subscriber of another stream (an error). */
let misrouted = 0;
let sendNs: Float64Array; // [batch]
const subs: Sub[] = [];
let outOfOrder = 0;
let duplicates = 0;
let cpu0 = process.cpuUsage();
let t0 = 0;

/** Parses decimal digits at p; returns [value, index after] or undefined when the buffer ends first. */
function digits(buf: Buffer, p: number): [number, number] | undefined {
  let v = 0;
  let q = p;
  while (q < buf.length && buf[q] >= 48 && buf[q] <= 57) { v = v * 10 + (buf[q] - 48); q++; }
  if (q >= buf.length) return undefined;
  return [v, q];
}

function onData(s: Sub, i: number, chunk: Buffer): void {
  const now = Number(process.hrtime.bigint() - base);
  let buf = s.carry ? Buffer.concat([s.carry, chunk]) : chunk;
  s.carry = undefined;
  if (!s.headersDone) {
    const h = buf.indexOf(CRLFCRLF);
    if (h < 0) { s.carry = Buffer.from(buf); return; } // a copy: chunk is the shared read buffer
    s.headersDone = true;
    s.status = (buf[9] - 48) * 100 + (buf[10] - 48) * 10 + (buf[11] - 48);
    buf = buf.subarray(h + 4);
  }
  let p = 0;
  for (;;) {
    const m = buf.indexOf(MARK, p);
    if (m < 0) {
      // Only an end that could begin a marker is kept (a copy); a read ending on a frame's "\n\n"
      // keeps nothing, so the common read allocates nothing.
      const end = buf.length;
      for (let k = Math.min(MARK.length - 1, end - p); k > 0; k--) {
        let j = 0;
        while (j < k && buf[end - k + j] === MARK[j]) j++;
        if (j === k) { s.carry = Buffer.from(buf.subarray(end - k)); break; }
      }
      return;
    }
    const a = digits(buf, m + MARK.length);
    const b = a && buf[a[1]] === 58 ? digits(buf, a[1] + 1) : undefined;
    if (!a || (buf[a[1]] === 58 && !b)) { s.carry = Buffer.from(buf.subarray(m)); return; }
    p = (b ? b[1] : a[1]) + 1;
    if (!b) continue; // not our marker shape
    const idx = a[0];
    if (idx >= cfg.batches) continue;
    if (idx % streams !== i % streams) { misrouted++; continue; }
    const slot = i * perStream + Math.floor(idx / streams);
    if (recvNs[slot] >= 0) { duplicates++; continue; }
    // Concurrent appends may be sequenced in another order than sent; only a repeat is an error.
    if (idx < s.last) outOfOrder++;
    s.last = Math.max(s.last, idx);
    s.count++;
    recvNs[slot] = now;
    sendNs[idx] = b[0];
  }
}

/** Every socket reads into this one buffer (net's `onread`): the swarm's cost per delivery is then
 *  the read and the scan, without a Buffer and a stream 'data' event per read. At 4096 subscribers
 *  the 'data' path took a whole core (about 12 µs per delivery), so the swarm, not the server,
 *  set the delays. onData copies whatever it keeps (carry) before the next read reuses the bytes. */
const READ_BUFFER = Buffer.alloc(64 * 1024);

function open(i: number): Promise<void> {
  return new Promise((resolve) => {
    const s: Sub = { sock: undefined as unknown as Socket, headersDone: false, status: 0, carry: undefined, last: -1, count: 0, closed: false };
    const sock = connect({
      host: cfg.host, port: cfg.port,
      onread: {
        buffer: READ_BUFFER,
        callback: (n: number, buf: Uint8Array) => {
          onData(s, i, (buf as Buffer).subarray(0, n));
          if (s.headersDone) resolve();
          return true;
        },
      },
    });
    s.sock = sock;
    subs[i] = s;
    sock.setNoDelay(true);
    sock.once('connect', () => {
      sock.write(`GET ${cfg.paths ? cfg.paths[i % streams] : cfg.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`);
    });
    sock.on('error', () => { s.closed = true; resolve(); });
    sock.on('close', () => { s.closed = true; resolve(); });
  });
}

async function start(msg: SwarmStart): Promise<void> {
  cfg = msg;
  MARK = Buffer.from(msg.mark || SSE_MARK);
  base = BigInt(msg.baseNs);
  streams = msg.paths?.length ?? 1;
  perStream = Math.ceil(msg.batches / streams);
  recvNs = new Float64Array(msg.subscribers * perStream).fill(-1);
  sendNs = new Float64Array(msg.batches).fill(-1);
  const deadline = setTimeout(() => {
    toParent({ type: 'error', message: `SSE swarm: connecting ${msg.subscribers} subscribers took over ${CONNECT_TIMEOUT_MS} ms` });
  }, CONNECT_TIMEOUT_MS + msg.connectOverMs);
  const waves = Math.ceil(msg.subscribers / CONNECT_WAVE);
  const tStart = performance.now();
  for (let w = 0; w < msg.subscribers; w += CONNECT_WAVE) {
    const due = tStart + (msg.connectOverMs * (w / CONNECT_WAVE)) / waves;
    if (due > performance.now()) await new Promise((r) => setTimeout(r, due - performance.now()));
    const wave: Promise<void>[] = [];
    for (let i = w; i < Math.min(msg.subscribers, w + CONNECT_WAVE); i++) wave.push(open(i));
    await Promise.all(wave);
  }
  clearTimeout(deadline);
  const connected = subs.filter((s) => s.headersDone && s.status === 200 && !s.closed).length;
  const statuses = [...new Set(subs.map((s) => s.status))].join(',');
  cpu0 = process.cpuUsage();
  t0 = performance.now();
  toParent({ type: 'ready', connected, statuses });
}

/** Batches appended to subscriber i's stream. */
function expectedFor(i: number): number {
  const st = i % streams;
  return st < cfg.batches ? Math.floor((cfg.batches - 1 - st) / streams) + 1 : 0;
}

async function finish(msg: SwarmFinish): Promise<void> {
  const until = performance.now() + msg.graceMs;
  while (performance.now() < until && subs.some((s, i) => !s.closed && s.count < expectedFor(i))) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const cpu = process.cpuUsage(cpu0);
  const elapsed = performance.now() - t0;
  const fromAck = newHistogram();
  const fromSend = newHistogram();
  let delivered = 0;
  let beforeAck = 0;
  let expected = 0;
  for (let i = 0; i < subs.length; i++) {
    const n = expectedFor(i);
    expected += n;
    for (let k = 0; k < n; k++) {
      const b = (i % streams) + k * streams;
      const r = recvNs[i * perStream + k];
      if (r < 0) continue;
      delivered++;
      if (sendNs[b] >= 0) recordNs(fromSend, r - sendNs[b]);
      const a = msg.ackNs[b];
      if (a >= 0) {
        if (r < a) beforeAck++;
        recordNs(fromAck, Math.max(0, r - a));
      }
    }
  }
  const result: SwarmResult = {
    type: 'result',
    subscribers: cfg.subscribers,
    connected: subs.filter((s) => s.headersDone && s.status === 200).length,
    batches: cfg.batches,
    delivered,
    expected,
    complete: subs.filter((s, i) => s.count === expectedFor(i)).length,
    outOfOrder,
    duplicates,
    misrouted,
    disconnects: subs.filter((s) => s.closed).length,
    beforeAck,
    fromAck: encodeHistogram(fromAck),
    fromSend: encodeHistogram(fromSend),
    clientCpuPct: ((cpu.user + cpu.system) / 1000 / elapsed) * 100,
  };
  for (const s of subs) s.sock.destroy();
  toParent(result as unknown as { type: string } & Record<string, unknown>);
}

process.on('message', (raw) => {
  const msg = raw as SwarmStart | SwarmFinish | { type: 'exit' };
  const fail = (err: Error): void => toParent({ type: 'error', message: err.stack ?? err.message });
  if (msg.type === 'start') start(msg).catch(fail);
  else if (msg.type === 'finish') finish(msg).catch(fail);
  else process.exit(0);
});
process.on('SIGTERM', () => process.exit(0));
toParent({ type: 'ready-to-start' });
