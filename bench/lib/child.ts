// Bench children: every load generator and floor server is its own Node process (so it never shares
// the server's or the orchestrator's event loop), started with the tsx loader and driven over IPC.
import { fork, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');

export interface BenchChild {
  proc: ChildProcess;
  /** The next message whose `type` is one of the given ones; rejects if the child exits first. */
  next<T extends { type: string }>(...types: string[]): Promise<T>;
  /** Subscribes to every message (for progress messages). */
  onMessage(fn: (msg: { type: string }) => void): () => void;
  send(msg: unknown): void;
  stop(): Promise<void>;
}

/** Forks bench/<relPath> with the TypeScript loader. */
export function startChild(relPath: string, env: Record<string, string> = {}): BenchChild {
  const proc = fork(join(BENCH_DIR, relPath), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const queue: { type: string }[] = [];
  const waiters: { types: string[]; resolve: (m: { type: string }) => void; reject: (e: Error) => void }[] = [];
  const listeners: ((m: { type: string }) => void)[] = [];
  let exitErr: Error | undefined;
  const exited = new Promise<void>((resolve) => {
    proc.once('exit', (code, signal) => {
      exitErr = new Error(`bench child ${relPath} exited (${code ?? signal})`);
      for (const w of waiters.splice(0)) w.reject(exitErr);
      resolve();
    });
  });
  proc.on('message', (raw) => {
    const msg = raw as { type: string };
    for (const l of listeners) l(msg);
    const i = waiters.findIndex((w) => w.types.includes(msg.type));
    if (i >= 0) waiters.splice(i, 1)[0].resolve(msg);
    else queue.push(msg);
  });
  return {
    proc,
    next<T extends { type: string }>(...types: string[]): Promise<T> {
      const i = queue.findIndex((m) => types.includes(m.type));
      if (i >= 0) return Promise.resolve(queue.splice(i, 1)[0] as T);
      if (exitErr) return Promise.reject(exitErr);
      return new Promise<T>((resolve, reject) => {
        waiters.push({ types, resolve: resolve as (m: { type: string }) => void, reject });
      });
    },
    onMessage(fn) {
      listeners.push(fn);
      return () => { const i = listeners.indexOf(fn); if (i >= 0) listeners.splice(i, 1); };
    },
    send(msg) { if (proc.connected) proc.send(msg as object); },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM');
        const t = setTimeout(() => proc.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(t);
      }
    },
  };
}

/** In a child: the typed send to the parent. */
export function toParent(msg: { type: string } & Record<string, unknown>): void {
  process.send?.(msg);
}

/** A load generator's side of the IPC: runs each `run` message's spec and answers its result (or the
 *  error), exits on `exit` or SIGTERM, and tells the parent it is ready. */
export function serveRuns<M extends { type: 'run'; spec: unknown } | { type: 'exit' }>(
  run: (spec: Extract<M, { type: 'run' }>['spec']) => Promise<unknown>,
): void {
  process.on('message', (raw) => {
    const msg = raw as M;
    if (msg.type === 'exit') process.exit(0);
    if (msg.type === 'run') {
      run(msg.spec).then(
        (result) => toParent({ type: 'result', result }),
        (err: Error) => toParent({ type: 'error', message: err.stack ?? err.message }),
      );
    }
  });
  process.on('SIGTERM', () => process.exit(0));
  toParent({ type: 'ready' });
}
