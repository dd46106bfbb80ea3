// SSE fan-out on one stream, both engines: 1024 subscribers from the start plus a group that resumes
// mid-run with Last-Event-ID each receive every record exactly once, in sequence order, while
// appends run several at a time (so subscribers fall behind and get batches coalesced). Nothing here
// asserts on timing: every wait is bounded only so a hang fails instead of wedging the suite.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { ENGINES, startServer, type RunningServer } from '../helpers/server.ts';

const SUBSCRIBERS = 1024;
const LATE_SUBSCRIBERS = 64;
const BATCHES = 40;
const RECORDS_PER_BATCH = 3;
/** Appends sent at once: enough that a commit can move the tail while the fan-out is mid-round. */
const APPENDS_IN_FLIGHT = 4;
/** Sockets opened at once (the listen backlog is finite). */
const CONNECT_WAVE = 128;
/** Liveness bound for connecting and for the last record to reach every subscriber. */
const WAIT_MS = 120_000;

const BUCKET = 'fanout';
const KEY = 's';

/** One raw subscriber: de-chunks the HTTP/1.1 body and parses SSE frames as they arrive. */
class RawSub {
  readonly sock: Socket;
  status = 0;
  /** seq_num → body, in the order frames carried them. */
  readonly seqs: number[] = [];
  readonly bodies: string[] = [];
  readonly ids: number[] = [];
  errorEvent: string | undefined;
  closed = false;
  private head = '';
  private headDone = false;
  /** Raw bytes not yet de-chunked, and de-chunked text not yet a whole frame. */
  private raw: Buffer = Buffer.alloc(0);
  private text = '';
  private waiters: (() => void)[] = [];

  constructor(port: number, path: string, headers: Record<string, string> = {}) {
    this.sock = connect(port, '127.0.0.1');
    const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    this.sock.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n${extra}\r\n`);
    this.sock.on('data', (c: Buffer) => { this.onData(c); this.notify(); });
    this.sock.on('close', () => { this.closed = true; this.notify(); });
    this.sock.on('error', () => { this.closed = true; this.notify(); });
  }

  private notify(): void {
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w();
  }

  /** Resolves once pred holds (checked on every arrival); rejects when the socket closes first or after WAIT_MS. */
  until(pred: () => boolean, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${what}: not within ${WAIT_MS} ms (have ${this.seqs.length} records)`)), WAIT_MS);
      const check = (): void => {
        if (pred()) { clearTimeout(timer); resolve(); return; }
        if (this.closed) { clearTimeout(timer); reject(new Error(`${what}: the stream closed (have ${this.seqs.length} records, error ${this.errorEvent ?? 'none'})`)); return; }
        this.waiters.push(check);
      };
      check();
    });
  }

  get opened(): boolean { return this.headDone; }

  private onData(c: Buffer): void {
    if (!this.headDone) {
      this.head += c.toString('latin1');
      const end = this.head.indexOf('\r\n\r\n');
      if (end < 0) return;
      this.status = Number(this.head.slice(9, 12));
      assert.match(this.head.slice(0, end), /transfer-encoding: chunked/i, 'both engines stream SSE chunked');
      c = Buffer.from(this.head.slice(end + 4), 'latin1');
      this.headDone = true;
    }
    this.raw = this.raw.length ? Buffer.concat([this.raw, c]) : c;
    // De-chunk: `<hex size>\r\n<bytes>\r\n`, as many whole chunks as there are.
    for (;;) {
      const nl = this.raw.indexOf('\r\n');
      if (nl < 0) break;
      const size = parseInt(this.raw.subarray(0, nl).toString('latin1'), 16);
      assert.ok(Number.isFinite(size), 'a chunk size line');
      if (this.raw.length < nl + 2 + size + 2) break;
      this.text += this.raw.subarray(nl + 2, nl + 2 + size).toString('utf8');
      this.raw = this.raw.subarray(nl + 2 + size + 2);
      if (size === 0) break;
    }
    this.takeFrames();
  }

  private takeFrames(): void {
    for (;;) {
      const idx = this.text.indexOf('\n\n');
      if (idx < 0) return;
      const block = this.text.slice(0, idx);
      this.text = this.text.slice(idx + 2);
      let id: string | undefined;
      let event: string | undefined;
      let data: string | undefined;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        if (line.startsWith('id: ')) id = line.slice(4);
        else if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data = line.slice(6);
      }
      if (event !== undefined) { this.errorEvent = `${event} ${data ?? ''}`; continue; }
      if (data === undefined) continue;
      const j = JSON.parse(data) as { records: { seq_num: number; body: string }[]; tail: { seq_num: number } };
      for (const r of j.records) { this.seqs.push(r.seq_num); this.bodies.push(r.body); }
      assert.equal(Number(id), j.tail.seq_num, 'a frame\'s id is its tail');
      this.ids.push(Number(id));
    }
  }
}

