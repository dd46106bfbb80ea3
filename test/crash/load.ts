// Concurrent load for the crash tests: producers appending small tagged batches to several streams,
// one conditional producer (match_seq_num) owning its own stream, and a live reader per stream. Every
// answer lands in the StreamModel, so a verification after a SIGKILL knows what was acknowledged.
import assert from 'node:assert/strict';
import { Rng, digest, req, sleep, streamPath, tagOf, type StreamModel } from './crash-kit.ts';

export interface LoadOptions {
  baseUrl: string;
  /** Streams shared by the free producers. */
  shared: StreamModel[];
  /** A stream written only by the conditional producer, or none. */
  exclusive?: StreamModel;
  producers: number;
  seed: number;
  /** Distinguishes batch ids across cycles. */
  cycle: number;
  recordsMax?: number;
}

export interface Load {
  /** Resolves at the first acknowledged batch (or when the load ends). */
  firstAck: Promise<void>;
  /** Stops issuing new requests; in-flight ones still settle. */
  stop(): void;
  /** Resolves when every producer and reader has ended. */
  done: Promise<void>;
  /** HTTP answers that were neither 200 nor back-pressure: each is a server-side failure under load. */
  anomalies: string[];
  acked(): number;
}

const BACKOFF_MS = 20;

export function startLoad(o: LoadOptions): Load {
  let stopped = false;
  let acked = 0;
  let ackedResolve!: () => void;
  const firstAck = new Promise<void>((r) => { ackedResolve = r; });
  const anomalies: string[] = [];
  const recordsMax = o.recordsMax ?? 20;

  const onAck = (): void => { acked += 1; ackedResolve(); };

  const body = (r: Rng, id: string, i: number, n: number, key: string): string =>
    `${tagOf(id, i, n)}|${key}|${r.text(r.int(0, 48))}`;

  const producer = async (pid: number): Promise<void> => {
    const r = new Rng(o.seed ^ Math.imul(pid + 1, 0x9e3779b1) ^ Math.imul(o.cycle + 1, 0x85ebca6b));
    for (let counter = 0; !stopped; counter++) {
      const m = o.shared[r.int(0, o.shared.length - 1)];
      const n = r.int(1, recordsMax);
      const id = `c${o.cycle}p${pid}n${counter}`;
      const bodies = Array.from({ length: n }, (_, i) => body(r, id, i, n, m.key));
      const b = m.add(id, bodies);
      let res;
      try {
        res = await req(o.baseUrl, 'POST', `${streamPath(m.bucket, m.key)}/records`, { records: bodies.map((x) => ({ body: x })) });
      } catch (err) {
        m.unacked(b, errText(err));
        return; // the server is gone (or going): this producer's cycle is over
      }
      if (res.status === 200) { m.ack(b, res.body); onAck(); continue; }
      m.unacked(b, `HTTP ${res.status}`);
      if (res.status !== 429) anomalies.push(`${m.name} batch ${id}: HTTP ${res.status} ${res.text.slice(0, 200)}`);
      await sleep(BACKOFF_MS);
    }
  };

  /** The only writer of its stream: every append names the seq_num it must land at. */
  const conditional = async (m: StreamModel): Promise<void> => {
    const r = new Rng(o.seed ^ 0x51ed270b ^ Math.imul(o.cycle + 1, 0x27d4eb2f));
    let next = m.verified.length; // the tail verified after the last restart
    for (let counter = 0; !stopped; counter++) {
      const n = r.int(1, recordsMax);
      const id = `c${o.cycle}x${counter}`;
      const bodies = Array.from({ length: n }, (_, i) => body(r, id, i, n, m.key));
      const b = m.add(id, bodies);
      let res;
      try {
        res = await req(o.baseUrl, 'POST', `${streamPath(m.bucket, m.key)}/records`,
          { records: bodies.map((x) => ({ body: x })), match_seq_num: next });
      } catch (err) {
        m.unacked(b, errText(err));
        return;
      }
      if (res.status === 200) {
        assert.equal(res.body.start.seq_num, next, `${m.name}: conditional append at ${next} landed at ${res.body.start.seq_num}`);
        m.ack(b, res.body);
        next = res.body.end.seq_num;
        onAck();
        continue;
      }
      m.unacked(b, `HTTP ${res.status}`);
      if (res.status !== 429) {
        // A sole writer never misses its own tail: a 412 here means the server's tail moved under it.
        anomalies.push(`${m.name} conditional batch ${id} at ${next}: HTTP ${res.status} ${res.text.slice(0, 200)}`);
        return;
      }
      await sleep(BACKOFF_MS);
    }
  };

  /** Follows a stream while it is written; everything it is served is committed and must survive. */
  const reader = async (m: StreamModel): Promise<void> => {
    let pos = m.verified.length;
    while (!stopped) {
      let res;
      try {
        res = await req(o.baseUrl, 'GET', `${streamPath(m.bucket, m.key)}/records?seq_num=${pos}&limit=500`);
      } catch {
        return;
      }
      if (res.status !== 200) {
        anomalies.push(`${m.name} read at ${pos}: HTTP ${res.status} ${res.text.slice(0, 200)}`);
        return;
      }
      for (const rec of res.body.records as { seq_num: number; body: string }[]) {
        if (rec.seq_num !== pos) {
          anomalies.push(`${m.name} live read: expected seq_num ${pos}, got ${rec.seq_num}`);
          return;
        }
        if (rec.seq_num >= res.body.tail.seq_num) {
          anomalies.push(`${m.name} live read: record ${rec.seq_num} served at or past the tail ${res.body.tail.seq_num}`);
          return;
        }
        m.observed.set(pos, digest(rec.body));
        pos += 1;
      }
      if (res.body.records.length === 0) await sleep(10);
    }
  };

  const tasks: Promise<void>[] = [];
  for (let p = 0; p < o.producers; p++) tasks.push(producer(p));
  if (o.exclusive) tasks.push(conditional(o.exclusive));
  for (const m of [...o.shared, ...(o.exclusive ? [o.exclusive] : [])]) tasks.push(reader(m));
  const done = Promise.all(tasks).then(() => { ackedResolve(); });
  return { firstAck, stop: () => { stopped = true; }, done, anomalies, acked: () => acked };
}

function errText(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  return `${e?.name ?? 'Error'}: ${e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err)}`;
}
