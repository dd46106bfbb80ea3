// The public Durable Streams conformance suite (@durable-streams/server-conformance-tests, unchanged)
// against a real star on each HTTP engine: vitest runs test/ds/suite.vitest.ts with the star's /ds
// base URL, and every test it runs must pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENGINES, REPO_ROOT, removeDir, startServer, tempDir } from '../helpers/server.ts';

/** The suite's long-polls at the tail answer 204 after this long (the default, 20 s, would make the
 *  run minutes longer; the tests that wait for the 204 allow 5 s). */
const LONG_POLL_MS = 2000;
/** The whole suite on one engine; it takes well under a minute on an idle machine. */
const SUITE_TIMEOUT_MS = 300_000;

interface VitestReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  testResults: { assertionResults: { status: string; title: string; ancestorTitles: string[]; failureMessages: string[] }[] }[];
}

/** The suite's TTL tests measure sliding expiry windows of a few seconds: they run on their own, so
 *  the rest of the suite's concurrent requests cannot delay them past a window. */
const TTL_GROUP = 'TTL Expiration Behavior ';

/** One vitest run of the suite's tests whose full names match `pattern`. */
function runSuite(baseUrl: string, reportFile: string, pattern: string): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [
      join(REPO_ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--config', 'test/ds/vitest.config.ts',
      '--reporter=json', `--outputFile=${reportFile}`, '--testNamePattern', pattern,
    ], { cwd: REPO_ROOT, env: { ...process.env, DS_BASE_URL: baseUrl }, stdio: ['ignore', 'ignore', 'pipe'] });
    // Piped, not inherited: vitest and its workers must not hold the test runner's own stderr, or
    // the run could not end while an orphaned worker lives.
    child.stderr!.on('data', (d: Buffer) => process.stderr.write(d));
    const bound = setTimeout(() => {
      process.stderr.write(`test: vitest ran past ${SUITE_TIMEOUT_MS} ms; SIGKILLed\n`);
      child.kill('SIGKILL');
    }, SUITE_TIMEOUT_MS);
    child.once('error', (err) => { clearTimeout(bound); reject(err); });
    child.once('exit', (code) => { clearTimeout(bound); resolve(code); });
  });
}

for (const engine of ENGINES) {
  test(`Durable Streams conformance suite on ${engine}`, { timeout: SUITE_TIMEOUT_MS }, async (t) => {
    const star = await startServer({ engine, args: ['--ds-long-poll-ms', String(LONG_POLL_MS)] });
    const dir = tempDir('svcd-ds-report-');
    try {
      const reports: VitestReport[] = [];
      for (const [name, pattern] of [['rest', `^(?!${TTL_GROUP})`], ['ttl', `^${TTL_GROUP}`]]) {
        const reportFile = join(dir, `${name}.json`);
        await runSuite(`${star.baseUrl}/ds`, reportFile, pattern);
        reports.push(JSON.parse(readFileSync(reportFile, 'utf8')) as VitestReport);
      }
      const failed = reports.flatMap((r) => r.testResults).flatMap((f) => f.assertionResults.filter((a) => a.status === 'failed')
        .map((a) => `${[...a.ancestorTitles, a.title].join(' > ')}: ${(a.failureMessages[0] ?? '').split('\n').slice(0, 6).join(' / ')}`));
      const passed = reports.reduce((n, r) => n + r.numPassedTests, 0);
      t.diagnostic(`${engine}: ${passed} passed, ${reports.reduce((n, r) => n + r.numFailedTests, 0)} failed`);
      // A test that passed on its retry (vitest.config.ts) keeps its first attempt's error: named here,
      // so a test that needs its retry often shows in the CI output rather than passing unseen.
      for (const a of reports.flatMap((r) => r.testResults).flatMap((f) => f.assertionResults)) {
        if (a.status === 'passed' && a.failureMessages.length > 0) {
          t.diagnostic(`${engine}: passed on its retry: ${[...a.ancestorTitles, a.title].join(' > ')}: ${(a.failureMessages[0] ?? '').split('\n')[0]}`);
        }
      }
      // The patterns are complementary; the second must still name the suite's TTL group (a renamed
      // group would silently run with the rest again).
      assert.ok(reports[1].numPassedTests + reports[1].numFailedTests > 0, `no test matched ${TTL_GROUP}`);
      assert.deepEqual(failed, [], `failed on ${engine}`);
    } finally {
      await star.stop();
      removeDir(star.dataDir);
      removeDir(dir);
    }
  });
}
