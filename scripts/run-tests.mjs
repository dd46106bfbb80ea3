// npm test's runner: node:test's own run(), as `node --test` would, but with the slowest files first.
// `node --test` starts files in path order, so a long file late in the alphabet (the gRPC admission
// floods, the cluster suites) starts in the last third and ends the run alone on a 2-core machine.
// test/durations.json holds each file's seconds from an earlier run; files it does not know start
// first (they may be long). SVCD_TEST_DURATIONS_RECORD=1 rewrites it from this run.
// The flags that node --test would pass (--import tsx, the reaper) reach each file's process through
// this process's own execArgv.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';

/** As node --test: at most four files at once, each test bounded, children ended when done. */
const FILES_AT_ONCE_MAX = 4;
const TEST_TIMEOUT_MS = 600_000;
const DURATIONS_FILE = 'test/durations.json';

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : testFiles(path);
    return e.name.endsWith('.test.ts') ? [path] : [];
  });
}

function knownSeconds() {
  try {
    return JSON.parse(readFileSync(DURATIONS_FILE, 'utf8'));
  } catch {
    return {};
  }
}

const seconds = knownSeconds();
const files = testFiles('test').sort();
// Unknown files first, then the slowest; ties in path order (sort is stable).
files.sort((a, b) => (seconds[b] ?? Infinity) - (seconds[a] ?? Infinity));

const measured = {};
const stream = run({ files, concurrency: FILES_AT_ONCE_MAX, timeout: TEST_TIMEOUT_MS, forceExit: true });
stream.on('test:fail', (data) => {
  if (!data.todo) process.exitCode = 1;
});
if (process.env.SVCD_TEST_DURATIONS_RECORD) {
  const add = (data) => {
    if (data.nesting !== 0 || data.file === undefined) return;
    const file = relative(process.cwd(), data.file);
    measured[file] = (measured[file] ?? 0) + (data.details?.duration_ms ?? 0) / 1000;
  };
  stream.on('test:pass', add);
  stream.on('test:fail', add);
  stream.on('end', () => {
    const rounded = Object.fromEntries(Object.entries(measured).sort(([, a], [, b]) => b - a).map(([f, s]) => [f, Math.round(s * 10) / 10]));
    writeFileSync(DURATIONS_FILE, `${JSON.stringify(rounded, null, 2)}\n`);
  });
}
stream.compose(spec).pipe(process.stdout);
