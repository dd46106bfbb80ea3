// svcd under --cpu-prof. Node refuses --cpu-prof in NODE_OPTIONS, and test/helpers/server.ts takes
// no node flags, so a profiled run spawns the server itself, with the same arguments the helper uses.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT, tempDir, type RunningServer } from '../../test/helpers/server.ts';

const START_TIMEOUT_MS = 20_000;

export async function startProfiledServer(profileDir: string, args: string[] = []): Promise<RunningServer> {
  const dataDir = tempDir('svcd-bench-prof-');
  const proc = spawn(process.execPath, [
    '--cpu-prof', `--cpu-prof-dir=${profileDir}`,
    '--import', 'tsx', join(REPO_ROOT, 'src', 'main.ts'),
    '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--http-engine', 'uws', ...args,
  ], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), START_TIMEOUT_MS);
    proc.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) { clearTimeout(timer); resolve(Number(m[1])); }
    });
    proc.stderr.on('data', (c: Buffer) => { out += c.toString(); });
    proc.once('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited (${code}) before listening:\n${out}`)); });
  });
  const signal = async (sig: NodeJS.Signals): Promise<void> => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill(sig);
    await exited;
  };
  return {
    baseUrl: `http://127.0.0.1:${port}`, port, dataDir, proc, output: () => out,
    stop: () => signal('SIGTERM'),
    kill: () => signal('SIGKILL'),
  };
}
