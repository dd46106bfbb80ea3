// A torn or corrupt WAL tail: bytes past the last whole checksummed frame of the newest WAL file, as
// a crash mid-write leaves them. Recovery must cut them, serve every acknowledged record and nothing
// else, keep appending at the right seq_num, and stay that way across a further SIGKILL. Each variant
// runs on its own copy of one data dir. A control variant appends a whole valid frame, proving the
// crafted frame is otherwise acceptable (so the rejections below are for the tear, not the frame).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, copyFileSync, cpSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { encodeBatch, frameInfo, frameIsIntact, sealFrame } from '../../src/storage/format/record-codec.ts';
import { removeDir, startServer, tempDir, type RunningServer } from '../helpers/server.ts';
import {
  Rng, StreamModel, createBucket, createStream, getTail, req, runSeed, streamPath, tagOf, verifyStream, waitFor,
  walFiles, type Position,
} from './crash-kit.ts';

const ENGINE = 'node';
const BUCKET = 'torn';
const KEYS = ['s', 't'] as const;

interface AckedBatch { key: string; id: string; bodies: string[]; answer: { start: Position; end: Position; tail: Position } }

/** Whole frames of a WAL file: their total size and the last one's bytes. */
function wholeFrames(path: string): { bytes: number; frames: number; last: Buffer } {
  const buf = readFileSync(path);
  let off = 0;
  let frames = 0;
  let last = Buffer.alloc(0);
  while (off < buf.length && frameIsIntact(buf, off, buf.length - off)) {
    const n = frameInfo(buf, off).frameBytes;
    last = Buffer.from(buf.subarray(off, off + n));
    off += n;
    frames += 1;
  }
  return { bytes: off, frames, last };
}

async function appendOk(baseUrl: string, key: string, bodies: string[]): Promise<AckedBatch['answer']> {
  const r = await req(baseUrl, 'POST', `${streamPath(BUCKET, key)}/records`, { records: bodies.map((body) => ({ body })) });
  assert.equal(r.status, 200, `append to ${key}: ${r.text}`);
  return r.body;
}

const batchBodies = (id: string, n: number, key: string, rng: Rng): string[] =>
  Array.from({ length: n }, (_, i) => `${tagOf(id, i, n)}|${key}|${rng.text(rng.int(0, 40))}`);

interface Base {
  dir: string;
  acked: AckedBatch[];
  streamIdS: string;
  tailS: Position;
  /** The newest WAL file's name and its whole-frame size. */
  walName: string;
  walBytes: number;
  lastFrame: Buffer;
}

/** A data dir with acknowledged records in both streams, stopped gracefully. */
async function makeBase(rng: Rng): Promise<Base> {
  const dir = tempDir('svcd-torn-base-');
  const server = await startServer({ engine: ENGINE, dataDir: dir });
  const acked: AckedBatch[] = [];
  let streamIdS = '';
  try {
    await createBucket(server.baseUrl, BUCKET);
    for (const k of KEYS) {
      const info = await createStream(server.baseUrl, BUCKET, k);
      if (k === 's') streamIdS = info.stream_id;
    }
    for (let i = 0; i < 12; i++) {
      const key = KEYS[i % 2];
      const id = `base${i}`;
      const bodies = batchBodies(id, rng.int(1, 5), key, rng);
      acked.push({ key, id, bodies, answer: await appendOk(server.baseUrl, key, bodies) });
    }
  } finally {
    await server.stop();
  }
  assert.match(streamIdS, /^[0-9a-f-]{36}$/, 'stream_id is a uuid');
  const files = walFiles(dir).filter((f) => f.bytes > 0);
  assert.ok(files.length > 0, 'the acked records are in a WAL file after a graceful stop');
  const newest = files[files.length - 1];
  const whole = wholeFrames(newest.path);
  assert.equal(whole.bytes, newest.bytes, 'a graceful stop leaves only whole frames');
  const tailS = acked.filter((a) => a.key === 's').at(-1)!.answer.end;
  return { dir, acked, streamIdS, tailS, walName: newest.path.slice(newest.path.lastIndexOf('/') + 1), walBytes: whole.bytes, lastFrame: whole.last };
}

function modelsOf(base: Base): Map<string, StreamModel> {
  const models = new Map<string, StreamModel>();
  for (const k of KEYS) models.set(k, new StreamModel(BUCKET, k));
  for (const a of base.acked) {
    const m = models.get(a.key)!;
    m.ack(m.add(a.id, a.bodies), a.answer);
  }
  return models;
}

