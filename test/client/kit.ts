// Shared pieces of the client and CLI tests: a real star that can be SIGKILLed, frozen (SIGSTOP) and
// restarted on the same data dir behind the same URL (a forwarder), unique
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

const FORWARD_PORT_MIN = 20_000;
const FORWARD_PORT_END = 32_000;
const FORWARD_LISTEN_ATTEMPTS_MAX = 50;

/** A TCP forwarder on a fixed loopback port in front of the star's data bridge, so a client's URL
 *  survives a restart: uWebSockets.js listens without SO_REUSEADDR, so a killed star's port stays
 *  taken (TIME_WAIT) and a new star cannot bind it at once. While no star runs the forwarder does not
 *  listen either, so a client sees a refused connection, as it would without it; a killed star's
 *  connections are cut (their client side destroyed), as they would be. Real sockets, no mock. */
export class Forwarder {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  async listen(upstreamPort: number): Promise<void> {
    const server = net.createServer((client) => {
      const up = net.connect(upstreamPort, '127.0.0.1');
      for (const s of [client, up]) {
        this.sockets.add(s);
        s.on('error', () => {});
        s.on('close', () => { this.sockets.delete(s); client.destroy(); up.destroy(); });
      }
      client.pipe(up);
      up.pipe(client);
    });
    // The port is chosen below the kernel's ephemeral range (32768-60999 here), so no outgoing
    // connection can be holding it as its local port when the forwarder listens there again.
    for (let attempt = 1; ; attempt++) {
      const port = this.port || FORWARD_PORT_MIN + Math.floor(Math.random() * (FORWARD_PORT_END - FORWARD_PORT_MIN));
      try {
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(port, '127.0.0.1', () => { server.off('error', reject); resolve(); });
        });
        this.port = port;
        this.server = server;
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= FORWARD_LISTEN_ATTEMPTS_MAX) throw err;
        if (this.port) await new Promise((r) => setTimeout(r, 100)); // our own port: wait for it
      }
    }
  }

  /** Stops listening and cuts every forwarded connection. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** A star whose client-facing address and data dir survive a SIGKILL and restart. */
export class Star {
  server!: RunningServer;
  readonly forwarder = new Forwarder();
  readonly dataDir = tempDir('svc-client-');
  grpcAddress: string | undefined;
  private grpcPort: number | undefined;

  private constructor(private readonly opts: { args: string[]; env: Record<string, string>; grpc: boolean }) {}

  static async start(opts: { args?: string[]; env?: Record<string, string>; grpc?: boolean } = {}): Promise<Star> {
    const s = new Star({ args: opts.args ?? [], env: opts.env ?? {}, grpc: opts.grpc ?? false });
    await s.boot();
    return s;
  }

  /** The data bridge, through the forwarder (stable across restarts). */
  get url(): string {
    return `http://127.0.0.1:${this.forwarder.port}`;
  }

  get pid(): number {
    return this.server.proc.pid!;
  }

  private async boot(): Promise<void> {
    const args = ['--lease-idle-ms', '0', ...this.opts.args];
    if (this.opts.grpc) args.push('--grpc-listen', `127.0.0.1:${this.grpcPort ?? 0}`);
    const o: StartOptions = { dataDir: this.dataDir, args, env: this.opts.env };
    this.server = await startServer(o);
    await this.forwarder.listen(this.server.port);
    if (this.opts.grpc) {
      const m = await waitForOutput(this.server, /grpc listening on ([\d.]+):(\d+)/);
      this.grpcPort = Number(m[2]);
      this.grpcAddress = `${m[1]}:${m[2]}`;
    }
  }

  /** SIGKILL, then a new star on the same data dir (and the same gRPC port), behind the same URL. */
  async killAndRestart(): Promise<void> {
    await this.kill();
    await this.restart();
  }

  async kill(): Promise<void> {
    await this.server.kill();
    await this.forwarder.close();
  }

  /** SIGTERM: the star shuts down cleanly (event streams simply end). */
  async stopGracefully(): Promise<void> {
    await this.server.stop();
    await this.forwarder.close();
  }

  async restart(): Promise<void> {
    await this.boot();
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
    await this.forwarder.close();
    removeDir(this.dataDir);
  }
}

export const text = (b: Uint8Array): string => Buffer.from(b).toString('utf8');
