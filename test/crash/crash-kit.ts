// Shared pieces of the crash and durability tests: a seeded RNG, bounded JSON requests, a model of
// every batch a producer attempted (acked or ambiguous), and the verifier that reads a whole stream
// back after a restart and checks it against that model.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir } from '../helpers/server.ts';

export { within } from '../helpers/server.ts';

/** Every request gives up after this long: a bounded wait, never an assertion on time. */
export const REQUEST_TIMEOUT_MS = 20_000;
/** Pages a whole-stream read may take before it is declared stuck. */
const READ_PAGES_MAX = 100_000;
/** Records asked per read page. */
const READ_PAGE_RECORDS = 1000;

// ------------------------------------------------------------------------------------------ seed

/** The run's seed: SVCD_CRASH_SEED when set (to replay a failure), otherwise fresh. */
export function runSeed(): number {
  const fromEnv = process.env.SVCD_CRASH_SEED;
  if (fromEnv !== undefined && fromEnv !== '') return Number(fromEnv) >>> 0;
  return (Date.now() ^ (process.pid << 16)) >>> 0;
}

/** mulberry32: small, fast, good enough to pick delays, sizes and payload characters. */
export class Rng {
  private s: number;
  constructor(seed: number) { this.s = seed >>> 0; }
  u32(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  /** Integer in [lo, hi] inclusive. */
  int(lo: number, hi: number): number { return lo + (this.u32() % (hi - lo + 1)); }
  /** Random text of `n` characters; `unicode` mixes in multi-byte UTF-8 characters. */
  text(n: number, unicode = true): string {
    const ascii = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_+=/ ';
    const wide = ['é', 'ß', 'Ж', '中', '文', '€', '😀', '\\', '"', '\n', '\t'];
    let out = '';
    for (let i = 0; i < n; i++) {
      const r = this.u32();
      out += unicode && r % 13 === 0 ? wide[(r >>> 8) % wide.length] : ascii[(r >>> 8) % ascii.length];
    }
    return out;
  }
  /** A bulk ASCII payload of exactly `n` characters (base64 alphabet), cheap for large bodies. */
  bulk(n: number): string {
    const bytes = Buffer.allocUnsafe(Math.ceil((n * 3) / 4) + 4);
    for (let i = 0; i + 4 <= bytes.length; i += 4) bytes.writeUInt32LE(this.u32(), i);
    return bytes.toString('base64').slice(0, n);
  }
}

// ------------------------------------------------------------------------------------------ http

export interface Res { status: number; text: string; body: any }

export async function req(baseUrl: string, method: string, path: string, body?: unknown, timeoutMs = REQUEST_TIMEOUT_MS): Promise<Res> {
  const res = await fetch(baseUrl + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  let parsed: any;
  try { parsed = text.length ? JSON.parse(text) : undefined; } catch { parsed = undefined; }
  return { status: res.status, text, body: parsed };
}

export const streamPath = (b: string, k: string): string => `/v1/streams/${encodeURIComponent(b)}/${encodeURIComponent(k)}`;

export async function createBucket(baseUrl: string, bucket: string): Promise<void> {
  const r = await req(baseUrl, 'POST', `/v1/buckets/${encodeURIComponent(bucket)}`, {});
  assert.equal(r.status, 201, `create bucket ${bucket}: ${r.text}`);
}

export async function createStream(baseUrl: string, bucket: string, key: string): Promise<any> {
  const r = await req(baseUrl, 'POST', streamPath(bucket, key), {});
  assert.equal(r.status, 201, `create stream ${bucket}/${key}: ${r.text}`);
  return r.body;
}

export interface Position { seq_num: number; timestamp_ms: number }
export interface ReadRecord { seq_num: number; timestamp_ms: number; body?: string; body_b64?: string }

export async function getTail(baseUrl: string, bucket: string, key: string): Promise<Position> {
  const r = await req(baseUrl, 'GET', `${streamPath(bucket, key)}/records/tail`);
  assert.equal(r.status, 200, `tail ${bucket}/${key}: ${r.text}`);
  return r.body;
}

/** Reads a quiet stream from 0 to its tail, page by page (a page may be short), checking that the
 *  sequence numbers run 0, 1, 2, ... with no gap and no duplicate. */
export async function readAll(baseUrl: string, bucket: string, key: string): Promise<{ records: ReadRecord[]; tail: Position }> {
  const records: ReadRecord[] = [];
  let tail: Position | undefined;
  for (let page = 0; page < READ_PAGES_MAX; page++) {
    const r = await req(baseUrl, 'GET', `${streamPath(bucket, key)}/records?seq_num=${records.length}&limit=${READ_PAGE_RECORDS}`);
    assert.equal(r.status, 200, `read ${bucket}/${key} from ${records.length}: ${r.text.slice(0, 500)}`);
    const got: ReadRecord[] = r.body.records;
    tail = r.body.tail as Position;
    assert.ok(Array.isArray(got), `read answer has records: ${r.text.slice(0, 300)}`);
    for (const rec of got) {
      assert.equal(rec.seq_num, records.length,
        `${bucket}/${key}: expected seq_num ${records.length} next, got ${rec.seq_num} (gap or duplicate)`);
      records.push(rec);
    }
    if (records.length >= tail.seq_num) break;
    assert.ok(got.length > 0, `${bucket}/${key}: empty page at ${records.length} below the tail ${tail.seq_num}`);
  }
  assert.ok(tail, 'read returned a tail');
  assert.equal(records.length, tail.seq_num, `${bucket}/${key}: records served up to the tail ${tail.seq_num}, not past it`);
  return { records, tail };
}

// ------------------------------------------------------------------------------------------ model

/** What the checker keeps of a body: the text itself when short, a digest when long. */
export function digest(body: string): string {
  return body.length <= 256 ? body : `sha256:${createHash('sha256').update(body).digest('hex')}`;
}

export type BatchState = 'inflight' | 'acked' | 'ambiguous' | 'present' | 'absent';

export interface Batch {
  id: string;
  /** Digest of each record body, in order. */
  digests: string[];
  state: BatchState;
  /** From the append answer when acked. */
  start?: Position;
  end?: Position;
  /** Where the batch was found by a verification (acked or ambiguous ones that turned out present). */
  foundAt?: number;
  /** The HTTP status or error that left it unacknowledged. */
  why?: string;
}

/** Every body starts with `<tag>|`: the tag names its batch and index, the rest is payload. */
export const tagOf = (batchId: string, idx: number, n: number): string => `${batchId}.i${idx}.n${n}`;
const TAG_RE = /^([^|]*)\|/;

export class StreamModel {
  readonly batches = new Map<string, Batch>();
  /** Digest per seq_num, as verified after the last restart: a prefix that must never change. */
  verified: string[] = [];
  /** Records a concurrent reader saw during load: committed, so they must survive any crash. */
  readonly observed = new Map<number, string>();
  ackedCount = 0;
  ambiguousCount = 0;

  constructor(readonly bucket: string, readonly key: string) {}

  get name(): string { return `${this.bucket}/${this.key}`; }

  add(id: string, bodies: string[]): Batch {
    assert.ok(!this.batches.has(id), `batch id ${id} reused`);
    const b: Batch = { id, digests: bodies.map(digest), state: 'inflight' };
    this.batches.set(id, b);
    return b;
  }

  ack(b: Batch, answer: { start: Position; end: Position; tail: Position }): void {
    assert.equal(b.state, 'inflight');
    assert.equal(answer.end.seq_num - answer.start.seq_num, b.digests.length,
      `${this.name}: ack of batch ${b.id} spans ${answer.start.seq_num}..${answer.end.seq_num} for ${b.digests.length} records`);
    assert.ok(answer.tail.seq_num >= answer.end.seq_num, `${this.name}: ack tail ${answer.tail.seq_num} below end ${answer.end.seq_num}`);
    b.state = 'acked';
    b.start = answer.start;
    b.end = answer.end;
    this.ackedCount += 1;
  }

  unacked(b: Batch, why: string): void {
    assert.equal(b.state, 'inflight');
    b.state = 'ambiguous';
    b.why = why;
    this.ambiguousCount += 1;
  }

  maxAckedEnd(): number {
    let m = 0;
    for (const b of this.batches.values()) if (b.end && b.end.seq_num > m) m = b.end.seq_num;
    return m;
  }
}

export interface VerifyReport { records: number; acked: number; ambiguousPresent: number; ambiguousAbsent: number }

/** Reads the stream back whole and checks it against the model:
 *  - seq_nums run 0..tail with no gap and no duplicate (readAll);
 *  - every record belongs to an attempted batch, batches appear whole, in index order, contiguous, once;
 *  - every acked batch sits exactly at its acked seq_num with the same bodies and start timestamp;
 *  - the tail is at least the highest acked end, and the tail verb agrees with the read;
 *  - the previously verified prefix and every record seen by a live reader are unchanged;
 *  - an ambiguous batch found absent at an earlier restart never reappears.
 *  Then records the outcome (ambiguous batches become present or absent; the prefix grows). */
export async function verifyStream(baseUrl: string, m: StreamModel): Promise<VerifyReport> {
  const { records, tail } = await readAll(baseUrl, m.bucket, m.key);
  const tailVerb = await getTail(baseUrl, m.bucket, m.key);
  assert.equal(tailVerb.seq_num, tail.seq_num, `${m.name}: tail verb ${tailVerb.seq_num} vs read tail ${tail.seq_num}`);
  assert.ok(tail.seq_num >= m.maxAckedEnd(), `${m.name}: tail ${tail.seq_num} is below the highest acked end ${m.maxAckedEnd()}`);

  const digests = records.map((r, i) => {
    assert.equal(typeof r.body, 'string', `${m.name}@${i}: body should be text: ${JSON.stringify(r).slice(0, 200)}`);
    return digest(r.body!);
  });
  for (let i = 0; i < m.verified.length; i++) {
    assert.ok(i < digests.length, `${m.name}: record ${i} verified after an earlier restart is gone (tail now ${tail.seq_num})`);
    assert.equal(digests[i], m.verified[i], `${m.name}@${i}: record verified after an earlier restart changed`);
  }
  for (const [seq, d] of m.observed) {
    assert.ok(seq < digests.length, `${m.name}: record ${seq} served by a read before the crash is gone (tail now ${tail.seq_num})`);
    assert.equal(digests[seq], d, `${m.name}@${seq}: record served by a read before the crash changed`);
  }

  const seen = new Set<string>();
  let ambiguousPresent = 0;
  let acked = 0;
  let i = 0;
  while (i < records.length) {
    const body = records[i].body!;
    const tm = TAG_RE.exec(body);
    assert.ok(tm, `${m.name}@${i}: body has no batch tag, garbage served: ${JSON.stringify(body.slice(0, 120))}`);
    const parts = /^(.*)\.i(\d+)\.n(\d+)$/.exec(tm[1]);
    assert.ok(parts, `${m.name}@${i}: malformed tag ${tm[1]}`);
    const batch = m.batches.get(parts[1]);
    assert.ok(batch, `${m.name}@${i}: record from no attempted batch (${tm[1]}): garbage served`);
    assert.equal(Number(parts[2]), 0, `${m.name}@${i}: batch ${batch.id} starts at index ${parts[2]}, not 0 (torn batch)`);
    assert.ok(!seen.has(batch.id), `${m.name}@${i}: batch ${batch.id} appears twice (duplicate)`);
    seen.add(batch.id);
    const n = batch.digests.length;
    assert.ok(i + n <= records.length, `${m.name}@${i}: batch ${batch.id} of ${n} records cut by the tail ${records.length} (torn batch)`);
    for (let j = 0; j < n; j++) {
      assert.equal(digests[i + j], batch.digests[j],
        `${m.name}@${i + j}: expected record ${j} of batch ${batch.id} (contiguous, in order, same body)`);
    }
    switch (batch.state) {
      case 'acked':
        assert.equal(i, batch.start!.seq_num, `${m.name}: acked batch ${batch.id} found at ${i}, acked at ${batch.start!.seq_num}`);
        assert.equal(records[i].timestamp_ms, batch.start!.timestamp_ms, `${m.name}@${i}: timestamp differs from the ack's start`);
        acked += 1;
        break;
      case 'ambiguous':
        batch.foundAt = i;
        ambiguousPresent += 1;
        break;
      case 'present':
        assert.equal(i, batch.foundAt, `${m.name}: batch ${batch.id} moved from ${batch.foundAt} to ${i}`);
        break;
      case 'absent':
        assert.fail(`${m.name}@${i}: batch ${batch.id} was absent after an earlier restart and has now appeared`);
        break;
      case 'inflight':
        assert.fail(`${m.name}@${i}: batch ${batch.id} is still in flight during verification`);
    }
    i += n;
  }
  let ambiguousAbsent = 0;
  for (const b of m.batches.values()) {
    if (b.state === 'acked') {
      assert.ok(seen.has(b.id), `${m.name}: acked batch ${b.id} at ${b.start!.seq_num}..${b.end!.seq_num} is missing (acknowledged data lost)`);
    } else if (b.state === 'ambiguous') {
      if (seen.has(b.id)) b.state = 'present';
      else { b.state = 'absent'; ambiguousAbsent += 1; }
    }
  }
  m.verified = digests;
  return { records: records.length, acked, ambiguousPresent, ambiguousAbsent };
}

// ------------------------------------------------------------------------------------------ misc

/** WAL file numbers present under <dataDir>/wal, ascending. */
export function walFiles(dataDir: string): { no: number; path: string; bytes: number }[] {
  const dir = join(dataDir, 'wal');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => /^\d+\.wal$/.test(f))
    .map((f) => ({ no: Number(f.slice(0, -4)), path: join(dir, f), bytes: statSync(join(dir, f)).size }))
    .sort((a, b) => a.no - b.no);
}

/** Segment objects under <dataDir>/objects. */
export function segmentFiles(dataDir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    if (!existsSync(d)) return;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.endsWith('.seg')) out.push(join(d, e.name));
    }
  };
  walk(join(dataDir, 'objects'));
  return out;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `cond` every `everyMs` until it holds or `maxMs` passes; answers whether it held. */
export async function waitFor(cond: () => boolean | Promise<boolean>, maxMs: number, everyMs = 50): Promise<boolean> {
  const deadline = Date.now() + maxMs;
  for (;;) {
    if (await cond()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(everyMs);
  }
}

/** Ends a crash run: kills the server, and removes the data dir when the run passed or keeps it (and
 *  prints the server's last output) for inspection when it failed. */
export async function finishRun(
  t: { diagnostic(msg: string): void },
  server: { kill(): Promise<void>; output(): string },
  dataDir: string,
  ok: boolean,
): Promise<void> {
  await server.kill();
  if (ok) { removeDir(dataDir); return; }
  t.diagnostic(`data dir kept for inspection: ${dataDir}`);
  for (const line of server.output().slice(-3000).split('\n')) t.diagnostic(`server: ${line}`);
}
