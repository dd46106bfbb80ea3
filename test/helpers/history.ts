// A recorded history of appends, reads and tail checks on streams, and a checker for per-stream
// linearizability (issue 10, "A history checker in test/"). A cluster test wraps each real HTTP
// call in `Recorder.begin(...)` / `handle.end(outcome)`; `checkHistory` then looks for anything no
// single sequencer could have produced: lost or moved acknowledged records, appends out of real-time
// order, stale reads and tails, tails going backwards, records from nowhere, from a failed append,
// torn, duplicated, or at two positions.
//
// The model (spec: Records, Append, Read, Check Tail): each stream has one committed tail that only
// grows; an append takes effect at one instant between its start and its end, at positions
// [start, end); a read or tail check observes the committed tail at one instant inside its own
// interval. An ambiguous append (timeout, 5xx, connection error) may take effect at any time after
// it began, even after the caller gave up, or never; a failed one (4xx) never does.
//
// The real-time checks are sweeps over operations sorted by time (O(n log n)): for each probe
// (an observed tail, or an append's first position) the checker keeps the highest value that was
// already established by an operation that *ended* before the probe *began*; anything lower is a
// violation. Only the strongest such witness is named, which keeps the report to one line per
// offending operation.

// ---------------------------------------------------------------- the recorded history

/** One record as a read returned it (the body is the unique label the test sent). */
export interface ReadRecord {
  seq_num: number;
  body: string;
}

/** `failed`: definitely not applied (a 4xx such as 400 or 412). `ambiguous`: may or may not have
 *  been applied (timeout, 5xx, connection error), and may land after the caller gave up. */
export type AppendOutcome =
  | { status: 'ok'; start: number; end: number; tail?: number }
  | { status: 'failed'; reason: string }
  | { status: 'ambiguous'; reason: string };

/** A read or tail check that did not answer tells nothing, whatever the reason. */
export type ReadOutcome = { status: 'ok'; records: ReadRecord[]; tail: number } | { status: 'error'; reason: string };
export type TailOutcome = { status: 'ok'; tail: number } | { status: 'error'; reason: string };

interface OpCommon {
  /** Unique in the history; violations name operations as `<kind>#<id>`. */
  id: number;
  stream: string;
  /** Free text for the reader of a violation (producer name, star it went through). */
  client?: string;
  /** Monotonic milliseconds (performance.now()); only compared with each other. */
  startMs: number;
  /** Infinity for an append still in flight when the history was taken. */
  endMs: number;
}

export interface AppendOp extends OpCommon {
  kind: 'append';
  /** Each body unique in its stream, so a record read back names the append it came from. */
  bodies: string[];
  outcome: AppendOutcome;
}

export interface ReadOp extends OpCommon {
  kind: 'read';
  /** The requested seq_num start (no clamp, no trim: the page must start exactly there). */
  startSeq: number;
  outcome: ReadOutcome;
}

export interface TailOp extends OpCommon {
  kind: 'check-tail';
  outcome: TailOutcome;
}

export type Op = AppendOp | ReadOp | TailOp;
export type OpKind = Op['kind'];
export type History = readonly Op[];

export interface BeginArgs {
  append: { stream: string; bodies: string[]; client?: string };
  read: { stream: string; startSeq: number; client?: string };
  'check-tail': { stream: string; client?: string };
}

export interface OutcomeOf {
  append: AppendOutcome;
  read: ReadOutcome;
  'check-tail': TailOutcome;
}

/** An operation in flight: `end` stamps its end time and records it, exactly once. */
export interface OpHandle<K extends OpKind> {
  readonly id: number;
  readonly label: string;
  end(outcome: OutcomeOf[K]): void;
}

/** `append#12`: how violations name an operation. */
export function opLabel(op: Pick<Op, 'kind' | 'id'>): string {
  return `${op.kind}#${op.id}`;
}

/** An append's outcome from an HTTP status (undefined: no answer at all). A 4xx was refused before
 *  anything was written; anything else (5xx, a proxy hop that broke, a timeout) may have landed. */
export function appendFailure(httpStatus: number | undefined, reason: string): AppendOutcome {
  const refused = httpStatus !== undefined && httpStatus >= 400 && httpStatus < 500 && httpStatus !== 408;
  return refused ? { status: 'failed', reason } : { status: 'ambiguous', reason };
}

