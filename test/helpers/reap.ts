// Preloaded into every test file's process by `npm test` (`--import ./test/helpers/reap.ts`): every
// child process a test starts (stars, gateways, the svc CLI, vitest, chromium) is SIGKILLed when the
// file's process ends, whether its tests finished (the runner's --test-force-exit ends a file whose
// tests are done even if a failed test left a handle open) or the runner's per-file timeout sent
// SIGTERM. Without it a test that failed before its cleanup left children that kept the file, or
// the whole run, alive, and kept loading the cores for the files after it.
import { ChildProcess } from 'node:child_process';

const live = new Set<ChildProcess>();

/** The internal method that spawn, execFile and fork all start their child through (not in the
 *  public types). */
interface Spawning { spawn(this: ChildProcess, ...args: unknown[]): unknown }
const proto = ChildProcess.prototype as unknown as Spawning;
const spawnChild = proto.spawn;
proto.spawn = function spawnTracked(this: ChildProcess, ...args: unknown[]): unknown {
  const started = spawnChild.apply(this, args);
  live.add(this);
  this.once('exit', () => live.delete(this));
  return started;
};

function reap(): void {
  for (const child of live) {
    if (child.exitCode === null && child.signalCode === null) {
      try { child.kill('SIGKILL'); } catch { /* already gone */ }
    }
  }
  live.clear();
}

process.on('exit', reap);
// The runner's timeout sends SIGTERM, whose default action would skip the exit hook. This listener
// goes in before any library's (playwright adds its own to close its browsers first).
process.once('SIGTERM', () => {
  reap();
  process.exit(143);
});
