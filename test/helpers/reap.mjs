// Preloaded into every test file's process by `npm test` (`--import ./test/helpers/reap.mjs`): every
// child process a test starts (stars, gateways, the svc CLI, vitest, chromium) is SIGKILLed when the
// file's process ends, whether its tests finished (the runner's --test-force-exit ends a file whose
// tests are done even if a failed test left a handle open) or the runner's per-file timeout sent
// SIGTERM. Plain JavaScript: worker threads inherit the --import, and tsx's loader is not there yet
// when they load it. Without it a test that failed before its cleanup left children that kept the file, or
// the whole run, alive, and kept loading the cores for the files after it.
import { ChildProcess } from 'node:child_process';
import { isMainThread } from 'node:worker_threads';

// A worker thread inherits the --import, but has neither children of its own to reap nor signals.
if (isMainThread) {
  /** @type {Set<import('node:child_process').ChildProcess>} */
  const live = new Set();

  // The internal method that spawn, execFile and fork all start their child through (not in the
  // public types).
  const proto = ChildProcess.prototype;
  const spawnChild = proto.spawn;
  proto.spawn = function spawnTracked(...args) {
    const started = spawnChild.apply(this, args);
    live.add(this);
    this.once('exit', () => live.delete(this));
    return started;
  };

  function reap() {
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
}
