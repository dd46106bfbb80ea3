// Tests of the history checker (test/helpers/history.ts). A seeded in-memory sequencer produces a
// valid concurrent history (overlapping operations, each taking effect at a random instant inside
// its interval, ambiguous appends landing after their caller gave up); the checker must accept it.
// Then one violation of each kind is planted in a copy, and the checker must report it, naming the
// operation(s) planted. A failure replays from its seed: SVCD_HISTORY_SEED=<seed>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rng } from './rng.ts';
import {
  Recorder, appendFailure, checkHistory, opLabel,
  type AppendOp, type AppendOutcome, type Op, type ReadOp, type ReadRecord, type TailOp,
} from './history.ts';

const SEED = Number(process.env.SVCD_HISTORY_SEED ?? Math.floor(Math.random() * 2 ** 31));
console.log(`history checker tests: SVCD_HISTORY_SEED=${SEED}`);

// ---------------------------------------------------------------- a valid history from a model

interface GenOptions {
  seed: number;
  clients: number;
  opsPerClient: number;
  streams: number;
}

/** An operation with the instant it takes effect (`atMs`), or undefined if it never does. */
interface Planned {
  op: Op;
  atMs: number | undefined;
  /** For reads: the start and page size, chosen once the tail is known. */
  pick?: (tail: number) => { start: number; limit: number };
  /** For appends: whether the caller hears the ack, or times out though it landed. */
  acked?: boolean;
}

/** Each client runs its operations one after another with random latencies and think times;
 *  all clients overlap. The model then applies every effect in time order, as one sequencer per
 *  stream would, and fills in what each operation observed. Ends with a complete read-back. */
function generate(o: GenOptions): Op[] {
  const rand = rng(o.seed);
  const plans: Planned[] = [];
  let nextId = 1;
  for (let c = 0; c < o.clients; c++) {
    let t = rand() * 5;
    for (let k = 0; k < o.opsPerClient; k++) {
      const plan = planOp(rand, nextId++, `c${c}`, `c${c}-${k}`, `s${Math.floor(rand() * o.streams)}`, t);
      plans.push(plan);
      t = plan.op.endMs + rand() * 2;
    }
  }
  const streams = new Map<string, string[]>();
  const effective = plans.filter((p) => p.atMs !== undefined).sort((a, b) => (a.atMs as number) - (b.atMs as number));
  for (const p of effective) apply(p, streams);
  const end = plans.reduce((hi, p) => Math.max(hi, p.op.endMs), 0);
  return [...plans.map((p) => p.op), ...readBack(streams, nextId, end)];
}

const NOT_YET = { status: 'error', reason: 'never took effect' } as const;

function planOp(rand: () => number, id: number, client: string, label: string, stream: string, t: number): Planned {
  const latency = 0.05 + rand() * rand() * 8; // mostly quick, a few slow: lots of overlap
  const common = { id, client, stream, startMs: t, endMs: t + latency };
  const within = t + rand() * latency;
  const r = rand();
  if (r < 0.5) return planAppend(rand, common, label, within);
  if (r < 0.8) {
    const pick = (tail: number) => ({ start: Math.max(0, tail - Math.floor(rand() * 30)), limit: 1 + Math.floor(rand() * 40) });
    return { op: { ...common, kind: 'read', startSeq: 0, outcome: NOT_YET }, atMs: within, pick };
  }
  return { op: { ...common, kind: 'check-tail', outcome: NOT_YET }, atMs: within };
}

type Common = Pick<Op, 'id' | 'client' | 'stream' | 'startMs' | 'endMs'>;

/** 76% acked, 8% refused (412), 6% ambiguous and never landed, 10% ambiguous and landed, up to
 *  twice its latency after the caller gave up. */
function planAppend(rand: () => number, common: Common, label: string, within: number): Planned {
  const n = 1 + Math.floor(rand() * 3);
  const bodies = Array.from({ length: n }, (_, i) => `${label}.${i}`);
  const op: AppendOp = { ...common, kind: 'append', bodies, outcome: { status: 'ambiguous', reason: 'timeout' } };
  const r = rand();
  if (r < 0.08) {
    op.outcome = { status: 'failed', reason: '412 match_seq_num miss' };
    return { op, atMs: undefined };
  }
  if (r < 0.14) return { op, atMs: undefined };
  if (r < 0.24) return { op, atMs: common.startMs + rand() * (common.endMs - common.startMs) * 3 };
  return { op, atMs: within, acked: true };
}

