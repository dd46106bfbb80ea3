// Helpers for the dependency-fault tests (test/crash/dependency-faults.test.ts): producers that
// remember exactly what was acknowledged, a check that every acknowledged record reads back at its
// sequence number with its body, the ops listener's /readyz and /metrics, and a small tmpfs the test
// mounts itself (root only) to fill a file system for real.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, startServer, tempDir, waitForOutput, type RunningServer } from '../helpers/server.ts';
import { dropSchema, freshSchema, TEST_POSTGRES_URL } from '../helpers/postgres.ts';
import { TcpRelay } from '../helpers/tcp-relay.ts';

/** One request's longest wait; a star that hangs fails the test instead of stalling it. */
const REQUEST_MS_MAX = 20_000;
/** Pause between a producer's refused append and its next try. */
const RETRY_PAUSE_MS = 20;

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface Answer { status: number; body: any; text: string }

export async function call(baseUrl: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(baseUrl + path, {
    method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_MS_MAX),
  });
  const text = await res.text();
  let parsed: unknown;
  try { parsed = text ? JSON.parse(text) : undefined; } catch { parsed = undefined; }
  return { status: res.status, body: parsed, text };
}

export async function ok(baseUrl: string, method: string, path: string, body?: unknown): Promise<any> {
  const a = await call(baseUrl, method, path, body);
  assert.ok(a.status < 300, `${method} ${path}: ${a.status} ${a.text}`);
  return a.body;
}

/** What producers were told: seq_num -> body of every acknowledged record, and the refusals seen. */
export class Acks {
  readonly bySeq = new Map<number, string>();
  readonly refusals = new Map<number, number>();
  /** The body of every refused append, with the refusal's text. */
  readonly refusedBodies = new Map<string, string>();
  /** Answers that are neither 200 nor a documented refusal (503 while a dependency is away, 429). */
  readonly anomalies: string[] = [];
  /** Requests that never answered (a broken connection, a timeout). */
  unanswered = 0;
  get count(): number { return this.bySeq.size; }
}

/** Producers appending one-record batches to bucket/key until `stop()`; refused appends are retried
 *  with new bodies (a refusal is never counted as acknowledged). */
/** Producers still running: a test that fails before it stops its own leaves them here, and
 *  stopProducers() (in the file's after hook) ends them, or they would keep the process alive. */
const running = new Set<{ stop(): Promise<void> }>();

export async function stopProducers(): Promise<void> {
  await Promise.all([...running].map((p) => p.stop()));
}

export function produce(baseUrl: () => string, bucket: string, key: string, producers: number, acks: Acks): { stop(): Promise<void> } {
  let stopped = false;
  let n = 0;
  const one = async (pid: number): Promise<void> => {
    while (!stopped) {
      const body = `p${pid}-${n++}`;
      let a: Answer;
      try {
        a = await call(baseUrl(), 'POST', `/v1/streams/${bucket}/${encodeURIComponent(key)}/records`, { records: [{ body }] });
      } catch {
        acks.unanswered += 1;
        await sleep(RETRY_PAUSE_MS);
        continue;
      }
      if (a.status === 200) {
        const seq = a.body.start.seq_num as number;
        assert.ok(!acks.bySeq.has(seq), `seq_num ${seq} acknowledged twice`);
        acks.bySeq.set(seq, body);
        continue;
      }
      acks.refusals.set(a.status, (acks.refusals.get(a.status) ?? 0) + 1);
      acks.refusedBodies.set(body, a.text);
      if (a.status !== 503 && a.status !== 429) acks.anomalies.push(`${a.status} ${a.text}`);
      else assert.equal(typeof a.body?.error, 'string', `a refusal carries the error envelope: ${a.text}`);
      await sleep(RETRY_PAUSE_MS);
    }
  };
  const all = Promise.all(Array.from({ length: producers }, (_, i) => one(i)));
  const handle = {
    async stop(): Promise<void> {
      stopped = true;
      running.delete(handle);
      await all.catch(() => undefined);
    },
  };
  running.add(handle);
  return handle;
}

/** Bucket `b` and stream `s` on the star, `producers` producers appending to it, and at least
 *  `warm` appends acknowledged. */
export async function loaded(star: RunningServer, producers: number, warm: number): Promise<{ acks: Acks; load: { stop(): Promise<void> } }> {
  await ok(star.baseUrl, 'POST', '/v1/buckets/b', {});
  await ok(star.baseUrl, 'POST', '/v1/streams/b/s', {});
  const acks = new Acks();
  const load = produce(() => star.baseUrl, 'b', 's', producers, acks);
  if (warm > 0) await until('appends acknowledged', () => acks.count > warm);
  return { acks, load };
}

/** Stops the producers, checks no answer was out of the spec's envelope, and that every ack reads
 *  back before and after a SIGKILL and a restart; resolves with the restarted star. */
