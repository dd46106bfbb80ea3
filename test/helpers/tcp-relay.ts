// A TCP relay in the test's process between stars and a dependency (s3rver), to cut it as a network
// does: `refuse` closes the listener and resets every connection it holds (new connects are refused,
// ECONNREFUSED), `drop` keeps every connection open and silent and accepts new ones it never answers
// (a black hole; the silenced ones stay silent after the cut, as a peer that vanished). restore()
// lets new connections through again.
import { createServer, connect, type Server, type Socket } from 'node:net';

interface Pair { client: Socket; upstream: Socket | undefined; silent: boolean }

export class TcpRelay {
  private server: Server | undefined;
  private readonly pairs = new Set<Pair>();
  private cutMode: 'refuse' | 'drop' | undefined;
  port = 0;

  constructor(private readonly targetPort: number, private readonly targetHost = '127.0.0.1') {}

  /** Listens on `port` (0: any free one; restore() listens on the same one again). */
  async start(port = 0): Promise<void> {
    this.server = createServer((client) => {
      const pair: Pair = { client, upstream: undefined, silent: this.cutMode === 'drop' };
      this.pairs.add(pair);
      client.on('error', () => undefined);
      client.on('close', () => { pair.upstream?.destroy(); this.pairs.delete(pair); });
      if (pair.silent) return;
      const upstream = connect(this.targetPort, this.targetHost);
      pair.upstream = upstream;
      upstream.on('error', () => undefined);
      upstream.on('close', () => { if (!pair.silent) client.destroy(); });
      client.on('data', (d) => { if (!pair.silent) upstream.write(d); });
      upstream.on('data', (d) => { if (!pair.silent) client.write(d); });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    const a = this.server.address();
    this.port = typeof a === 'object' && a ? a.port : 0;
  }

  async cut(mode: 'refuse' | 'drop'): Promise<void> {
    this.cutMode = mode;
    if (mode === 'drop') {
      for (const p of this.pairs) p.silent = true;
      return;
    }
    const closing = new Promise<void>((resolve) => this.server!.close(() => resolve()));
    for (const p of this.pairs) { p.client.resetAndDestroy(); p.upstream?.destroy(); }
    this.pairs.clear();
    await closing;
  }

  async restore(): Promise<void> {
    const was = this.cutMode;
    this.cutMode = undefined;
    if (was === 'refuse') await this.start(this.port);
  }

  close(): void {
    for (const p of this.pairs) { p.client.destroy(); p.upstream?.destroy(); }
    this.pairs.clear();
    this.server?.close();
  }
}
