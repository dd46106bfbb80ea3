// A cohort: the caught-up subscribers of one stream (in one encoding), served as one. Alone, each
// caught-up subscriber parks at the stream's tail, is woken and queued when it moves, polls the
// batch, writes it and parks again: five steps through four objects of its own on every delivery,
// which at 16,384 subscribers kept the main thread saturated where a bare broadcaster had room.
// In a cohort one subscription of its own (a fork) parks and polls for all of them; each new
// batch's frame is encoded once, and a round writes it to every member in bounded slices, touching
// each member once. A member whose write finds the socket full, whose heartbeat is due, or whose
// stream ends leaves the cohort with its cursor and goes back to its own pump; back at the tail, it
// joins again.
//
// The round's loop reads what it needs of each member from the cohort's own arrays (its cursor, its
// socket and the engine's RoundWrite) and touches the member itself only when it leaves: at 16,384
// subscribers every other object a delivery touched was a likely cache miss (about a tenth of a
// delivery's CPU, bench/README.md, stop 49).
//
// Order and exactly-once: rounds are contiguous ([from, to), then [to, …)) and a member receives a
// round only when its cursor is the round's start. A member that joined at a later batch boundary
// waits for the round that starts there; any other cursor (a round cut inside its gap) sends it
// back to its own pump, which reads from its cursor as before.

import { SSE_COALESCE_BYTES_MAX } from '../config/limits.ts';
import type { Subscription } from '../core/service-api.ts';
import type { RoundWrite, SseRound } from './exchange.ts';
import { encodeBatchFrame, fanOut, type Runnable } from './sse-fanout.ts';

export interface CohortMember {
  /** Its index in the cohort's members, -1 outside one (only the cohort writes it). */
  cohortAt: number;
  /** Its socket and the engine's RoundWrite, when the engine has them (read once, when it joins). */
  readonly round: SseRound | undefined;
  /** Writes the frames corked, stopping after a write that finds the socket full; true when all were
   *  written and the socket has room. When false, `delivered` says how many were written (the engines
   *  keep a write that filled the socket whole, so that one counts). */
  deliver(frames: readonly Buffer[]): boolean;
  readonly delivered: number;
  /** The cohort let the member go at `seq` (its socket filled, or the cohort dissolved, or the
   *  member's cursor fell inside a round); it serves itself from there. */
  released(seq: number, full: boolean): void;
}

/** Cohorts by stream (Subscription.shareKey), one map per encoding (raw, base64). */
const cohorts = [new Map<object, Cohort>(), new Map<object, Cohort>()];

/** The cohort of `sub`'s stream in this encoding, made (with a fork of `sub` at the stream's tail) when
 *  there is none; undefined when the subscription cannot be shared (no fork). */
export function cohortFor(sub: Subscription, base64: boolean): Cohort | undefined {
  const key = sub.shareKey;
  if (key === undefined || sub.fork === undefined) return undefined;
  const map = cohorts[base64 ? 1 : 0];
  let c = map.get(key);
  if (c === undefined) {
    c = new Cohort(sub.fork(), base64, () => map.delete(key));
    map.set(key, c);
  }
  return c;
}

export class Cohort implements Runnable {
  queued = false;
  /** Members; [0, next) have this round's frames (or were past its start), [next, …) not yet. A
   *  member is in one cohort at most, so the array is bounded by the star's subscription cap. */
  private members: CohortMember[] = [];
  /** Beside each member, at the same index: its cursor (the stream position its next frame starts
   *  at), and its socket and RoundWrite (undefined: written through deliver()). */
  private seqs: number[] = [];
  private outs: (object | undefined)[] = [];
  private writes: (RoundWrite | undefined)[] = [];
  private next = 0;
  /** The round: frames for [from, to), and the stream position after each; idle when from === to. */
  private frames: Buffer[] = [];
  private ends: number[] = [];
  private from: number;
  private to: number;
  /** When the last round started (performance.now()): its members got bytes then (sse.ts, heartbeats). */
  lastRoundMs = 0;
  /** The tail moved (or more was at hand) while a round was being written: another round follows. */
  private moved = false;
  private closed = false;

  constructor(private readonly driver: Subscription, private readonly base64: boolean, private readonly forget: () => void) {
    this.from = this.to = driver.cursor;
    this.park();
  }

  /** Adds `m`, whose cursor is `seq`; false (not added) when that is behind the cohort's, which has
   *  gone past it (a member joins at the stream's tail, where the cohort is or is heading). */
  join(m: CohortMember, seq: number): boolean {
    if (this.closed || seq < this.to) return false;
    m.cohortAt = this.members.length;
    this.members.push(m);
    this.seqs.push(seq);
    const r = m.round;
    this.outs.push(r?.out);
    this.writes.push(r?.write);
    return true;
  }

  /** Takes `m` out; returns its cursor (undefined: it was not in the cohort). The members before
   *  `next` stay before it. */
  leave(m: CohortMember): number | undefined {
    let at = m.cohortAt;
    if (at < 0 || this.members[at] !== m) return undefined;
    const seq = this.seqs[at];
    // A served member first trades places with the served part's last, which then counts as unserved
    // (it is past the round's start, so the round skips it); then the list's last fills its slot.
    if (at < this.next) {
      this.next -= 1;
      this.swap(at, this.next);
      at = this.next;
    }
    const last = this.members.length - 1;
    if (at !== last) this.swap(at, last);
    this.members.pop();
    this.seqs.pop();
    this.outs.pop();
    this.writes.pop();
    m.cohortAt = -1;
    if (this.members.length === 0) this.close();
    return seq;
  }