/** A whole, validly sealed frame that would be stream s's next batch. */
function craftedFrame(base: Base, id: string, n: number, rng: Rng): { frame: Buffer; bodies: string[] } {
  const bodies = batchBodies(id, n, 's', rng);
  const frame = encodeBatch(base.streamIdS, base.tailS.seq_num,
    bodies.map((b) => ({ timestamp_ms: base.tailS.timestamp_ms, headers: [], body: Buffer.from(b, 'utf8') })));
  sealFrame(frame, 0, frame.length);
  assert.ok(frameIsIntact(frame, 0, frame.length));
  return { frame, bodies };
}

interface Variant {
  name: string;
  /** Bytes appended to the newest WAL file, and the crafted batch (if any) they carry. */
  tear(base: Base, rng: Rng): { bytes: Buffer; crafted?: { id: string; bodies: string[] } };
  /** Whether the appended bytes are whole valid frames that recovery keeps (no cut). */
  kept?: boolean;
  /** Only zeros: what the flusher's preallocation leaves after a crash. Cut without a torn-tail report. */
  zeros?: boolean;
  /** For kept bytes: whether they add records to stream s. */
  servesCrafted?: boolean;
}

const VARIANTS: Variant[] = [
  { name: 'random garbage', tear: (_b, rng) => ({ bytes: Buffer.from(rng.bulk(37), 'latin1') }) },
  { name: 'zero-filled block (a preallocated tail)', zeros: true, tear: () => ({ bytes: Buffer.alloc(4096) }) },
  {
    name: 'half of a valid next frame',
    tear: (b, rng) => {
      const c = craftedFrame(b, 'half', 4, rng);
      return { bytes: c.frame.subarray(0, Math.floor(c.frame.length / 2)), crafted: { id: 'half', bodies: c.bodies } };
    },
  },
  {
    name: 'frame header only',
    tear: (b, rng) => {
      const c = craftedFrame(b, 'hdr', 3, rng);
      return { bytes: c.frame.subarray(0, 40), crafted: { id: 'hdr', bodies: c.bodies } };
    },
  },
  {
    name: 'whole next frame with one byte flipped',
    tear: (b, rng) => {
      const c = craftedFrame(b, 'flip', 3, rng);
      const bytes = Buffer.from(c.frame);
      bytes[bytes.length - 2] ^= 0x20; // inside the last body: the length fields stay plausible
      return { bytes, crafted: { id: 'flip', bodies: c.bodies } };
    },
  },
  {
    name: 'control: whole valid next frame (unacknowledged, kept whole)',
    kept: true,
    servesCrafted: true,
    tear: (b, rng) => {
      const c = craftedFrame(b, 'valid', 3, rng);
      return { bytes: c.frame, crafted: { id: 'valid', bodies: c.bodies } };
    },
  },
  { name: 'a verbatim duplicate of the last frame', kept: true, tear: (b) => ({ bytes: Buffer.from(b.lastFrame) }) },
];