/** One sequencer per stream: the effect of `p` at its instant, and what it observed. */
function apply(p: Planned, streams: Map<string, string[]>): void {
  const op = p.op;
  let log = streams.get(op.stream);
  if (log === undefined) streams.set(op.stream, (log = []));
  if (op.kind === 'append') {
    const start = log.length;
    log.push(...op.bodies);
    if (p.acked === true) op.outcome = { status: 'ok', start, end: log.length, tail: log.length };
  } else if (op.kind === 'read') {
    const { start, limit } = (p.pick as NonNullable<Planned['pick']>)(log.length);
    op.startSeq = start;
    op.outcome = { status: 'ok', records: page(log, start, limit), tail: log.length };
  } else {
    op.outcome = { status: 'ok', tail: log.length };
  }
}

function page(log: string[], start: number, limit: number): ReadRecord[] {
  return log.slice(start, start + limit).map((body, i) => ({ seq_num: start + i, body }));
}

/** The read-back a cluster test ends with: every stream paged from 0, one page after another. */
function readBack(streams: Map<string, string[]>, firstId: number, afterMs: number): ReadOp[] {
  const reads: ReadOp[] = [];
  let t = afterMs + 1;
  for (const [stream, log] of streams) {
    for (let start = 0; start === 0 || start < log.length; start += 100) {
      const records = page(log, start, 100);
      reads.push({ id: firstId + reads.length, stream, client: 'read-back', kind: 'read', startSeq: start, startMs: t, endMs: t + 1, outcome: { status: 'ok', records, tail: log.length } });
      t += 2;
    }
  }
  return reads;
}

// ---------------------------------------------------------------- helpers for planting

type OkAppend = AppendOp & { outcome: Extract<AppendOutcome, { status: 'ok' }> };
type OkRead = ReadOp & { outcome: { status: 'ok'; records: ReadRecord[]; tail: number } };

const appends = (h: Op[]): AppendOp[] => h.filter((op): op is AppendOp => op.kind === 'append');
const acked = (h: Op[]): OkAppend[] => appends(h).filter((op): op is OkAppend => op.outcome.status === 'ok');
const okReads = (h: Op[]): OkRead[] => h.filter((op): op is OkRead => op.kind === 'read' && op.outcome.status === 'ok');
const tails = (h: Op[]): TailOp[] => h.filter((op): op is TailOp => op.kind === 'check-tail');

function fresh(seed = SEED, opsPerClient = 150): Op[] {
  return generate({ seed, clients: 12, opsPerClient, streams: 3 });
}

function pickOne<T>(items: T[], what: string): T {
  const it = items[Math.floor(items.length / 2)];
  assert.ok(it !== undefined, `seed ${SEED}: the generated history has no ${what} to plant a violation on`);
  return it;
}

/** Asserts some violation matches every pattern, and prints them all if none does. */
function assertReported(violations: string[], ...patterns: (string | RegExp)[]): void {
  const hit = violations.some((v) => patterns.every((p) => (typeof p === 'string' ? v.includes(p) : p.test(v))));
  assert.ok(hit, `seed ${SEED}: no violation matches ${patterns.join(' & ')}; got:\n${violations.join('\n') || '(none)'}`);
}

/** Whether an acknowledged append sits above `a` in its stream. A lost record at the very top leaves
 *  no hole for a page to show (a page may end short of the tail, at the settled frontier), so only a
 *  complete read-back can tell it; the planted losses that must show in a page need one above. */
function followed(h: Op[], a: OkAppend): boolean {
  return acked(h).some((b) => b.stream === a.stream && b.outcome.start >= a.outcome.end);
}

/** A word boundary after the label, so append#1 does not match append#12. */
const named = (op: Op): RegExp => new RegExp(`${opLabel(op)}(?![0-9])`);

/** Rewrites the records of every read (of `stream`, if given) with `f`, which may drop, move or
 *  add records. */