export async function verifyAcrossKill(
  star: RunningServer, load: { stop(): Promise<void> }, acks: Acks, restart: () => Promise<RunningServer>,
): Promise<RunningServer> {
  await load.stop();
  assert.deepEqual(acks.anomalies, []);
  await verifyAcks(star.baseUrl, 'b', 's', acks);
  await star.kill();
  const again = await restart();
  await verifyAcks(again.baseUrl, 'b', 's', acks);
  return again;
}

/** Every acknowledged record reads back at its seq_num with its body; the stream has no gap. */
export async function verifyAcks(baseUrl: string, bucket: string, key: string, acks: Acks): Promise<number> {
  const got = await readStream(baseUrl, bucket, key);
  for (const [s, body] of acks.bySeq) assert.equal(got.get(s), body, `acknowledged record ${s} (${body}) reads back as ${got.get(s)} (${got.size} records read, ${acks.count} acknowledged)`);
  return got.size;
}

/** The whole stream, seq_num -> body, checked gap-free. */
export async function readStream(baseUrl: string, bucket: string, key: string): Promise<Map<number, string>> {
  const got = new Map<number, string>();
  let seq = 0;
  for (let pages = 0; pages < 100_000; pages++) {
    const page = await ok(baseUrl, 'GET', `/v1/streams/${bucket}/${encodeURIComponent(key)}/records?seq_num=${seq}`);
    for (const r of page.records as { seq_num: number; body: string }[]) {
      assert.equal(r.seq_num, seq, `a gap or a duplicate at ${seq}`);
      got.set(seq++, r.body);
    }
    if (seq >= page.tail.seq_num) break;
  }
  return got;
}

/** The ops listener's address, from the star's start line. */
export async function opsUrl(star: RunningServer): Promise<string> {
  return (await waitForOutput(star, /svcd ops on (http:\/\/[^ ]+)/))[1];
}

export async function readyz(ops: string): Promise<number> {
  return (await fetch(`${ops}/readyz`, { signal: AbortSignal.timeout(REQUEST_MS_MAX) })).status;
}

/** A sample of /metrics, or undefined when the series is absent. */
export async function metric(ops: string, name: string, labelPart: string): Promise<number | undefined> {
  const text = await (await fetch(`${ops}/metrics`, { signal: AbortSignal.timeout(REQUEST_MS_MAX) })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labelPart));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

export async function until(what: string, cond: () => boolean | Promise<boolean>, maxMs = 30_000): Promise<void> {
  const deadline = Date.now() + maxMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** Why a tmpfs cannot be mounted here ('' when it can): mounting needs root. */
export function tmpfsSkipReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'mounting a small tmpfs to fill needs root; run the tests as root to include it';
  return undefined; // node:test skips on any string, the empty one too
}

/** A tmpfs of `bytes` mounted at `dir` (made when absent), and a file that fills it. */
export class SmallFs {
  private readonly filler: string;
  constructor(readonly dir: string, bytes: number) {
    mkdirSync(dir, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir]);
    this.filler = join(dir, 'filler.bin');
  }

  /** Writes zeros until the file system refuses with ENOSPC. */
  fill(): void {
    const chunk = Buffer.alloc(64 * 1024);
    try {
      writeFileSync(this.filler, '');
      for (;;) writeFileSync(this.filler, chunk, { flag: 'a' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
    }
    // Small writes may still fit in the last partial block: take that too.
    try { for (;;) writeFileSync(this.filler, Buffer.alloc(512), { flag: 'a' }); } catch { /* full */ }
  }

  free(): void { rmSync(this.filler, { force: true }); }

  unmount(): void {
    try { execFileSync('umount', ['-l', this.dir]); } catch { /* already gone */ }
  }
}

/** A star on PostgreSQL metadata (a cluster of one) that reaches PostgreSQL through a proxy the test
 *  can break (helpers/tcp-relay.ts), on a fresh schema and data dir; `cleanups` gets what undoes them. */
export async function starBehindPostgresProxy(cleanups: (() => Promise<void> | void)[], args: string[] = []): Promise<{ proxy: TcpRelay; star: RunningServer }> {
  const proxy = TcpRelay.toUrl(new URL(TEST_POSTGRES_URL));
  await proxy.start();
  cleanups.push(() => proxy.close());
  const schema = freshSchema();
  const dataDir = tempDir();
  cleanups.push(() => removeDir(dataDir), () => dropSchema(schema));
  const star = await startServer({
    dataDir, args: ['--metadata', 'postgres', '--postgres-url', proxy.urlFor(new URL(TEST_POSTGRES_URL)), '--postgres-schema', schema, ...args],
  });
  cleanups.push(() => star.stop());
  return { proxy, star };
}