interface InFlight {
  kind: OpKind;
  args: BeginArgs[OpKind];
  startMs: number;
}

/** Records operations as a test runs them. Safe to share between concurrent async producers:
 *  begin and end only read the clock and push. */
export class Recorder {
  private readonly done: Op[] = [];
  private readonly inFlight = new Map<number, InFlight>();
  private nextId = 1;

  /** `now` is replaceable so unit tests can drive time; it must never go backwards. */
  constructor(private readonly now: () => number = () => performance.now()) {}

  begin<K extends OpKind>(kind: K, args: BeginArgs[K]): OpHandle<K> {
    const id = this.nextId++;
    this.inFlight.set(id, { kind, args, startMs: this.now() });
    return { id, label: opLabel({ kind, id }), end: (outcome) => this.finish(id, outcome) };
  }

  /** Everything recorded so far, by id. An append still in flight is included as ambiguous and
   *  never finished (it may yet land); reads and tail checks in flight observed nothing yet. */
  history(): Op[] {
    const pending: Op[] = [];
    for (const [id, f] of this.inFlight) {
      if (f.kind !== 'append') continue;
      pending.push(buildOp(id, f, Infinity, { status: 'ambiguous', reason: 'still in flight' }));
    }
    return [...this.done, ...pending].sort((a, b) => a.id - b.id);
  }

  private finish(id: number, outcome: OutcomeOf[OpKind]): void {
    const f = this.inFlight.get(id);
    if (f === undefined) throw new Error(`history: ${id} ended twice or never began`);
    this.inFlight.delete(id);
    this.done.push(buildOp(id, f, this.now(), outcome));
  }
}

/** The one place the kind, its arguments and its outcome are joined; `begin`'s signature already
 *  pairs them, which the compiler cannot see through the generic. */
function buildOp(id: number, f: InFlight, endMs: number, outcome: OutcomeOf[OpKind]): Op {
  const base = { id, startMs: f.startMs, endMs };
  switch (f.kind) {
    case 'append':
      return { ...base, ...(f.args as BeginArgs['append']), kind: 'append', outcome: outcome as AppendOutcome };
    case 'read':
      return { ...base, ...(f.args as BeginArgs['read']), kind: 'read', outcome: outcome as ReadOutcome };
    case 'check-tail':
      return { ...base, ...(f.args as BeginArgs['check-tail']), kind: 'check-tail', outcome: outcome as TailOutcome };
  }
}

// ---------------------------------------------------------------- the checker

export interface CheckOptions {
  /** The history ends with reads that cover each stream from its lowest read start to its final
   *  tail (a cluster test's read-back). Then every acknowledged record must have been read, every
   *  position up to the highest tail seen must be filled, and an ambiguous append must appear
   *  whole or not at all. */
  complete?: boolean;
  /** Stop listing after this many violations (one lost record early can shift everything after). */
  maxViolations?: number;
}

const MAX_VIOLATIONS_DEFAULT = 100;

/** Every violation of per-stream linearizability in `history`, as lines naming the operations
 *  involved; empty when the history is consistent with one sequencer per stream. */
export function checkHistory(history: History, options: CheckOptions = {}): string[] {
  const out = new Violations(options.maxViolations ?? MAX_VIOLATIONS_DEFAULT);
  for (const [stream, ops] of groupByStream(history)) {
    checkStream(ops, options.complete === true, (msg) => out.add(`[${stream}] ${msg}`));
  }
  return out.list();
}

class Violations {
  private readonly lines: string[] = [];
  private dropped = 0;
  constructor(private readonly max: number) {}
  add(line: string): void {
    if (this.lines.length < this.max) this.lines.push(line);
    else this.dropped++;
  }
  list(): string[] {
    return this.dropped === 0 ? [...this.lines] : [...this.lines, `... and ${this.dropped} more violations`];
  }
}

type Report = (msg: string) => void;

interface StreamOps {
  appends: AppendOp[];
  reads: ReadOp[];
  tails: TailOp[];
}

