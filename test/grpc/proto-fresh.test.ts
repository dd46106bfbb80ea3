// src/gen must be exactly what scripts/gen-proto.mjs produces from proto/: regenerate into a temp dir
// and compare file by file. A failure means someone edited a .proto without `npm run gen:proto`.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { REPO_ROOT } from '../helpers/server.ts';

function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

describe('generated proto types', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'svcd-gen-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('src/gen matches a fresh generation (run `npm run gen:proto`)', () => {
    const out = join(tmp, 'gen');
    execFileSync(process.execPath, [join(REPO_ROOT, 'scripts', 'gen-proto.mjs'), out], { cwd: REPO_ROOT, stdio: 'pipe' });
    const committed = join(REPO_ROOT, 'src', 'gen');
    const fresh = listFiles(out);
    assert.ok(fresh.length > 0, 'the generator produced nothing');
    assert.deepEqual(listFiles(committed), fresh, 'src/gen has missing or extra files');
    const stale = fresh.filter((f) => readFileSync(join(committed, f), 'utf8') !== readFileSync(join(out, f), 'utf8'));
    assert.deepEqual(stale, [], 'src/gen is stale');
  });
});