test('a torn WAL tail is cut: acked records served, garbage never, appends continue', { timeout: 120_000 }, async (t) => {
  const seed = runSeed();
  t.diagnostic(`seed ${seed}`);
  const rng = new Rng(seed);
  const base = await makeBase(rng);
  try {
    for (const v of VARIANTS) {
      await t.test(v.name, async (tt) => {
        const dir = tempDir('svcd-torn-');
        cpSync(base.dir, dir, { recursive: true });
        const walPath = join(dir, 'wal', base.walName);
        const { bytes, crafted } = v.tear(base, rng);
        appendFileSync(walPath, bytes);
        const models = modelsOf(base);
        const s = models.get('s')!;
        // Torn bytes must never surface; a whole valid frame may (it is an unacknowledged batch).
        if (crafted) {
          const b = s.add(crafted.id, crafted.bodies);
          if (v.servesCrafted) s.unacked(b, 'written to the WAL, never acknowledged');
          else b.state = 'absent';
        }
        let server: RunningServer | undefined;
        let ok = false;
        try {
          server = await startServer({ engine: ENGINE, dataDir: dir });
          const cut = /recovery cut a torn WAL tail of (\d+) bytes/.exec(server.output());
          if (v.kept) {
            assert.equal(cut, null, `whole frames must not be cut: ${server.output()}`);
          } else if (v.zeros) {
            assert.equal(cut, null, `a zero tail is preallocation, not a tear: ${server.output()}`);
            if (existsSync(walPath)) assert.equal(statSync(walPath).size, base.walBytes, 'the zeros were cut off');
          } else {
            assert.ok(cut, `recovery reports a cut:\n${server.output()}`);
            assert.equal(Number(cut[1]), bytes.length, 'exactly the torn bytes are cut');
            // The file is cut back to whole frames (unless it has already been settled and dropped).
            if (existsSync(walPath)) assert.equal(statSync(walPath).size, base.walBytes, 'the WAL file shrank back to its whole frames');
          }
          for (const m of models.values()) await verifyStream(server.baseUrl, m);
          const expectS = base.tailS.seq_num + (v.servesCrafted ? crafted!.bodies.length : 0);
          assert.equal((await getTail(server.baseUrl, BUCKET, 's')).seq_num, expectS, 'the recovered tail of s');
          if (v.servesCrafted) assert.equal(s.batches.get(crafted!.id)!.state, 'present', 'the whole valid frame was recovered');

          // New appends land right after the recovered tail, and survive a SIGKILL.
          for (const k of KEYS) {
            const m = models.get(k)!;
            const id = `after-${k}`;
            const bodies = batchBodies(id, 3, k, rng);
            const tailBefore = m.verified.length;
            const b = m.add(id, bodies);
            const ans = await appendOk(server.baseUrl, k, bodies);
            assert.equal(ans.start.seq_num, tailBefore, `${k}: the first append after recovery starts at the tail`);
            m.ack(b, ans);
          }
          for (const m of models.values()) await verifyStream(server.baseUrl, m);
          await server.kill();
          server = await startServer({ engine: ENGINE, dataDir: dir });
          assert.doesNotMatch(server.output(), /recovery cut/, 'nothing is left to cut on the next recovery');
          for (const m of models.values()) await verifyStream(server.baseUrl, m);
          ok = true;
        } finally {
          await server?.kill();
          if (ok) removeDir(dir);
          else tt.diagnostic(`data dir kept for inspection: ${dir}`);
        }
      });
    }
  } finally {
    removeDir(base.dir);
  }
});

test('a WAL file that was settled before a crash (not yet unlinked) is neither replayed twice nor kept forever', { timeout: 60_000 }, async (t) => {
  const seed = runSeed();
  t.diagnostic(`seed ${seed}`);
  const rng = new Rng(seed);
  const base = await makeBase(rng);
  const dir = base.dir;
  const walPath = join(dir, 'wal', base.walName);
  const stale = join(dir, `${base.walName}.stale-copy`); // outside wal/, so the server never sees it
  copyFileSync(walPath, stale);
  let server: RunningServer | undefined;
  let ok = false;
  try {
    // Recovery settles the file into segments and drops it.
    server = await startServer({ engine: ENGINE, dataDir: dir });
    assert.ok(await waitFor(() => !existsSync(walPath), 20_000), `recovered WAL file ${base.walName} was not settled and dropped`);
    const models = modelsOf(base);
    for (const m of models.values()) await verifyStream(server.baseUrl, m);
    await server.stop();
    // The state a crash between "segments recorded in metadata" and "WAL file unlinked" leaves.
    copyFileSync(stale, walPath);
    server = await startServer({ engine: ENGINE, dataDir: dir });
    for (const m of models.values()) await verifyStream(server.baseUrl, m);
    const m = models.get('s')!;
    const bodies = batchBodies('after', 2, 's', rng);
    const b = m.add('after', bodies);
    const ans = await appendOk(server.baseUrl, 's', bodies);
    assert.equal(ans.start.seq_num, base.tailS.seq_num, 'appends continue at the tail, not after replayed frames');
    m.ack(b, ans);
    for (const mm of models.values()) await verifyStream(server.baseUrl, mm);
    // Its records are all settled already: the file is dead weight and should be dropped.
    const dropped = await waitFor(() => !existsSync(walPath), 10_000);
    assert.ok(dropped, `WAL file ${base.walName}, whose frames are all settled, is never removed: it is re-read at every start`);
    ok = true;
  } finally {
    await server?.kill();
    if (ok) removeDir(dir);
    else t.diagnostic(`data dir kept for inspection: ${dir}`);
  }
});
