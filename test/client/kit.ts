// Shared pieces of the client and CLI tests: a real star that can be SIGKILLed, frozen (SIGSTOP) and
// restarted on the same port and data dir (so a client's URL stays valid across the restart), unique
// names, and a bounded wait for a condition (a wait with a deadline, never an assertion on time).
import net from 'node:net';
import { removeDir, startServer, tempDir, waitForOutput, type RunningServer, type StartOptions } from '../helpers/server.ts';

/** Longest a test waits for a condition before it fails with the condition's description. */
export const WAIT_MS_MAX = 60_000;
/** Poll period of `waitFor`. */
const WAIT_POLL_MS = 20;

let counter = 0;
/** A bucket name or key unique within this run. */
export function uniq(prefix = 't'): string {
  counter += 1;
  return `${prefix}-${process.pid.toString(36)}-${counter}-${Math.random().toString(36).slice(2, 7)}`;
}

export async function waitFor(what: string, cond: () => boolean | Promise<boolean>, maxMs = WAIT_MS_MAX): Promise<void> {
  const deadline = Date.now() + maxMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, WAIT_POLL_MS));
  }
}

/** A star whose port and data dir survive a SIGKILL and restart. */
export class Star {
  server!: RunningServer;
  readonly dataDir = tempDir('svc-client-');
  grpcAddress: string | undefined;
  private grpcPort: number | undefined;

  private constructor(private readonly opts: { args: string[]; env: Record<string, string>; grpc: boolean }) {}

  static async start(opts: { args?: string[]; env?: Record<string, string>; grpc?: boolean } = {}): Promise<Star> {
    const s = new Star({ args: opts.args ?? [], env: opts.env ?? {}, grpc: opts.grpc ?? false });
    await s.boot(0);
    return s;
  }

  get url(): string {
    return this.server.baseUrl;
  }

  get pid(): number {
    return this.server.proc.pid!;
  }

  private async boot(port: number): Promise<void> {
    const args = ['--lease-idle-ms', '0', ...this.opts.args];
    if (port !== 0) args.push('--listen', `127.0.0.1:${port}`);
    if (this.opts.grpc) args.push('--grpc-listen', `127.0.0.1:${this.grpcPort ?? 0}`);
    const o: StartOptions = { dataDir: this.dataDir, args, env: this.opts.env };
    this.server = await startServer(o);
    if (this.opts.grpc) {
      const m = await waitForOutput(this.server, /grpc listening on ([\d.]+):(\d+)/);
      this.grpcPort = Number(m[2]);
      this.grpcAddress = `${m[1]}:${m[2]}`;
    }
  }

  /** SIGKILL, then a new star on the same port and data dir. */
  async killAndRestart(): Promise<void> {
    const port = this.server.port;
    await this.server.kill();
    await this.boot(port);
  }

  async kill(): Promise<void> {
    await this.server.kill();
  }

  async restart(): Promise<void> {
    await this.boot(this.server.port);
  }

  /** Freezes the star: connections stay open, nothing is answered. */
  freeze(): void {
    process.kill(this.pid, 'SIGSTOP');
  }

  thaw(): void {
    process.kill(this.pid, 'SIGCONT');
  }

  async stop(): Promise<void> {
    try { this.thaw(); } catch { /* already gone */ }
    await this.server.stop();
    removeDir(this.dataDir);
  }
}

export const text = (b: Uint8Array): string => Buffer.from(b).toString('utf8');

/** A loopback port nothing listens on (a listener's, closed again). */
export async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

