// What authentication costs on the append path: two stars side by side, one with `--auth off` and
// one with `--auth jwt` (HS256, a token from the api-key exchange narrowed to the bench bucket), each
// driven with single-record appends over N keep-alive connections. Phases alternate (off, jwt, off,
// jwt) so drift on a shared machine lands on both; the whole run stays around 30-40 s.
//
//   npx tsx bench/auth-cost.ts [--engine uws|node] [--connections 16] [--seconds 5] [--body-bytes 64]
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newHistogram, pctMs, type Histogram } from './lib/hist.ts';

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SECRET = 'auth-cost-bench-secret-0123456789abcdef';
const ROOT = { key_id: 'bench-root', secret: 'bench-root-secret-of-at-least-32-bytes' };
const BUCKET = 'bench';
const START_TIMEOUT_MS = 20_000;
const WARMUP_MS = 1_000;
const ROUNDS = 3;
/** The hard bound on the whole run, whatever the flags say. */
const RUN_BOUND_MS = 60_000;

function flag(name: string, fallback: string): string {
  const argv = process.argv.slice(2);
  const i = argv.indexOf(`--${name}`);
  if (i >= 0 && i + 1 < argv.length) return argv[i + 1];
  const eq = argv.find((a) => a.startsWith(`--${name}=`));
  return eq ? eq.slice(name.length + 3) : fallback;
}

const engine = flag('engine', 'uws');
const connections = Number(flag('connections', '16'));
const seconds = Number(flag('seconds', '5'));
const bodyBytes = Number(flag('body-bytes', '64'));
if (!['uws', 'node'].includes(engine) || !(connections > 0) || !(seconds > 0) || !(bodyBytes >= 0)) {
  console.error('usage: npx tsx bench/auth-cost.ts [--engine uws|node] [--connections N] [--seconds S] [--body-bytes B]');
  process.exit(2);
}

interface Star { name: string; port: number; dataDir: string; proc: ChildProcess; engine: string }

async function startStar(name: string, args: string[], env: Record<string, string>): Promise<Star> {
  const dataDir = mkdtempSync(join(tmpdir(), `svcd-bench-${name}-`));
  const childEnv: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVCD_')) childEnv[k] = v;
  const proc = spawn(process.execPath, [
    '--import', 'tsx', join(REPO_ROOT, 'src', 'main.ts'),
    '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--http-engine', engine, ...args,
  ], { cwd: REPO_ROOT, env: { ...childEnv, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const m = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`${name} did not start:\n${out}`)); }, START_TIMEOUT_MS);
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const hit = /listening on https?:\/\/127\.0\.0\.1:(\d+) \(engine (\w+)\)/.exec(out);
      if (hit) { clearTimeout(timer); resolve(hit); }
    });
    proc.stderr!.on('data', (c: Buffer) => { out += c.toString(); });
    proc.once('exit', (code) => { clearTimeout(timer); reject(new Error(`${name} exited (${code}):\n${out}`)); });
  });
  return { name, port: Number(m[1]), dataDir, proc, engine: m[2] };
}