function rewriteReads(h: Op[], f: (records: ReadRecord[]) => ReadRecord[], stream?: string): void {
  for (const r of okReads(h)) if (stream === undefined || r.stream === stream) r.outcome.records = f(r.outcome.records);
}

// ---------------------------------------------------------------- the tests

test('a valid concurrent history passes (and is really concurrent)', () => {
  const h = generate({ seed: SEED, clients: 40, opsPerClient: 500, streams: 4 });
  assert.ok(h.length >= 20_000);
  assert.deepEqual(checkHistory(h, { complete: true }), [], `seed ${SEED}`);
  // The checker must allow what overlap allows: an append that began later yet sits lower.
  const at = new Map(acked(h).map((a) => [`${a.stream}@${a.outcome.start}`, a]));
  const inverted = acked(h).some((b) => {
    const a = at.get(`${b.stream}@${b.outcome.end}`); // acked right above b
    return a !== undefined && a.startMs < b.startMs && b.startMs < a.endMs;
  });
  assert.ok(inverted, `seed ${SEED}: the model produced no overlapping appends in inverted order`);
  assert.ok(appends(h).some((a) => a.outcome.status === 'ambiguous' && okReads(h).some((r) => r.outcome.records.some((x) => x.body === a.bodies[0]))), 'no ambiguous append landed');
});

