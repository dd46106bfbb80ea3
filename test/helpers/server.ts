// Starts a real svcd child process on loopback for black-box tests, and stops or SIGKILLs it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const ENGINES = ['uws', 'node'] as const;
export type Engine = (typeof ENGINES)[number];

/** How long a child may take to print its listening line before the harness gives up. */
const START_TIMEOUT_MS = 60_000; // a bound, not a speed: a loaded CI machine has taken over 20 s to start a star

export interface RunningServer {
  /** http://… or https://… following whether the star was given TLS files (StartOptions.tls). */
  baseUrl: string;
  port: number;
  dataDir: string;
  /** The engine the star reports serving with (mtls always reports node). */
  engine: string;
  /** The scheme its listening line printed. */
  printedScheme: string;
  proc: ChildProcess;
  output: () => string;
  /** Graceful stop (SIGTERM), waits for exit. */
  stop(): Promise<void>;
  /** SIGKILL, waits for exit. */
  kill(): Promise<void>;
}

export interface StartOptions {
  engine?: Engine;
  dataDir?: string;
  args?: string[];
  env?: Record<string, string>;
  /** The star serves TLS (its args carry --tls-cert/--tls-key): baseUrl is https. */
  tls?: boolean;
  /** Node's own flags, before the entry (the benches' --cpu-prof; Node refuses it in NODE_OPTIONS). */
  nodeArgs?: string[];
  /** The child sees the parent's environment minus every SVCD_* setting (then `env`), so a
   *  developer's own settings cannot change what a test asserts. */
  cleanEnv?: boolean;
  /** Told the star's output so far (stdout and stderr) as each piece arrives, from its start on: a
   *  test that must act on a line printed before the star listens waits for that line, not a time. */
  onOutput?: (output: string) => void;
}

/** A star that does not exit this long after SIGTERM is killed (a bound, not a speed): past its own
 *  worst graceful stop (5 s for requests on their way, 5 s of gRPC grace, then its logs), so a slow
 *  machine's graceful stop is not turned into a SIGKILL that a test then misreads. */
const STOP_WAIT_MS_MAX = 30_000;

/** The environment a star child sees (see StartOptions.cleanEnv). */
export function childEnv(opts: Pick<StartOptions, 'env' | 'cleanEnv'>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!opts.cleanEnv || !k.startsWith('SVCD_')) base[k] = v;
  return { ...base, ...(opts.env ?? {}) };
}

/** How long a line the star prints after its listening line (gRPC, ops) may take to arrive. */
const OUTPUT_WAIT_MS = 10_000;

/** Waits until a star's output matches `re`: its start lines are printed together, but a later one
 *  may arrive in a later chunk than the listening line startServer waited for. */