function groupByStream(history: History): Map<string, StreamOps> {
  const streams = new Map<string, StreamOps>();
  for (const op of history) {
    let s = streams.get(op.stream);
    if (s === undefined) streams.set(op.stream, (s = { appends: [], reads: [], tails: [] }));
    if (op.kind === 'append') s.appends.push(op);
    else if (op.kind === 'read') s.reads.push(op);
    else s.tails.push(op);
  }
  return streams;
}

/** One record as first observed: which read saw it there. */
interface Seen {
  seq: number;
  body: string;
  read: ReadOp;
}

/** A record sent: which append, at which index of its batch. */
interface Sent {
  op: AppendOp;
  index: number;
}

interface StreamIndex {
  sent: Map<string, Sent>;
  seenAt: Map<number, Seen>;
  seenBody: Map<string, Seen>;
  /** Where each append is known to sit: acked, or ambiguous and observed consistently. */
  base: Map<AppendOp, number>;
}

function checkStream(ops: StreamOps, complete: boolean, report: Report): void {
  const okReads = ops.reads.filter(isOkRead);
  const sent = indexSent(ops.appends, report);
  checkShapes(ops.appends, okReads, report);
  const { seenAt, seenBody } = indexSeen(okReads, report);
  const ix: StreamIndex = { sent, seenAt, seenBody, base: new Map() };
  checkAcked(ops.appends, ix, report);
  checkSeenBodies(ix, report);
  for (const op of ops.appends) if (op.outcome.status === 'ambiguous') checkAmbiguous(op, ix, complete, report);
  checkReadGaps(okReads, ownerIndex(ix.base), report);
  checkRealTime(ops, okReads, ix.base, report);
  if (complete) checkComplete(ops, okReads, ix, report);
}

type OkRead = ReadOp & { outcome: Extract<ReadOutcome, { status: 'ok' }> };
type OkTail = TailOp & { outcome: Extract<TailOutcome, { status: 'ok' }> };
type OkAppend = AppendOp & { outcome: Extract<AppendOutcome, { status: 'ok' }> };

function isOkRead(op: ReadOp): op is OkRead {
  return op.outcome.status === 'ok';
}
function isOkTail(op: TailOp): op is OkTail {
  return op.outcome.status === 'ok';
}
function isOkAppend(op: AppendOp): op is OkAppend {
  return op.outcome.status === 'ok';
}

function bodyList(bodies: string[]): string {
  return bodies.length <= 2 ? bodies.map((b) => `'${b}'`).join(', ') : `'${bodies[0]}'…'${bodies[bodies.length - 1]}'`;
}

/** Bodies are how a record read back names its append, so two appends sending one body would make
 *  every later conclusion about it meaningless: that is a bug in the test, reported as such. */
function indexSent(appends: AppendOp[], report: Report): Map<string, Sent> {
  const sent = new Map<string, Sent>();
  for (const op of appends) {
    op.bodies.forEach((body, index) => {
      const prior = sent.get(body);
      if (prior === undefined) sent.set(body, { op, index });
      else report(`history: body '${body}' sent by both ${opLabel(prior.op)} and ${opLabel(op)} (bodies must be unique)`);
    });
  }
  return sent;
}

/** Each answer on its own: an ack covers exactly its batch and its tail is at least its end; a
 *  read's records are below the tail it returned. */
function checkShapes(appends: AppendOp[], reads: OkRead[], report: Report): void {
  for (const op of appends) {
    if (!isOkAppend(op)) continue;
    const { start, end, tail } = op.outcome;
    if (end - start !== op.bodies.length) report(`ack: ${opLabel(op)} sent ${op.bodies.length} records but was acknowledged [${start},${end})`);
    if (tail !== undefined && tail < end) report(`ack: ${opLabel(op)} acknowledged [${start},${end}) with tail ${tail} below its end`);
  }
  for (const op of reads) {
    const { records, tail } = op.outcome;
    const last = records[records.length - 1];
    if (last !== undefined && last.seq_num >= tail) report(`read: ${opLabel(op)} returned seq ${last.seq_num} at or past its own tail ${tail}`);
  }
}

/** The first read to show each position and each body; any later read that disagrees (another
 *  body at a position, a body at another position) is a second record for one seq_num or a
 *  duplicate. */
