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
  baseUrl: string;
  port: number;
  dataDir: string;
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

/** The node arguments that run svcd's main: the built bundle under SVCD_SERVER_ENTRY=bundle (`npm test`
 *  builds it first: it starts in half the time tsx takes, as `npm start` and the benches run it),
 *  else the TypeScript sources through tsx (a single test file run by hand needs no build). */
export function starEntry(): string[] {
  return process.env.SVCD_SERVER_ENTRY === 'bundle'
    ? [join(REPO_ROOT, 'src', 'main.bundle.mjs')]
    : ['--import', 'tsx', join(REPO_ROOT, 'src', 'main.ts')];
}

export async function startServer(opts: StartOptions = {}): Promise<RunningServer> {
  const dataDir = opts.dataDir ?? tempDir();
  const args = [
    ...starEntry(),
    '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--http-engine', opts.engine ?? 'uws',
    ...(opts.args ?? []),
  ];
  const proc = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...(opts.env ?? {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), START_TIMEOUT_MS);
    const onData = (chunk: Buffer): void => {
      out += chunk.toString();
      const m = /listening on https?:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) { clearTimeout(timer); resolve(Number(m[1])); }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', (c: Buffer) => { out += c.toString(); });
    proc.once('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited (${code}) before listening:\n${out}`)); });
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    dataDir,
    proc,
    output: () => out,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exited;
    },
    async kill() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
}
