// A WAL failure racing a group commit (code review 41, F1): the flusher syncs and publishes a group,
// then fails the next one, between the sequencer's read of the durable offset and its check of the
// failure flag. The synced group must be acknowledged, not refused: refused, its sequence numbers
// were handed out again while its frames stayed in the WAL, and a restart or settle served them in
// place of the acknowledged records. The log port below plays the flusher's side of that timing.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { Star } from '../../src/core/star.ts';
import type { LogPort } from '../../src/core/ports.ts';
import { frameInfo } from '../../src/storage/format/record-codec.ts';
import { rng } from '../helpers/rng.ts';
import { Incarnation, World } from '../sim/ports.ts';

/** A log that mimics the flusher thread: `raceOnNextRead` makes the next durableOffset() read return
 *  the old value while the "flusher" meanwhile makes everything durable and then fails. */
class RaceLog implements LogPort {
  readonly capacityBytes = 1 << 20;
  head = 0; durable = 0; signal = 0; isFailed = false; fileNo = 1;
  frames: { end: number; bytes: Buffer; durable: boolean }[] = [];
  waiters: (() => void)[] = [];
  raceOnNextRead = false;
  tryAppend(frame: Uint8Array): number { this.head += frame.length; this.frames.push({ end: this.head, bytes: Buffer.from(frame), durable: false }); return this.head; }
  publish(): void {}
  durableOffset(): number {
    const d = this.durable;
    if (this.raceOnNextRead) {
      this.raceOnNextRead = false;
      // the other thread, "concurrently": group G2 written + fdatasync'd + published, then G3 fails
      this.durable = this.head; for (const f of this.frames) f.durable = true; this.signal++;
      this.isFailed = true; this.signal++;
    }
    return d;
  }
  durableSignal(): number { return this.signal; }
  waitDurable(seen: number): Promise<unknown> {
    if (this.signal !== seen) return Promise.resolve();
    return new Promise<void>((r) => this.waiters.push(r));
  }
  bump(): void { this.signal++; for (const w of this.waiters.splice(0)) w(); }
  failed(): boolean { return this.isFailed; }
  failureCause(): string { return this.isFailed ? 'ENOSPC' : ''; }
  discardUndurable(): void { this.durable = this.head; /* flusher: readPos = discardTo; file cut back to durableFileBytes */ }
  currentFileNo(): number { return this.fileNo; }
  flushAll(): void { this.durable = this.head; for (const f of this.frames) f.durable = true; this.bump(); }
}

test('a group synced just before the WAL fails is acknowledged, and its sequence numbers are not handed out again', async () => {
  const inc = new Incarnation(new World(), rng(5), 1);
  const log = new RaceLog();
  const star = new Star({ clock: inc.clock, timers: inc.timerPort, ids: inc.ids, log, metadata: inc.metadata, objects: inc.objects, settler: inc.settler, wal: inc.wal, walFileNo: 1 });
  star.open(await inc.metadata.load(), [], []);
  const made = [star.createBucket('b', {}), star.createStream('b', 's', {})];
  for (let i = 0; i < 8; i++) { inc.landQueued(); await new Promise((r) => setImmediate(r)); }
  await Promise.all(made);

  const first = star.append('b', 's', { records: [{ headers: [], body: Buffer.from('synced') }] });
  const firstOutcome = first.then((a) => ({ ok: a }), (e: unknown) => ({ err: e }));
  log.raceOnNextRead = true;
  log.bump(); // the sequencer wakes and reads the durable offset: the race
  const o1 = await firstOutcome;
  assert.ok('ok' in o1, `the synced append is acknowledged: ${'err' in o1 ? (o1.err as Error).message : ''}`);
  assert.equal(o1.ok.start.seq_num, 0);
  log.isFailed = false; log.bump(); // the WAL recovers
  await new Promise((r) => setImmediate(r));
  const second = star.append('b', 's', { records: [{ headers: [], body: Buffer.from('next') }] });
  log.flushAll();
  const a2 = await second;
  assert.equal(a2.start.seq_num, 1, 'the next append follows it');
  const inWal = log.frames.filter((f) => f.durable && f.bytes[8] === 1).map((f) => frameInfo(f.bytes).firstSeq);
  assert.deepEqual(inWal, [0, 1], 'one frame at each position');
  await star.close();
});
