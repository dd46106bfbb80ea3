// The README's client example is test/client/readme-example.ts, word for word (so it compiles with the
// rest), and it runs against a real star.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/server.ts';
import { Star } from './kit.ts';

const EXAMPLE = join(REPO_ROOT, 'test', 'client', 'readme-example.ts');
let star: Star;
before(async () => { star = await Star.start(); });
after(async () => { await star.stop(); });

test('the README shows the example file exactly', () => {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  assert.ok(readme.includes(`\`\`\`ts\n${readFileSync(EXAMPLE, 'utf8')}\`\`\``), 'README.md carries test/client/readme-example.ts verbatim');
});

test('the example runs against a real star', async () => {
  // Asynchronously: the star's forwarder lives in this process and must keep running meanwhile.
  const r = await promisify(execFile)(process.execPath, ['--import', 'tsx', EXAMPLE], { cwd: REPO_ROOT, env: { ...process.env, SVC_URL: star.url }, encoding: 'utf8', timeout: 60_000 });
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines.length, 11);
  assert.equal(lines[9], '999 order 999');
  assert.equal(lines[10], 'svc://shop/orders%2Feu @1000: 1 new');
});
