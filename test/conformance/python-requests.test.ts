// The star's HTTP data plane driven from Python's `requests` (urllib3 underneath), a client nobody on
// this project wrote, on both HTTP engines: proof that the bridge speaks HTTP/1.1 and the spec's JSON
// to an ordinary client, not merely to fetch and node:http. test/conformance/python-requests.py runs
// one scenario group per call against a real star and asserts every check itself (exact statuses,
// content types and JSON fields per the spec), printing one JSON line per check passed and a summary
// line; here each group's run must exit 0 with every one of its checks passed.
//   - create: bucket and streams (201); keys that need escaping (`orders/eu` as `orders%2Feu`) sent as
//     one segment, exactly as built, and given back decoded by GET;
//   - append-read: json= appends of body, body_b64, name/value and name_b64/value_b64 headers → 200
//     {start, end, tail}; reads by the read encoding rule, format=base64, tail_offset, limit; the tail;
//   - match: a match_seq_num miss is 412 {error, tail} with nothing appended; a retry at that tail lands;
//   - errors: 404, 405 with Allow, 400 for bad envelopes and read queries, each in the {error} envelope;
//   - chunked: a generator body goes out Transfer-Encoding: chunked and is appended whole;
//   - subscribe: SSE with stream=True, the history up to id == tail, a live record from another
//     Session, Last-Event-ID resumes exactly at n over the query, and 400 without a start;
//   - keepalive: 200 appends over one Session, all on one connection, seq_nums contiguous.
// Debian's python3-requests at /usr/bin/python3 (not the `python3` on PATH, which may be another
// interpreter). Without it the tests skip, except under CI=true, where they must run.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ENGINES, startServer, type RunningServer } from '../helpers/server.ts';
import { stopServer, uniq } from './client.ts';

const PYTHON = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('./python-requests.py', import.meta.url));
/** One group's whole Python run (the interpreter, requests' import, at most a few hundred requests and
 *  an SSE wait bounded by the script itself). Past it the run is SIGKILLed and its test fails with
 *  what Python printed, rather than hanging the file. A bound, not a speed. */
const PYTHON_RUN_MS_MAX = 60_000;
/** The import probe at file load. */
const PYTHON_PROBE_MS_MAX = 15_000;
/** What a run may print: a line per check, a summary, or a traceback. */
const PYTHON_OUTPUT_BYTES_MAX = 4 * 1024 * 1024;

/** Why Python's requests cannot be used here, or false when it can. */
function probePython(): string | false {
  const r = spawnSync(PYTHON, ['-c', 'import requests'], { encoding: 'utf8', timeout: PYTHON_PROBE_MS_MAX });
  if (r.error) return `${PYTHON} did not run: ${r.error.message}`;
  if (r.status !== 0) return `${PYTHON} cannot import requests: ${r.stderr.trim().split('\n').pop() ?? ''}`;
  return false;
}
const pythonMissing = probePython();
const skip: string | false = pythonMissing && process.env.CI !== 'true'
  ? `${pythonMissing} (apt-get install -y python3-requests); these tests run whenever CI=true`
  : false;

/** The script's last line. */
interface Summary { group: string; ok: boolean; passed: string[]; failed: Record<string, string>; requests: string }

/** Each group, what it covers, and how many checks it must report passed (a group that stopped short
 *  or skipped a check fails here even if it exited 0). */
const GROUPS: { group: string; title: string; checks: number }[] = [
  { group: 'create', title: 'buckets and streams are 201; a key needing escapes (orders%2Feu) is one segment, given back decoded', checks: 5 },
  { group: 'append-read', title: 'json= append of body, body_b64 and both header forms is 200 {start, end, tail}; reads by the encoding rule, format=base64, tail_offset, limit; the tail', checks: 6 },
  { group: 'match', title: 'a match_seq_num miss is 412 {error, tail} with nothing appended; a retry at that tail is 200', checks: 2 },
  { group: 'errors', title: '404, 405 with Allow, and 400 for bad envelopes and read queries, each {error} in application/json', checks: 4 },
  { group: 'chunked', title: 'a Transfer-Encoding: chunked append (a generator body) is 200 and reads back whole', checks: 2 },
  { group: 'subscribe', title: 'SSE (stream=True): history to id == tail, a live record from another Session, Last-Event-ID resumes exactly at n; 400 without a start', checks: 4 },
  { group: 'keepalive', title: '200 appends over one Session reuse one connection, seq_nums contiguous', checks: 2 },
];

/** Runs one group of python-requests.py against `baseUrl` on a fresh bucket; its summary, or a failure
 *  carrying everything Python printed. */
function python(baseUrl: string, group: string): Promise<{ summary: Summary; printed: string }> {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, [SCRIPT, baseUrl, uniq(`py-${group}`), group],
      { timeout: PYTHON_RUN_MS_MAX, killSignal: 'SIGKILL', maxBuffer: PYTHON_OUTPUT_BYTES_MAX, encoding: 'utf8' },
      (err, stdout, stderr) => {
        const printed = `stdout:\n${stdout}\nstderr:\n${stderr}`;
        if (err) {
          reject(new Error(`python ${group} failed (${err.killed ? `killed after ${PYTHON_RUN_MS_MAX} ms` : `exit ${String(err.code)}`}):\n${printed}`));
          return;
        }
        const last = stdout.trim().split('\n').pop() ?? '';
        try {
          resolve({ summary: JSON.parse(last) as Summary, printed });
        } catch {
          reject(new Error(`python ${group} printed no summary line:\n${printed}`));
        }
      });
  });
}

for (const engine of ENGINES) {
  describe(`HTTP data plane from Python requests (${engine})`, { skip }, () => {
    let srv: RunningServer | undefined;

    before(async () => {
      // Under CI the tests must run: say why they cannot, once, instead of a failure per group.
      if (pythonMissing) throw new Error(`CI=true but ${pythonMissing}: install python3-requests`);
      srv = await startServer({ engine });
      assert.equal(srv.engine, engine, 'the star serves with the engine asked for');
    });
    after(() => stopServer(srv));

    for (const { group, title, checks } of GROUPS) {
      test(`${group}: ${title}`, async () => {
        const { summary, printed } = await python(srv!.baseUrl, group);
        assert.equal(summary.group, group, printed);
        assert.deepEqual(summary.failed, {}, printed);
        assert.equal(summary.ok, true, printed);
        assert.equal(summary.passed.length, checks, `the checks python ${group} passed:\n${printed}`);
      });
    }
  });
}