export async function waitForOutput(star: { output(): string }, re: RegExp): Promise<RegExpExecArray> {
  const deadline = Date.now() + OUTPUT_WAIT_MS;
  for (;;) {
    const m = re.exec(star.output());
    if (m) return m;
    if (Date.now() > deadline) throw new Error(`expected ${re} in the star's output:\n${star.output()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function tempDir(prefix = 'svcd-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** The node arguments that run the `svc` CLI: its bundle under SVCD_SERVER_ENTRY=bundle (a command
 *  starts in about 0.35 s against 0.6 s through tsx, and the CLI suite runs hundreds), else bin/svc.mjs. */
export function svcEntry(): string[] {
  return process.env.SVCD_SERVER_ENTRY === 'bundle' ? [join(REPO_ROOT, 'src', 'svc.bundle.mjs')] : [join(REPO_ROOT, 'bin', 'svc.mjs')];
}

/** The node arguments that run svcd's main: the built bundle under SVCD_SERVER_ENTRY=bundle (`npm test`
 *  builds it first: it starts in half the time tsx takes, as `npm start` and the benches run it),
 *  else the TypeScript sources through tsx (a single test file run by hand needs no build). */
export function starEntry(): string[] {
  return process.env.SVCD_SERVER_ENTRY === 'bundle'
    ? [join(REPO_ROOT, 'src', 'main.bundle.mjs')]
    : ['--import', 'tsx', join(REPO_ROOT, 'src', 'main.ts')];
}

/** The node arguments that start a star on loopback (port 0) over `dataDir`. */
export function starArgs(dataDir: string, engine: Engine, args: readonly string[] = []): string[] {
  return [...starEntry(), '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--http-engine', engine, ...args];
}

/** Answers whether `p` settled within `maxMs`; the timer never outlives the race. */
export async function within(p: Promise<unknown>, maxMs: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<boolean>((r) => { timer = setTimeout(() => r(false), maxMs); });
  try {
    return await Promise.race([p.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** SIGTERM, then waits for the exit; SIGKILLs (and says so on stderr) once `boundMs` passes, so a
 *  stuck shutdown fails the test that checks it rather than hanging its file. */
export async function stopBounded(proc: ChildProcess, exited: Promise<unknown>, what: string, boundMs: number): Promise<void> {
  if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
  const bounded = setTimeout(() => {
    process.stderr.write(`test: ${what} did not stop within ${boundMs} ms of SIGTERM; SIGKILLed\n`);
    proc.kill('SIGKILL');
  }, boundMs);
  await exited;
  clearTimeout(bounded);
}

export async function startServer(opts: StartOptions = {}): Promise<RunningServer> {
  const dataDir = opts.dataDir ?? tempDir();
  const args = [...(opts.nodeArgs ?? []), ...starArgs(dataDir, opts.engine ?? 'uws', opts.args)];
  const proc = spawn(process.execPath, args, { cwd: REPO_ROOT, env: childEnv(opts), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const seen = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`server did not start:\n${out}`)); }, START_TIMEOUT_MS);
    const onData = (chunk: Buffer): void => {
      out += chunk.toString();
      opts.onOutput?.(out);
      const m = /listening on (https?):\/\/127\.0\.0\.1:(\d+) \(engine (\w+)\)/.exec(out);
      if (m) { clearTimeout(timer); resolve(m); }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', (c: Buffer) => { out += c.toString(); opts.onOutput?.(out); });
    proc.once('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited (${code}) before listening:\n${out}`)); });
  });
  const port = Number(seen[2]);
  return {
    baseUrl: `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    dataDir,
    engine: seen[3],
    printedScheme: seen[1],
    proc,
    output: () => out,
    stop: () => stopBounded(proc, exited, 'a star', STOP_WAIT_MS_MAX),
    async kill() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
}

/** A star started on exactly `args` (no --listen added), for the ones startServer cannot wait for:
 *  its data bridge off, or on every interface. Resolves once its output matches `ready`. */
export async function spawnStar(args: readonly string[], env: Record<string, string>, ready: RegExp): Promise<{ proc: ChildProcess; match: RegExpExecArray; output(): string }> {
  const proc = spawn(process.execPath, [...starEntry(), ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`the star did not print ${ready}:\n${out}`)); }, START_TIMEOUT_MS);
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = ready.exec(out);
      if (m) { clearTimeout(timer); resolve(m); }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.once('exit', (code) => { clearTimeout(timer); reject(new Error(`the star exited (${code}):\n${out}`)); });
  });
  return { proc, match, output: () => out };
}

/** A star expected to refuse its boot waits at most this long; one still running is killed. */
const REFUSED_BOOT_WAIT_MS_MAX = 30_000;

/** Runs svcd's main with `args` (after its entry) until it exits: its code (null when it had to be
 *  killed: it did not refuse) and stderr. For boots that must be refused. */
export async function bootToExit(args: readonly string[]): Promise<{ code: number | null; err: string }> {
  const child = spawn(process.execPath, [...starEntry(), ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  child.stdout.resume();
  const timer = setTimeout(() => child.kill('SIGKILL'), REFUSED_BOOT_WAIT_MS_MAX);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, err };
}