test('planted: a lost acknowledged record', () => {
  const h = fresh();
  const victim = pickOne(acked(h).filter((a) => followed(h, a)), 'acked append with one after it');
  const lost = victim.bodies[0];
  rewriteReads(h, (rs) => rs.filter((r) => r.body !== lost));
  const v = checkHistory(h, { complete: true });
  assertReported(v, /^\[s\d\] lost: no read returned \[\d+,\d+\) though/, named(victim));
  // Without a complete read-back the hole in a page still names it.
  assertReported(checkHistory(h), /lost: read#\d+ from seq \d+ skips/, named(victim));
});

test('planted: a lost acknowledged record whose position was given to the next one', () => {
  const h = fresh();
  const victim = pickOne(acked(h).filter((a) => a.bodies.length === 1 && followed(h, a)), 'one-record acked append with one after it');
  const at = victim.outcome.start;
  rewriteReads(h, (rs) => rs.filter((r) => r.body !== victim.bodies[0]).map((r) => (r.seq_num > at ? { ...r, seq_num: r.seq_num - 1 } : r)), victim.stream);
  assertReported(checkHistory(h), /lost:/, named(victim));
});

test('planted: a reordered pair of appends', () => {
  const h = fresh();
  const pairs = acked(h).flatMap((a) => acked(h).filter((b) => b.stream === a.stream && b.outcome.start === a.outcome.end && b.bodies.length === a.bodies.length && a.endMs < b.startMs).map((b) => [a, b] as const));
  const [a, b] = pickOne(pairs, 'pair of consecutive real-time-ordered appends');
  // Swap their positions everywhere: b now sits where a did, though a finished before b began.
  const [aStart, bStart] = [a.outcome.start, b.outcome.start];
  a.outcome = { ...a.outcome, start: bStart, end: bStart + a.bodies.length, tail: Math.max(a.outcome.tail ?? 0, bStart + a.bodies.length) };
  b.outcome = { ...b.outcome, start: aStart, end: aStart + b.bodies.length };
  rewriteReads(h, (rs) => rs.map((r) => {
    const ia = a.bodies.indexOf(r.body);
    const ib = b.bodies.indexOf(r.body);
    return ia >= 0 ? { ...r, seq_num: bStart + ia } : ib >= 0 ? { ...r, seq_num: aStart + ib } : r;
  }));
  for (const r of okReads(h)) r.outcome.records.sort((x, y) => x.seq_num - y.seq_num);
  assertReported(checkHistory(h, { complete: true }), /order:/, named(a), named(b));
});

test('planted: a stale read after an acknowledged append', () => {
  const h = fresh();
  const reads = okReads(h).filter((r) => r.client !== 'read-back' && ackedBefore(h, r) !== undefined);
  const read = pickOne(reads, 'read after an acked append');
  const a = ackedBefore(h, read) as OkAppend;
  // The read misses a: its tail stops at a's start, and its page with it.
  read.outcome = { status: 'ok', tail: a.outcome.start, records: read.outcome.records.filter((r) => r.seq_num < a.outcome.start) };
  assertReported(checkHistory(h), /stale:/, named(read), named(a));
});

/** The acked append with the highest end among those finished before `op` began. */
function ackedBefore(h: Op[], op: Op): OkAppend | undefined {
  const before = acked(h).filter((a) => a.stream === op.stream && a.endMs < op.startMs);
  return before.sort((x, y) => y.outcome.end - x.outcome.end)[0];
}

test('planted: a tail going backwards', () => {
  const h = fresh();
  const ok = tails(h).filter((t) => t.outcome.status === 'ok');
  const pairs = ok.flatMap((t1) => ok.filter((t2) => t2.stream === t1.stream && t1.endMs < t2.startMs && t1.outcome.status === 'ok' && t1.outcome.tail > 0).map((t2) => [t1, t2] as const).slice(0, 1));
  const [t1, t2] = pickOne(pairs, 'pair of real-time-ordered tail checks');
  t2.outcome = { status: 'ok', tail: (t1.outcome as { tail: number }).tail - 1 };
  assertReported(checkHistory(h), /tail went backwards:/, named(t2));
});

test('planted: a duplicate record', () => {
  const h = fresh();
  const read = pickOne(okReads(h).filter((r) => r.client === 'read-back' && r.outcome.records.length > 10), 'read-back page');
  // A retried batch written twice: the record again right after itself, everything after shifted.
  const rs = read.outcome.records;
  const dup = rs[3];
  read.outcome.records = [...rs.slice(0, 4), { ...dup, seq_num: dup.seq_num + 1 }, ...rs.slice(4).map((r) => ({ ...r, seq_num: r.seq_num + 1 }))];
  read.outcome.tail += 1;
  assertReported(checkHistory(h), /duplicate:/, `'${dup.body}'`, named(read));
});

test('planted: a record at two positions', () => {
  const h = fresh();
  const seenBy = new Map<string, OkRead[]>();
  for (const r of okReads(h)) for (const x of r.outcome.records) seenBy.set(x.body, [...(seenBy.get(x.body) ?? []), r]);
  const reads = okReads(h).filter((r) => r.client !== 'read-back' && r.outcome.records.length >= 2);
  const read = pickOne(reads, 'read of two records');
  // Two reads disagree: this one shows its first two records swapped.
  const [x, y] = read.outcome.records;
  read.outcome.records = [{ seq_num: x.seq_num, body: y.body }, { seq_num: y.seq_num, body: x.body }, ...read.outcome.records.slice(2)];
  const v = checkHistory(h);
  assertReported(v, /duplicate: .* at two positions/, `'${x.body}'`, named(read));
  assertReported(v, /two bodies at one position: seq \d+/, named(read));
});

test('planted: a record from a failed append', () => {
  const h = fresh();
  const failed = pickOne(appends(h).filter((a) => a.outcome.status === 'failed'), 'failed append');
  const read = pickOne(okReads(h).filter((r) => r.client === 'read-back' && r.stream === failed.stream && r.outcome.records.length > 0), 'read-back page of its stream');
  const last = read.outcome.records[read.outcome.records.length - 1];
  // It landed after all, at the end of the stream.
  read.outcome.records.push({ seq_num: last.seq_num + 1, body: failed.bodies[0] });
  read.outcome.tail = Math.max(read.outcome.tail, last.seq_num + 2);
  assertReported(checkHistory(h), /failed append visible:/, named(failed));
});

test('planted: a torn ambiguous append', () => {
  const h = fresh();
  const landed = new Set(okReads(h).flatMap((r) => r.outcome.records.map((x) => x.body)));
  const amb = pickOne(appends(h).filter((a) => a.outcome.status === 'ambiguous' && a.bodies.length >= 2 && landed.has(a.bodies[0])), 'landed ambiguous append of two records or more');
  // Its first two records landed in the wrong order.
  const [first, second] = amb.bodies;
  rewriteReads(h, (rs) => rs.map((r) => (r.body === first ? { ...r, body: second } : r.body === second ? { ...r, body: first } : r)));
  assertReported(checkHistory(h), /torn:/, named(amb));
  // Or only part of it landed: its last record is nowhere.
  const h2 = fresh();
  const amb2 = h2.find((op) => op.id === amb.id) as AppendOp;
  const gone = amb2.bodies[amb2.bodies.length - 1];
  rewriteReads(h2, (rs) => rs.filter((r) => r.body !== gone));
  assertReported(checkHistory(h2, { complete: true }), /torn: only/, named(amb2));
});

test('planted: a record no append sent', () => {
  const h = fresh();
  const read = pickOne(okReads(h).filter((r) => r.outcome.records.length > 0), 'read');
  read.outcome.records[0] = { ...read.outcome.records[0], body: 'from-nowhere' };
  assertReported(checkHistory(h), /unknown: .*'from-nowhere'/, named(read));
});

test('planted: an ack for the wrong number of records, and an ack tail below its end', () => {
  const h = fresh();
  const a = pickOne(acked(h), 'acked append');
  a.outcome = { ...a.outcome, end: a.outcome.end + 1, tail: a.outcome.start };
  const v = checkHistory(h);
  assertReported(v, /ack: .*sent \d+ records but was acknowledged/, named(a));
  assertReported(v, /ack: .*with tail \d+ below its end/, named(a));
});

test('maxViolations bounds the report', () => {
  const h = fresh();
  rewriteReads(h, (rs) => rs.map((r) => ({ ...r, seq_num: r.seq_num + 1 })));
  const v = checkHistory(h, { maxViolations: 5 });
  assert.equal(v.length, 6);
  assert.match(v[5], /^\.\.\. and \d+ more violations$/);
});

// ---------------------------------------------------------------- the recorder

test('Recorder stamps begin and end from its clock, keeps pending appends as ambiguous', () => {
  let now = 0;
  const rec = new Recorder(() => now);
  const a = rec.begin('append', { stream: 's', bodies: ['x.0', 'x.1'], client: 'p0' });
  now = 1;
  const r = rec.begin('read', { stream: 's', startSeq: 0 });
  const t = rec.begin('check-tail', { stream: 's' });
  const lost = rec.begin('append', { stream: 's', bodies: ['y.0'] });
  now = 2;
  a.end({ status: 'ok', start: 0, end: 2, tail: 2 });
  now = 3;
  t.end({ status: 'ok', tail: 2 });
  r.end({ status: 'ok', records: [{ seq_num: 0, body: 'x.0' }, { seq_num: 1, body: 'x.1' }], tail: 2 });
  rec.begin('read', { stream: 's', startSeq: 0 }); // in flight: observed nothing yet
  // @ts-expect-error: a read's handle takes a read's outcome, not an append's (never called)
  void (() => r.end({ status: 'ok', start: 0, end: 1 }));
  assert.throws(() => a.end({ status: 'failed', reason: 'again' }), /ended twice/);
  const h = rec.history();
  assert.deepEqual(h.map((op) => [opLabel(op), op.startMs, op.endMs]), [['append#1', 0, 2], ['read#2', 1, 3], ['check-tail#3', 1, 3], ['append#4', 1, Infinity]]);
  assert.equal(lost.label, 'append#4');
  assert.deepEqual((h[3] as AppendOp).outcome, { status: 'ambiguous', reason: 'still in flight' });
  assert.deepEqual(checkHistory(h, { complete: true }), []);
  // The pending append may still land: seen later, it is whole and allowed.
  const r2 = rec.begin('read', { stream: 's', startSeq: 2 });
  r2.end({ status: 'ok', records: [{ seq_num: 2, body: 'y.0' }], tail: 3 });
  assert.deepEqual(checkHistory(rec.history(), { complete: true }), []);
});

test('appendFailure: a 4xx is definitely not applied, anything else may have been', () => {
  assert.equal(appendFailure(412, 'match miss').status, 'failed');
  assert.equal(appendFailure(400, 'bad').status, 'failed');
  assert.equal(appendFailure(503, 'lease moving').status, 'ambiguous');
  assert.equal(appendFailure(500, 'bug').status, 'ambiguous');
  assert.equal(appendFailure(408, 'request timeout').status, 'ambiguous');
  assert.equal(appendFailure(undefined, 'ECONNRESET').status, 'ambiguous');
});