  /** Trades the members at i and k, with everything kept beside them. */
  private swap(i: number, k: number): void {
    const list = this.members;
    const a = list[i];
    const b = list[k];
    list[i] = b;
    b.cohortAt = i;
    list[k] = a;
    a.cohortAt = k;
    const seqs = this.seqs;
    const seq = seqs[i];
    seqs[i] = seqs[k];
    seqs[k] = seq;
    const outs = this.outs;
    const out = outs[i];
    outs[i] = outs[k];
    outs[k] = out;
    const writes = this.writes;
    const w = writes[i];
    writes[i] = writes[k];
    writes[k] = w;
  }

  private readonly ready = (): void => {
    if (this.closed) return;
    if (this.from !== this.to) this.moved = true;
    else this.startRound();
  };

  /** Waits for the driver's tail to move; when it is not at the tail (more is at hand), a round
   *  is owed instead. */
  private park(): void {
    const d = this.driver;
    if (d.atTail?.() && d.onReady) d.onReady(this.ready);
    else {
      this.moved = true;
      if (this.from === this.to) fanOut.enqueue(this);
    }
  }

  /** Reads what the driver has at hand (whole batches in memory, up to SSE_COALESCE_BYTES_MAX) as
   *  the next round; with nothing at hand and not at the tail (a history read, a deleted or trimmed
   *  stream), dissolves: every member goes back to its own pump, which handles it as before. */
  private startRound(): void {
    this.moved = false;
    const d = this.driver;
    let bytes = 0;
    this.frames.length = 0;
    this.ends.length = 0;
    for (let b = d.poll?.(); b; b = bytes < SSE_COALESCE_BYTES_MAX ? d.poll?.() : undefined) {
      const f = encodeBatchFrame(b, this.base64);
      this.frames.push(f);
      this.ends.push(b.tail.seq_num);
      bytes += f.length;
    }
    if (this.frames.length === 0) {
      if (d.atTail?.() && d.onReady) d.onReady(this.ready);
      else this.dissolve();
      return;
    }
    this.from = this.to;
    this.to = this.ends[this.ends.length - 1];
    this.next = 0;
    this.lastRoundMs = performance.now();
    this.park();
    fanOut.enqueue(this);
  }

  run(budget: number): number {
    if (this.closed) return 0;
    if (this.from === this.to) {
      if (this.moved) this.startRound();
      return 0;
    }
    // Deleted, or trimmed past the round's start, since the round began: what is left of it is not
    // written; every member goes back to its own pump, which ends its stream with the error event.
    if (this.driver.readable?.(this.from) === false) {
      this.dissolve();
      return 0;
    }
    const { members: list, seqs, outs, writes, frames, ends, from, to } = this;
    let served = 0;
    while (this.next < list.length && served < budget) {
      const at = this.next;
      const seq = seqs[at];
      if (seq === from) {
        served++;
        const m = list[at];
        const out = outs[at];
        const write = writes[at];
        let written: number;
        if (out !== undefined && write !== undefined) {
          written = write(out, frames);
          if (outs[at] === out && this.next === at) {
            // Written whole with room to spare, still in its place and still the next to serve (no
            // member left while it was written): the common case, which touches no member object.
            // Otherwise (a served member's leaving moved an unserved one into the slot before it)
            // the general path below puts it among the served.
            if (written === frames.length) {
              seqs[at] = to;
              this.next++;
              continue;
            }
          } else if (m.cohortAt < 0) continue; // it left while writing (its client went away)
        } else {
          written = m.deliver(frames) ? frames.length : -m.delivered;
          if (m.cohortAt < 0) continue; // it left while writing (its client went away)
        }
        if (written < frames.length) {
          // Its socket is full (the round's last write may be the one that filled it): it leaves, and
          // waits for the drain on its own, under its stall bound.
          const n = Math.abs(written);
          seqs[m.cohortAt] = n === 0 ? from : ends[n - 1];
          m.released(this.leave(m)!, true);
          continue;
        }
        seqs[m.cohortAt] = to;
        // Another member's leaving while this one wrote may have moved it: it belongs to the served part.
        if (m.cohortAt !== this.next) this.swap(m.cohortAt, this.next);
      } else if (seq < to) {
        // Not at a round boundary the cohort will pass (or behind it): its own pump serves it.
        const m = list[at];
        m.released(this.leave(m)!, false);
        continue;
      }
      this.next++;
    }
    if (this.next < list.length) fanOut.resume(this);
    else this.roundDone();
    return served;
  }

  private roundDone(): void {
    this.from = this.to;
    // The frames go with the round: an idle stream's cohort must not hold its last batch's bytes.
    this.frames.length = 0;
    this.ends.length = 0;
    if (this.closed) return;
    if (this.moved) this.startRound();
  }

  private dissolve(): void {
    const list = this.members;
    const seqs = this.seqs;
    this.members = [];
    this.seqs = [];
    this.outs = [];
    this.writes = [];
    this.close();
    for (let i = 0; i < list.length; i++) {
      const m = list[i];
      m.cohortAt = -1;
      m.released(seqs[i], false);
    }
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.driver.close();
    this.forget();
  }
}