async function post(base: string, path: string, body: unknown): Promise<{ status: number; json: any }> {
  const r = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, json: await r.json().catch(() => undefined) };
}

async function openAll(port: number, n: number, path: string, headers?: Record<string, string>): Promise<RawSub[]> {
  const subs: RawSub[] = [];
  for (let w = 0; w < n; w += CONNECT_WAVE) {
    const wave: RawSub[] = [];
    for (let i = w; i < Math.min(n, w + CONNECT_WAVE); i++) wave.push(new RawSub(port, path, headers));
    await Promise.all(wave.map((s) => s.until(() => s.opened, 'subscribe')));
    subs.push(...wave);
  }
  for (const s of subs) assert.equal(s.status, 200);
  return subs;
}

/** Every record from `from` up to `end`, each once, in sequence order, with the body it was appended with. */
function assertExact(s: RawSub, from: number, end: number, bodyOf: Map<number, string>, who: string): void {
  assert.equal(s.errorEvent, undefined, `${who}: no error event`);
  assert.equal(s.seqs.length, end - from, `${who}: record count`);
  for (let i = 0; i < s.seqs.length; i++) {
    if (s.seqs[i] !== from + i) assert.fail(`${who}: record ${i} is seq ${s.seqs[i]}, expected ${from + i}`);
    if (s.bodies[i] !== bodyOf.get(from + i)) assert.fail(`${who}: seq ${from + i} carried ${s.bodies[i]}`);
  }
  for (let i = 1; i < s.ids.length; i++) assert.ok(s.ids[i] > s.ids[i - 1], `${who}: frame ids increase`);
}

for (const engine of ENGINES) {
  describe(`SSE fan-out to ${SUBSCRIBERS}+ subscribers on one stream (${engine})`, () => {
    let srv: RunningServer;
    before(async () => { srv = await startServer({ engine }); });
    after(async () => { await srv?.stop(); });

    test('every subscriber gets every record exactly once, in order; Last-Event-ID resumes exactly', async () => {
      assert.equal((await post(srv.baseUrl, `/v1/buckets/${BUCKET}`, {})).status, 201);
      assert.equal((await post(srv.baseUrl, `/v1/streams/${BUCKET}/${KEY}`, {})).status, 201);
      const subPath = `/v1/streams/${BUCKET}/${KEY}/records/subscribe?seq_num=0`;
      const early = await openAll(srv.port, SUBSCRIBERS, subPath);

      const bodyOf = new Map<number, string>();
      let late: RawSub[] = [];
      let resumeAt = -1;
      let next = 0;
      const appendOne = async (): Promise<void> => {
        const i = next++;
        const records = Array.from({ length: RECORDS_PER_BATCH }, (_, j) => ({ body: `b${i}-r${j}` }));
        const r = await post(srv.baseUrl, `/v1/streams/${BUCKET}/${KEY}/records`, { records });
        assert.equal(r.status, 200, JSON.stringify(r.json));
        records.forEach((rec, j) => bodyOf.set(r.json.start.seq_num + j, rec.body));
      };
      while (next < BATCHES) {
        await Promise.all(Array.from({ length: Math.min(APPENDS_IN_FLIGHT, BATCHES - next) }, appendOne));
        if (resumeAt < 0 && next >= BATCHES / 2) {
          // Half-way: a group resumes from where one early subscriber's last frame left it.
          const probe = early[0];
          await probe.until(() => probe.ids.length > 0, 'a first frame');
          resumeAt = probe.ids[probe.ids.length - 1];
          late = await openAll(srv.port, LATE_SUBSCRIBERS, `/v1/streams/${BUCKET}/${KEY}/records/subscribe`, { 'Last-Event-ID': String(resumeAt) });
        }
      }
      const end = BATCHES * RECORDS_PER_BATCH;
      assert.equal(bodyOf.size, end);
      const all = [...early, ...late];
      await Promise.all(all.map((s) => s.until(() => s.seqs.length > 0 && s.seqs[s.seqs.length - 1] >= end - 1, 'the last record')));
      early.forEach((s, i) => assertExact(s, 0, end, bodyOf, `early subscriber ${i}`));
      late.forEach((s, i) => assertExact(s, resumeAt, end, bodyOf, `late subscriber ${i}`));
      for (const s of all) s.sock.destroy();
    });
  });
}