function indexSeen(reads: OkRead[], report: Report): { seenAt: Map<number, Seen>; seenBody: Map<string, Seen> } {
  const seenAt = new Map<number, Seen>();
  const seenBody = new Map<string, Seen>();
  for (const read of reads) {
    for (const r of read.outcome.records) {
      const seen: Seen = { seq: r.seq_num, body: r.body, read };
      const atPos = seenAt.get(r.seq_num);
      if (atPos === undefined) seenAt.set(r.seq_num, seen);
      else if (atPos.body !== r.body) {
        report(`two bodies at one position: seq ${r.seq_num} is '${atPos.body}' in ${opLabel(atPos.read)} but '${r.body}' in ${opLabel(read)}`);
      }
      const ofBody = seenBody.get(r.body);
      if (ofBody === undefined) seenBody.set(r.body, seen);
      else if (ofBody.seq !== r.seq_num) {
        report(`duplicate: '${r.body}' at two positions, seq ${ofBody.seq} in ${opLabel(ofBody.read)} and seq ${r.seq_num} in ${opLabel(read)}`);
      }
    }
  }
  return { seenAt, seenBody };
}

/** Acknowledged appends: no two share a position, and wherever a read shows one of their
 *  positions, it shows their record (else it was lost or overwritten). */
function checkAcked(appends: AppendOp[], ix: StreamIndex, report: Report): void {
  const acked = appends.filter(isOkAppend).sort((a, b) => a.outcome.start - b.outcome.start);
  let prev: OkAppend | undefined;
  for (const op of acked) {
    ix.base.set(op, op.outcome.start);
    if (prev !== undefined && prev.outcome.end > op.outcome.start) {
      report(`ack: ${opLabel(prev)} [${prev.outcome.start},${prev.outcome.end}) and ${opLabel(op)} [${op.outcome.start},${op.outcome.end}) were acknowledged overlapping positions`);
    }
    if (prev === undefined || op.outcome.end > prev.outcome.end) prev = op;
    checkAckedContent(op, ix, report);
  }
}

function checkAckedContent(op: OkAppend, ix: StreamIndex, report: Report): void {
  const wrong: string[] = [];
  op.bodies.forEach((body, j) => {
    const seen = ix.seenAt.get(op.outcome.start + j);
    if (seen !== undefined && seen.body !== body) wrong.push(`seq ${seen.seq} is '${seen.body}' in ${opLabel(seen.read)} instead of '${body}'`);
  });
  if (wrong.length === 0) return;
  const more = wrong.length > 1 ? ` (and ${wrong.length - 1} more of its records)` : '';
  report(`lost: ${opLabel(op)} was acknowledged [${op.outcome.start},${op.outcome.end}) but ${wrong[0]}${more}`);
}

/** Every record read back came from an append that may have landed there: not from nowhere, not
 *  from a failed append, and an acked record only at its acknowledged position. */
function checkSeenBodies(ix: StreamIndex, report: Report): void {
  for (const seen of ix.seenBody.values()) {
    const where = `${opLabel(seen.read)} returned '${seen.body}' at seq ${seen.seq}`;
    const s = ix.sent.get(seen.body);
    if (s === undefined) {
      report(`unknown: ${where}, which no append sent`);
    } else if (s.op.outcome.status === 'failed') {
      report(`failed append visible: ${where}, a record of ${opLabel(s.op)} which failed (${s.op.outcome.reason})`);
    } else if (s.op.outcome.status === 'ok' && s.op.outcome.start + s.index !== seen.seq) {
      report(`moved: ${where}, but ${opLabel(s.op)} was acknowledged that record at seq ${s.op.outcome.start + s.index}`);
    }
  }
}

/** An ambiguous append landed whole or not at all: the records seen must sit at one base in
 *  batch order, nothing else at the positions between, and (when the read-back is complete) all
 *  of them or none. On success its base is recorded for the real-time checks. */