async function stopStar(s: Star): Promise<void> {
  if (s.proc.exitCode === null && s.proc.signalCode === null) {
    const exited = new Promise<void>((r) => s.proc.once('exit', () => r()));
    s.proc.kill('SIGTERM');
    const t = setTimeout(() => s.proc.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(t);
  }
  rmSync(s.dataDir, { recursive: true, force: true });
}

/** Keep-alive connections, a fresh set per phase: sockets left idle while the other star runs are never reused. */
let agent = new http.Agent({ keepAlive: true, maxSockets: connections });

function post(port: number, path: string, body: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1', port, method: 'POST', path, agent,
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function must(what: string, p: Promise<{ status: number; text: string }>, status: number): Promise<string> {
  const r = await p;
  if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status}: ${r.text}`);
  return r.text;
}

interface PhaseResult { requests: number; errors: number; ms: number; hist: Histogram }

/** N closed loops of single-record appends for `ms`; latencies in µs. */
async function drive(port: number, headers: Record<string, string>, ms: number, hist: Histogram | undefined): Promise<PhaseResult> {
  const path = `/v1/streams/${BUCKET}/load/records`;
  const body = JSON.stringify({ records: [{ body: 'x'.repeat(bodyBytes) }] });
  agent.destroy();
  agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const t0 = performance.now();
  const deadline = t0 + ms;
  let requests = 0;
  let errors = 0;
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < deadline) {
      const s = process.hrtime.bigint();
      try {
        const r = await post(port, path, body, headers);
        if (r.status !== 200) errors += 1;
      } catch {
        errors += 1;
      }
      const us = Number((process.hrtime.bigint() - s) / 1000n);
      hist?.recordValue(Math.max(1, us));
      requests += 1;
    }
  }));
  return { requests, errors, ms: performance.now() - t0, hist: hist ?? newHistogram() };
}

async function main(): Promise<void> {
  const bound = setTimeout(() => { console.error('auth-cost: run bound exceeded, giving up'); process.exit(1); }, RUN_BOUND_MS);
  bound.unref();
  const stars: Star[] = [];
  try {
    const [off, jwt] = await Promise.all([
      startStar('off', [], {}),
      startStar('jwt', ['--auth', 'jwt', '--insecure-auth', '--root-key-id', ROOT.key_id], { SVCD_JWT_HMAC_SECRET: SECRET, SVCD_ROOT_SECRET: ROOT.secret }),
    ]);
    stars.push(off, jwt);

    // The jwt star: an admin token sets up, then the load runs on an exchange-minted append grant,
    // as a producer would.
    const adminTok = JSON.parse(await must('exchange admin', post(jwt.port, '/v1/token/exchange', JSON.stringify({ ...ROOT, scope: 'svc:admin' }), {}), 200)).token as string;
    const appendTok = JSON.parse(await must('exchange append', post(jwt.port, '/v1/token/exchange',
      JSON.stringify({ ...ROOT, scope: `svc:append:${BUCKET}:*`, ttl_seconds: 3600 }), {}), 200)).token as string;
    const modes: { star: Star; setup: Record<string, string>; load: Record<string, string> }[] = [
      { star: off, setup: {}, load: {} },
      { star: jwt, setup: { authorization: `Bearer ${adminTok}` }, load: { authorization: `Bearer ${appendTok}` } },
    ];
    for (const m of modes) {
      await must(`${m.star.name} bucket`, post(m.star.port, `/v1/buckets/${BUCKET}`, '{}', m.setup), 201);
      await must(`${m.star.name} stream`, post(m.star.port, `/v1/streams/${BUCKET}/load`, '{}', m.setup), 201);
    }

    console.log(`auth-cost: engine ${off.engine}, ${connections} connections, ${bodyBytes}-byte single-record appends, ` +
      `${ROUNDS} alternating rounds of ${seconds}s per mode (after ${WARMUP_MS} ms warmup each)`);
    const totals = new Map<string, PhaseResult>();
    for (const m of modes) {
      await drive(m.star.port, m.load, WARMUP_MS, undefined);
      totals.set(m.star.name, { requests: 0, errors: 0, ms: 0, hist: newHistogram() });
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const m of modes) {
        const t = totals.get(m.star.name)!;
        const before = t.hist.maxValue;
        const r = await drive(m.star.port, m.load, seconds * 1000, t.hist);
        const phaseRps = r.requests / (r.ms / 1000);
        console.log(`  round ${round + 1} ${m.star.name.padEnd(4)} ${phaseRps.toFixed(0).padStart(7)} req/s over ${(r.ms / 1000).toFixed(1)} s` +
          (t.hist.maxValue > before ? `, max so far ${(t.hist.maxValue / 1000).toFixed(1)} ms` : ''));
        t.requests += r.requests;
        t.errors += r.errors;
        t.ms += r.ms;
      }
    }

    const rows = [...totals.entries()].map(([name, t]) => ({
      name, rps: t.requests / (t.ms / 1000), p50: pctMs(t.hist, 50), p99: pctMs(t.hist, 99),
      max: t.hist.maxValue / 1000, errors: t.errors, requests: t.requests,
    }));
    const pad = (s: string, n: number): string => s.padStart(n);
    console.log(['mode', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'requests', 'errors'].map((h, i) => (i === 0 ? h.padEnd(6) : pad(h, 10))).join(''));
    for (const r of rows) {
      console.log(r.name.padEnd(6) + pad(r.rps.toFixed(0), 10) + pad(r.p50.toFixed(3), 10) + pad(r.p99.toFixed(3), 10) + pad(r.max.toFixed(1), 10) +
        pad(String(r.requests), 10) + pad(String(r.errors), 10));
    }
    const [o, j] = rows;
    const pct = (a: number, b: number): string => `${a >= b ? '+' : ''}${(((a - b) / b) * 100).toFixed(1)}%`;
    console.log(`jwt vs off: req/s ${pct(j.rps, o.rps)}, p50 ${pct(j.p50, o.p50)}, p99 ${pct(j.p99, o.p99)}`);
    if (o.errors + j.errors > 0) process.exitCode = 1;
  } finally {
    agent.destroy();
    await Promise.all(stars.map(stopStar));
    clearTimeout(bound);
  }
}

main().catch((err) => {
  console.error(`auth-cost: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
