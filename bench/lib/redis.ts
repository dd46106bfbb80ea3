// A private redis-server for the peer measurement: its own loopback port and its own data dir in the
// OS temp dir (the filesystem svcd's bench data dirs and the fdatasync floor use), AOF on with
// `appendfsync always` (an fdatasync before each reply, group-committed per event-loop pass), no
// RDB snapshots: the configuration perf-baselines.md measured as the durable peer. The shared
// redis on 6379 is never touched.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { removeDir, tempDir } from '../../test/helpers/server.ts';
import { RespConn } from './resp.ts';

/** The Debian package's binary; BENCH_REDIS_SERVER names another. */
export const REDIS_SERVER_BIN = process.env.BENCH_REDIS_SERVER || '/usr/bin/redis-server';
const HOST = '127.0.0.1';
/** From spawn to "Ready to accept connections" (an empty AOF loads in milliseconds). */
const START_MS_MAX = 10_000;
/** SIGTERM makes Redis fsync the AOF and exit; past this it is SIGKILLed. */
const STOP_MS_MAX = 10_000;
/** The port is picked free and then handed to Redis, so another process can take it in between:
 *  a start that fails on a taken port is retried with a new one, this many times in all. */
const PORT_ATTEMPTS = 3;
/** For the checks after start (CONFIG GET, INFO) on an idle local server. */
const CHECK_MS_MAX = 5000;
/** Only the last lines of Redis's log are kept for error messages. */
const LOG_CHARS_MAX = 8192;

export interface RedisServer {
  host: string;
  port: number;
  pid: number | undefined;
  dir: string;
  /** redis_version from INFO server. */
  version: string;
  /** appendonly / appendfsync as CONFIG GET reports them once started. */
  appendonly: string;
  appendfsync: string;
  /** SIGTERM, SIGKILL past STOP_MS_MAX, then removes the data dir. */
  stop(): Promise<void>;
  /** SIGKILL without waiting (for process exit), and removes the data dir. */
  killSync(): void;
}

/** A port the kernel had free on loopback a moment ago. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, HOST, () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

const running = (p: ChildProcess): boolean => p.exitCode === null && p.signalCode === null;

/** Spawns redis-server and resolves once it says it accepts connections; rejects (with its log) if
 *  it exits or takes longer than START_MS_MAX. */
async function spawnRedis(port: number, dir: string): Promise<{ proc: ChildProcess; exited: Promise<void>; log: () => string }> {
  const proc = spawn(REDIS_SERVER_BIN, [
    '--port', String(port), '--bind', HOST, '--dir', dir,
    '--appendonly', 'yes', '--appendfsync', 'always', '--save', '',
    '--daemonize', 'no', '--logfile', '',
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const add = (c: Buffer): void => { out = (out + c.toString()).slice(-LOG_CHARS_MAX); };
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`redis-server did not start in ${START_MS_MAX} ms:\n${out}`)); }, START_MS_MAX);
    proc.once('error', (err) => { clearTimeout(timer); reject(err); });
    proc.once('exit', (code, sig) => { clearTimeout(timer); reject(new Error(`redis-server exited (${code ?? sig}) before it was ready:\n${out}`)); });
    proc.stdout!.on('data', (c: Buffer) => {
      add(c);
      if (/Ready to accept connections/.test(out)) { clearTimeout(timer); resolve(); }
    });
    proc.stderr!.on('data', add);
  });
  return { proc, exited, log: () => out };
}

/** Throws when there is no redis-server to start (checked before anything is measured for it). */
export function checkRedisBinary(): void {
  if (!existsSync(REDIS_SERVER_BIN)) throw new Error(`${REDIS_SERVER_BIN} not found (set BENCH_REDIS_SERVER)`);
}

export async function startRedis(): Promise<RedisServer> {
  checkRedisBinary();
  const dir = tempDir('svcd-bench-redis-');
  let started: { proc: ChildProcess; exited: Promise<void>; log: () => string } | undefined;
  let port = 0;
  try {
    for (let attempt = 1; !started; attempt++) {
      port = await freePort();
      try {
        started = await spawnRedis(port, dir);
      } catch (err) {
        if (attempt >= PORT_ATTEMPTS || !/Address already in use/i.test((err as Error).message)) throw err;
      }
    }
  } catch (err) {
    removeDir(dir);
    throw err;
  }
  const { proc, exited } = started;
  const killSync = (): void => { if (running(proc)) proc.kill('SIGKILL'); removeDir(dir); };
  const stop = async (): Promise<void> => {
    if (running(proc)) {
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), STOP_MS_MAX);
      await exited;
      clearTimeout(t);
    }
    removeDir(dir);
  };
  try {
    // Check that the options took: a Redis that silently ran with `everysec` would make the peer
    // look twice as fast as the durable one it stands for.
    const conn = await RespConn.open(HOST, port);
    // A check that hangs closes the connection, which fails the call waiting on it.
    const guard = setTimeout(() => conn.close(), CHECK_MS_MAX);
    try {
      const cfgValue = async (name: string): Promise<string> => {
        const r = await conn.call('CONFIG', 'GET', name);
        return Array.isArray(r) && typeof r[1] === 'string' ? r[1] : String(r);
      };
      const appendonly = await cfgValue('appendonly');
      const appendfsync = await cfgValue('appendfsync');
      if (appendonly !== 'yes' || appendfsync !== 'always') throw new Error(`redis-server runs with appendonly ${appendonly}, appendfsync ${appendfsync}`);
      const info = await conn.call('INFO', 'server');
      const version = typeof info === 'string' ? /redis_version:(\S+)/.exec(info)?.[1] ?? '?' : '?';
      return { host: HOST, port, pid: proc.pid, dir, version, appendonly, appendfsync, stop, killSync };
    } finally {
      clearTimeout(guard);
      conn.close();
    }
  } catch (err) {
    await stop();
    throw err;
  }
}