function checkAmbiguous(op: AppendOp, ix: StreamIndex, complete: boolean, report: Report): void {
  const seen = op.bodies.map((b) => ix.seenBody.get(b));
  const bases = new Set<number>();
  seen.forEach((s, i) => { if (s !== undefined) bases.add(s.seq - i); });
  if (bases.size === 0) return;
  const shown = seen.flatMap((s) => (s === undefined ? [] : [`'${s.body}'@${s.seq} (${opLabel(s.read)})`]));
  if (bases.size > 1) {
    report(`torn: ambiguous ${opLabel(op)} [${bodyList(op.bodies)}] is not contiguous and in order: ${shown.join(', ')}`);
    return;
  }
  const base = [...bases][0];
  ix.base.set(op, base);
  op.bodies.forEach((body, j) => {
    const at = ix.seenAt.get(base + j);
    if (at !== undefined && at.body !== body) {
      report(`torn: ambiguous ${opLabel(op)} landed at ${base} but seq ${base + j} is '${at.body}' in ${opLabel(at.read)} instead of its '${body}'`);
    }
  });
  const missing = seen.filter((s) => s === undefined).length;
  if (complete && missing > 0) {
    report(`torn: only ${op.bodies.length - missing} of ambiguous ${opLabel(op)}'s ${op.bodies.length} records were read back: ${shown.join(', ')}`);
  }
}

/** Position → the append known to own it, to name what a gap in a read lost. */
function ownerIndex(base: Map<AppendOp, number>): Map<number, AppendOp> {
  const owner = new Map<number, AppendOp>();
  for (const [op, b] of base) for (let j = 0; j < op.bodies.length; j++) if (!owner.has(b + j)) owner.set(b + j, op);
  return owner;
}

function ownersOf(from: number, to: number, owner: Map<number, AppendOp>): string {
  const names = new Set<string>();
  for (let p = from; p < to && names.size < 4; p++) {
    const op = owner.get(p);
    if (op !== undefined) names.add(opLabel(op));
  }
  return names.size === 0 ? '' : ` (positions of ${[...names].join(', ')})`;
}

/** Positions are dense: a page starts exactly at its requested seq_num and runs without a hole
 *  or a step back. */
function checkReadGaps(reads: OkRead[], owner: Map<number, AppendOp>, report: Report): void {
  for (const read of reads) {
    let expect = read.startSeq;
    for (const r of read.outcome.records) {
      if (r.seq_num > expect) {
        report(`lost: ${opLabel(read)} from seq ${read.startSeq} skips [${expect},${r.seq_num})${ownersOf(expect, r.seq_num, owner)}`);
        break;
      }
      if (r.seq_num < expect) {
        report(`duplicate: ${opLabel(read)} from seq ${read.startSeq} returned seq ${r.seq_num} after seq ${expect - 1}`);
        break;
      }
      expect++;
    }
  }
}

// ---------------------------------------------------------------- real time

/** A value established by an operation at some instant before its `endMs`. */
interface Fact {
  value: number;
  endMs: number;
  op: Op;
  /** How the operation established it, for the message. */
  how: string;
}

/** A value an operation observed or obtained at some instant after its `startMs`: it must be at
 *  least every fact that ended before it began. */
interface Probe {
  value: number;
  startMs: number;
  op: Op;
  /** 'tail' for an observed committed tail, 'base' for an append's first position. */
  what: 'tail' | 'base';
}

function checkRealTime(ops: StreamOps, reads: OkRead[], base: Map<AppendOp, number>, report: Report): void {
  const acked = ops.appends.filter(isOkAppend);
  const ackFacts: Fact[] = acked.map((op) => ({ value: op.outcome.end, endMs: op.endMs, op, how: `was acknowledged [${op.outcome.start},${op.outcome.end})` }));
  const tailProbes = observedTails(acked, reads, ops.tails);
  const tailFacts: Fact[] = tailProbes.map((p) => ({ value: p.value, endMs: p.op.endMs, op: p.op, how: sawTail(p) }));
  const baseProbes: Probe[] = [...base].map(([op, b]) => ({ value: b, startMs: op.startMs, op, what: 'base' }));
  const probes = [...tailProbes, ...baseProbes];
  // Against acknowledged appends: later appends sit above them, later reads and tails see them.
  sweep(ackFacts, probes, (p, f) => report(p.what === 'base'
    ? `order: ${opLabel(f.op)} ${f.how} and finished before ${describeProbe(p)} began, yet ${opLabel(p.op)} sits below it at ${p.value}`
    : `stale: ${describeProbe(p)} saw tail ${p.value}, but ${opLabel(f.op)} ${f.how} and finished before it began`));
  // Against observed tails: tails never go back, and no append lands below a tail seen before it began.
  sweep(tailFacts, probes, (p, f) => report(p.what === 'base'
    ? `from the future: ${opLabel(f.op)} ${f.how} and finished before ${describeProbe(p)} began, yet ${opLabel(p.op)} sits at ${p.value}`
    : `tail went backwards: ${describeProbe(p)} saw tail ${p.value} after ${opLabel(f.op)} ${f.how} and finished before it began`));
}

