// The Gateway as a real child process (`svcd gateway`), found through its listening line (http or https).
import { spawn, type ChildProcess } from 'node:child_process';
import { REPO_ROOT, starEntry, stopBounded } from '../helpers/server.ts';

/** How long a gateway may take to print its listening line, or to exit when refused. */
export const GATEWAY_START_WAIT_MS = 60_000;
/** How long a gateway may take to exit after SIGTERM before the test SIGKILLs it (and says so): a stuck
 *  shutdown fails the test that checks it, not the whole run. */
export const GATEWAY_STOP_WAIT_MS_MAX = 20_000;

export interface Gateway { url: string; proc: ChildProcess; output(): string; stop(): Promise<void> }

/** Starts `svcd gateway --listen 127.0.0.1:0 …`; resolves with the gateway, or its exit when it refused to start. */
export function runGateway(args: string[], env: Record<string, string> = {}): Promise<Gateway | { code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...starEntry(), 'gateway', '--listen', '127.0.0.1:0', ...args], {
      cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`gateway did not start:\n${out}`)); }, GATEWAY_START_WAIT_MS);
    const exited = new Promise<void>((r) => proc.once('exit', () => r()));
    const onData = (c: Buffer): void => {
      out += c.toString();
      const m = /svcd gateway listening on (https?:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: m[1], proc, output: () => out,
          stop: () => stopBounded(proc, exited, 'a gateway', GATEWAY_STOP_WAIT_MS_MAX),
        });
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.once('exit', (code) => { clearTimeout(timer); resolve({ code, out }); });
  });
}

export async function startGatewayChild(args: string[], env: Record<string, string> = {}): Promise<Gateway> {
  const g = await runGateway(args, env);
  if (!('url' in g)) throw new Error(`gateway exited (${g.code}):\n${g.out}`);
  return g;
}

/** A gateway expected to refuse its start: its exit code and output. One that starts instead is
 *  stopped at once (`started`), so the failing test leaves no process keeping its file alive. */
export async function runRefusedGateway(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string; started: boolean }> {
  const g = await runGateway(args, env);
  if (!('url' in g)) return { ...g, started: false };
  const out = g.output();
  await g.stop();
  return { code: null, out, started: true };
}
