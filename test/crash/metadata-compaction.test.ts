// SIGKILL while the local metadata store compacts its journal into a snapshot, again and again: each
// restart must load every acknowledged row write (a row holds the newest acknowledged trim of its
// key, or a later one). The writer compacts every few entries, and its snapshot takes several
// chunks to write, so kills land before, inside and after the rename. Replay a failure with
// SVCD_CRASH_SEED=<seed printed below>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalMetadataStore } from '../../src/storage/metadata/local-store.ts';
import { unpackStreamRows } from '../../src/storage/metadata/metadata-store.ts';
import { removeDir, tempDir } from '../helpers/server.ts';
import { Rng, runSeed } from './crash-kit.ts';

const WRITER = fileURLToPath(new URL('./fixtures/metadata-writer.ts', import.meta.url));
/** Rows in the store: about 3 MB of snapshot, several write chunks. */
const ROWS = 40_000;
const KILLS = 6;
/** A writer that prints nothing for this long is stuck (a bound, not a speed). */
const WRITER_SILENT_MS_MAX = 60_000;

/** Runs the writer until `acks` more writes were acknowledged plus a random delay, then SIGKILLs it;
 *  resolves with the highest trim acknowledged. */
function runAndKill(dir: string, startTrim: number, acks: number, delayMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WRITER, dir, String(ROWS), String(startTrim)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let seen = 0;
    let highest = startTrim;
    let err = '';
    let buf = '';
    let killing = false;
    let silent = setTimeout(() => child.kill('SIGKILL'), WRITER_SILENT_MS_MAX);
    child.stderr.on('data', (c: Buffer) => { err += c.toString(); });
    child.stdout.on('data', (c: Buffer) => {
      clearTimeout(silent);
      silent = setTimeout(() => child.kill('SIGKILL'), WRITER_SILENT_MS_MAX);
      buf += c.toString();
      const lines = buf.split('\n');
      buf = lines.pop()!;
      for (const l of lines) {
        const m = /^ack (\d+)$/.exec(l);
        if (!m) continue;
        highest = Math.max(highest, Number(m[1]));
        seen += 1;
      }
      if (seen >= acks && !killing) {
        killing = true;
        setTimeout(() => child.kill('SIGKILL'), delayMs);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(silent);
      if (signal === 'SIGKILL' && killing) resolve(highest);
      else reject(new Error(`writer exited (${code ?? signal}) before it was killed:\n${err}`));
    });
  });
}

test('SIGKILL during snapshot compaction loses no acknowledged metadata write', async (t) => {
  const seed = runSeed();
  t.diagnostic(`seed ${seed} (SVCD_CRASH_SEED=${seed} replays the kill delays)`);
  const rng = new Rng(seed);
  const dir = tempDir('svcd-meta-crash-');
  t.after(() => removeDir(dir));
  let acked = 0;
  let midCompaction = 0;
  for (let k = 0; k < KILLS; k++) {
    const upTo = await runAndKill(dir, acked, rng.int(20, 120), rng.int(0, 40));
    const tmp = join(dir, 'snapshot.jsonl.tmp');
    if (existsSync(tmp)) {
      midCompaction += 1;
      rmSync(tmp); // so a later kill is counted only if it, too, lands mid-write
    }
    // Every write up to `upTo` that was acknowledged set trim t on rows (t*200 .. t*200+199) mod ROWS.
    const store = new LocalMetadataStore(dir, 1_000_000);
    const rows = unpackStreamRows((await store.load()).streams);
    await store.close();
    assert.equal(rows.length, ROWS, `kill ${k}: every row is there`);
    const trimOf = new Map(rows.map((r) => [r.key, r.trim_seq]));
    const newest = new Map<string, number>();
    for (let w = acked + 1; w <= upTo; w++) for (let j = 0; j < 200; j++) newest.set(`k${(w * 200 + j) % ROWS}`, w);
    for (const [key, w] of newest) {
      assert.ok((trimOf.get(key) ?? -1) >= w, `kill ${k}: ${key} holds trim ${trimOf.get(key)}, below the acknowledged ${w}`);
    }
    acked = Math.max(upTo, ...rows.map((r) => r.trim_seq));
  }
  t.diagnostic(`${midCompaction} of ${KILLS} kills landed while a snapshot was being written`);
});