function sawTail(p: Probe): string {
  return p.op.kind === 'append' ? `was acknowledged with tail ${p.value}` : `saw tail ${p.value}`;
}

function describeProbe(p: Probe): string {
  return p.op.kind === 'append' && p.op.outcome.status === 'ambiguous' ? `ambiguous ${opLabel(p.op)}` : opLabel(p.op);
}

/** Every committed tail an operation observed: tail checks, reads, and acks that carried one. */
function observedTails(acked: OkAppend[], reads: OkRead[], tails: TailOp[]): Probe[] {
  const probes: Probe[] = [];
  for (const op of acked) if (op.outcome.tail !== undefined) probes.push({ value: op.outcome.tail, startMs: op.startMs, op, what: 'tail' });
  for (const op of reads) probes.push({ value: op.outcome.tail, startMs: op.startMs, op, what: 'tail' });
  for (const op of tails) if (isOkTail(op)) probes.push({ value: op.outcome.tail, startMs: op.startMs, op, what: 'tail' });
  return probes;
}

/** Calls `violate(probe, fact)` for each probe below the highest fact that ended (strictly) before
 *  the probe began. Equal times are concurrent. */
function sweep(facts: Fact[], probes: Probe[], violate: (p: Probe, f: Fact) => void): void {
  const byEnd = [...facts].sort((a, b) => a.endMs - b.endMs);
  const byStart = [...probes].sort((a, b) => a.startMs - b.startMs);
  let i = 0;
  let best: Fact | undefined;
  for (const p of byStart) {
    for (; i < byEnd.length && byEnd[i].endMs < p.startMs; i++) {
      if (best === undefined || byEnd[i].value > best.value) best = byEnd[i];
    }
    if (best !== undefined && p.value < best.value) violate(p, best);
  }
}

// ---------------------------------------------------------------- complete read-back

/** With a complete read-back, every position from the lowest read start up to the highest tail
 *  anyone saw or was acknowledged holds a record some read returned. */
function checkComplete(ops: StreamOps, reads: OkRead[], ix: StreamIndex, report: Report): void {
  if (reads.length === 0) return;
  const from = reads.reduce((lo, r) => Math.min(lo, r.startSeq), Infinity); // no spread: reads may be 100k+
  const top = highestTail(ops, reads);
  const owner = ownerIndex(ix.base);
  for (const [lo, hi] of missingRanges(from, top.value, ix.seenAt)) {
    report(`lost: no read returned [${lo},${hi}) though ${opLabel(top.op)} ${top.how}${ownersOf(lo, hi, owner)}`);
  }
}

function highestTail(ops: StreamOps, reads: OkRead[]): { value: number; op: Op; how: string } {
  let top = { value: 0, op: reads[0] as Op, how: 'saw tail 0' };
  for (const p of observedTails(ops.appends.filter(isOkAppend), reads, ops.tails)) {
    if (p.value > top.value) top = { value: p.value, op: p.op, how: sawTail(p) };
  }
  for (const op of ops.appends) {
    if (isOkAppend(op) && op.outcome.end > top.value) top = { value: op.outcome.end, op, how: `was acknowledged up to ${op.outcome.end}` };
  }
  return top;
}

function missingRanges(from: number, to: number, seenAt: Map<number, Seen>): [number, number][] {
  const ranges: [number, number][] = [];
  for (let p = from; p < to; p++) {
    if (seenAt.has(p)) continue;
    const last = ranges[ranges.length - 1];
    if (last !== undefined && last[1] === p) last[1] = p + 1;
    else ranges.push([p, p + 1]);
  }
  return ranges;
}
